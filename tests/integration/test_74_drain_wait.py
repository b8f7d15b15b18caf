"""lbagentctl drain on --wait: the command returns once every load balancer
shows this node out of its traffic with nothing left on it. One real
HAProxy (tcp frontend -> backend be, server n1) in front of a threaded
HTTP server whose /slow5 and /slow8 answer after 5 s and 8 s; one lbagent
(node n1) that reads HAProxy's Runtime API socket through [haproxy]
sources, and its HTTP API on a unix socket (the detail without a token).

a. a request in flight (started before the drain) keeps `drain on --wait
   --timeout 60s` waiting: it exits 0 only after the request finished,
   with 200, and says it drained;
b. a request longer than the timeout (`--timeout 2s`, /slow8): exit 4,
   and what is left names the load balancer and its 1 session; the
   request still completes (a drain lets it finish);
c. an lbagent without [haproxy]: `drain on --wait` refuses, naming
   `[haproxy] sources` and `backend`, and writes no marker; one reached
   over TCP without a token (no detail) refuses too; `drain off --wait`
   is a usage error;
d. a load balancer that does not answer (its socket is not there): exit 4
   at the timeout, reported as not answering, never counted as drained.
b also checks that `lbagentctl status` shows the session in flight.

n1 is the only server of be: `drain on` and `maint on` are refused without
--force (exit 1, naming backend be and the load balancer, no marker
written; issue 32); a and b drain with --force, which says so on stderr,
and the reply's reason says no other node serves."""

import os
import socket
import sys
import threading

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

PEER_INTERVAL_MS = 200
NODE = "n1"
EXIT_NOT_DRAINED = 4
# HAProxy applying the drain, lbagent's next round reading it, lbagentctl's
# next poll: each a fraction of a second; a wide margin over the sum.
SEEN_S = h.marker_bound_s() + 4 * PEER_INTERVAL_MS / 1000.0 + 5.0


class Request:
    """One GET through HAProxy, in a thread; raw HTTP/1.0, read to the end
    (the server closes), finished marked before the socket is closed, so
    that HAProxy cannot count the session gone before it is marked."""

    def __init__(self, port, path):
        self.port = port
        self.path = path
        self.finished = threading.Event()
        self.answer = b""
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        try:
            s.sendall(f"GET {self.path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
            chunks = []
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
            self.answer = b"".join(chunks)
        except OSError as e:
            self.error = e
        finally:
            self.finished.set()
            s.close()

    def status_line(self):
        return self.answer.split(b"\r\n", 1)[0].decode(errors="replace")

    def join(self, timeout_s):
        self.thread.join(timeout_s)
        h.expect(not self.thread.is_alive(), f"{self.path} did not finish "
                 f"within {timeout_s} s")


def detail(api):
    status, doc = h.http_json(api, "/status?fresh=1")
    h.expect_equal(status, 200, "detail /status over the unix socket")
    return doc


def my_row(doc):
    lbs = doc.get("haproxy") or []
    if len(lbs) != 1 or not lbs[0].get("this_node"):
        return None
    return lbs[0]["this_node"][0]


def wait_row(api, ok, what, timeout_s):
    return h.wait_until(lambda: my_row(detail(api)), timeout_s, what,
                        ok=lambda r: r is not None and ok(r))


def ctl(lb, *args, timeout_s=120):
    return h.lbagentctl("-f", lb.config_path, *args, timeout_s=timeout_s)


def main():
    h.require_haproxy()
    e = h.env()
    app = h.HttpStub(name="app")
    app.set("/", 200, "ok\n")
    app.set("/slow5", 200, "done\n", delay_s=5)
    app.set("/slow8", 200, "done\n", delay_s=8)
    agent_port = e.free_port()
    fe_port = e.free_port()
    source = e.source()
    server = h.Server(NODE, agent_port, addr=f"127.0.0.1:{app.port}")
    cfg = "\n".join([
        "global",
        "    stats socket {socket} level admin",
        "",
        "defaults",
        "    mode tcp",
        "    timeout connect 1s",
        "    timeout client 60s",
        "    timeout server 60s",
        f"    timeout check {h.CHECK_TIMEOUT_S:g}s",
        "",
        "frontend fe",
        f"    bind 127.0.0.1:{fe_port}",
        "    default_backend be",
        "",
        "backend be",
        f"    server {NODE} 127.0.0.1:{app.port} weight 100 check inter "
        f"{h.CHECK_INTER_MS} agent-check agent-addr 127.0.0.1 agent-port "
        f"{agent_port} agent-inter {h.AGENT_INTER_MS} source {source}",
        ""])
    hap = h.Haproxy(backends={"be": [server]}, config_text=cfg, source=source,
                    start=False)
    api_sock = os.path.join(e.dir, "api.sock")
    lb = h.Lbagent({"agent": {"node_id": NODE},
                    "http": {"listen": f"unix:{api_sock}"},
                    "peers": {"interval": f"{PEER_INTERVAL_MS}ms"},
                    "haproxy": {"sources": f"unix:{hap.socket_path}",
                                "backend": "be", "server": NODE}},
                    port=agent_port)
    api = f"unix:{api_sock}"
    hap.start()
    hap.wait_status("be", NODE, "UP", h.startup_bound_s(), f"{NODE} UP at start")
    wait_row(api, lambda r: r.get("found") and r.get("status") == "UP" and
             r.get("sessions") == 0, "lbagent reads HAProxy: n1 UP, 0 sessions",
             h.startup_bound_s() + SEEN_S)

    h.section("the last node serving be: refused without --force")
    for verb in ("drain", "maint"):
        rc, out, err = ctl(lb, verb, "on", "--reason", "deploy")
        h.expect_equal(rc, 1, f"{verb} on of the last node (stdout {out!r}, stderr {err!r})")
        h.expect(f"this node is the last one serving backend be on unix:{hap.socket_path}"
                 in err and "--force" in err, f"{verb} on: why, with backend and LB: {err!r}")
        h.expect(not os.path.exists(lb.marker_path(verb)), f"no {verb} marker written")

    h.section("a. a request in flight keeps --wait waiting until it is done")
    req = Request(fe_port, "/slow5")
    wait_row(api, lambda r: r.get("sessions") == 1, "the slow request as 1 "
             "session of n1", SEEN_S)
    rc, out, err = ctl(lb, "drain", "on", "--wait", "--timeout", "60s", "--force")
    finished_first = req.finished.is_set()
    h.expect(f"--force: this node is the last one serving backend be on "
             f"unix:{hap.socket_path}" in err, f"--force says so: {err!r}")
    h.expect("(no other node serving)" in out, f"the reply's reason says so: {out!r}")
    h.expect_equal(rc, 0, f"drain on --wait exit status (stdout {out!r}, stderr {err!r})")
    h.expect(finished_first, "drain on --wait returned while the request was "
             f"still in flight: {out!r}")
    req.join(30)
    h.expect(req.error is None, f"the request failed: {req.error}")
    h.expect_equal(req.status_line(), "HTTP/1.0 200 OK", "the drained request's answer")
    h.expect(req.answer.endswith(b"done\n"), f"its body: {req.answer[-40:]!r}")
    h.expect("drained: 1 load balancer shows no session and no queue left" in out,
             f"the result line in {out!r}")
    st = hap.stat("be", NODE)
    h.expect(st["status"].startswith("DRAIN"), f"HAProxy after the wait: {h.describe_stat(st)}")

    rc, out, err = ctl(lb, "drain", "off")
    h.expect_equal(rc, 0, f"drain off (stderr {err!r})")
    hap.wait_status("be", NODE, "UP", h.marker_bound_s(), f"{NODE} UP after drain off")

    h.section("b. a request longer than --timeout: exit 4, what is left")
    req = Request(fe_port, "/slow8")
    wait_row(api, lambda r: r.get("status") == "UP" and r.get("sessions") == 1,
             "the slower request as 1 session of n1, UP", SEEN_S)
    # status shows what is in flight, so a drain that never empties shows.
    rc, out, err = ctl(lb, "status")
    h.expect_equal(rc, 0, f"status exit status (stderr {err!r})")
    h.expect("      sessions 1, queued 0; other servers serving: 0\n" in out,
             f"status shows the session in flight:\n{out}")
    rc, out, err = ctl(lb, "drain", "on", "--wait", "--timeout", "2s", "--force")
    h.expect_equal(rc, EXIT_NOT_DRAINED, f"drain on --wait --timeout 2s exit status "
                   f"(stdout {out!r}, stderr {err!r})")
    h.expect("not drained within 2s" in err, f"the timeout in {err!r}")
    left = [ln for ln in err.splitlines() if ln.startswith(f"  unix:{hap.socket_path}: ")]
    h.expect(len(left) == 1 and "1 session," in left[0],
             f"what is left names the load balancer and 1 session: {err!r}")
    h.expect(not req.finished.is_set(), "the 8 s request was already done at the "
             "timeout: the case tests nothing")
    req.join(30)
    h.expect_equal(req.status_line(), "HTTP/1.0 200 OK", "the request outlives the timeout")
    h.expect(os.path.exists(lb.marker_path("drain")), "the drain marker stays after "
             "the timeout")
    rc, out, err = ctl(lb, "drain", "off")
    h.expect_equal(rc, 0, f"drain off (stderr {err!r})")

    h.section("c. no load balancer to ask, or no detail: refused, no marker")
    plain = h.Lbagent({"agent": {"node_id": NODE},
                       "http": {"listen": f"unix:{os.path.join(e.dir, 'plain.sock')}"}},
                      name="plain")
    rc, out, err = ctl(plain, "drain", "on", "--wait")
    h.expect_equal(rc, 1, f"drain on --wait without [haproxy] (stderr {err!r})")
    h.expect("[haproxy] sources" in err and "backend" in err and
             plain.config_path in err, f"the refusal names the keys: {err!r}")
    h.expect(not os.path.exists(plain.marker_path("drain")),
             "a refused --wait wrote the marker")
    h.expect(out == "", f"nothing on stdout: {out!r}")

    # Over TCP without a token: the public part only, no load balancers.
    tcp_port = e.free_port()
    public = h.Lbagent({"agent": {"node_id": NODE},
                        "http": {"listen": f"127.0.0.1:{tcp_port}"},
                        "peers": {"interval": f"{PEER_INTERVAL_MS}ms"},
                        "haproxy": {"sources": f"unix:{hap.socket_path}",
                                    "backend": "be", "server": NODE}},
                       name="public")
    rc, out, err = ctl(public, "drain", "on", "--wait")
    h.expect_equal(rc, 1, f"drain on --wait without the detail (stderr {err!r})")
    h.expect("detailed status" in err and "token_file" in err,
             f"the refusal says why: {err!r}")
    h.expect(not os.path.exists(public.marker_path("drain")),
             "a refused --wait wrote the marker")

    h.section("d. a load balancer that does not answer is never drained")
    gone = h.Lbagent({"agent": {"node_id": NODE},
                      "http": {"listen": f"unix:{os.path.join(e.dir, 'gone.sock')}"},
                      "peers": {"interval": f"{PEER_INTERVAL_MS}ms"},
                      "haproxy": {"sources": f"unix:{os.path.join(e.dir, 'no-haproxy.sock')}",
                                  "backend": "be", "server": NODE}},
                     name="gone")
    rc, out, err = ctl(gone, "drain", "on", "--wait", "--timeout", "2s")
    h.expect_equal(rc, EXIT_NOT_DRAINED, f"drain on --wait with a silent load balancer "
                   f"(stdout {out!r}, stderr {err!r})")
    h.expect(f"  unix:{os.path.join(e.dir, 'no-haproxy.sock')}: not answering: " in err,
             f"the silent load balancer reported: {err!r}")

    rc, out, err = ctl(lb, "drain", "off", "--wait")
    h.expect_equal(rc, 2, f"drain off --wait is a usage error (stderr {err!r})")
    h.expect("--wait goes with 'on'" in err, f"the usage error: {err!r}")
    # Nothing of the above left a marker on the node.
    h.expect(not os.path.exists(lb.marker_path("drain")), "drain marker left over")


if __name__ == "__main__":
    h.run(main)
