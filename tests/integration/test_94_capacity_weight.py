"""Capacity weights and adaptive maxconn end to end (issue 31), with a
real HAProxy: it checks the node (backend `be`, server s1, agent-send
"web") and carries traffic through a frontend to it at a steady rate;
lbagent reads this server's stot and rtime on HAProxy's TCP Runtime API
([haproxy] sources), and the utilization from an application's load
report (an http probe's json_field, measure-only).

1. lbagent -c explains a wrong combination at its line (capacity keys
   without weight_from = capacity, capacity_rate = haproxy without a
   source);
2. with a utilization of 0.5 and capacity_reference well over twice the
   rate (no [peers] agents), the reply carries a weight under 100%, the
   one the detail's capacity factor says (state active, an estimate),
   HAProxy applies it, and it carries maxconn:N, which HAProxy takes as
   the server's limit (slim); the public /status publishes the estimate;
   lbagentctl status and why, and /metrics, show them;
3. the report goes away (the probe fails: no utilization): within the
   expiry the state is stale, the estimate is no longer published, and
   the reply falls back to the health weight (100%), in HAProxy too;
4. a reload that changes nothing of the capacity keys keeps the estimate;
   one that changes one starts over (a blackout, the health weight)."""

import os
import re
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

PROBE_MS = 300
ROUND_MS = 300
EXPIRY_MS = 2000
RATE_PER_S = 40


class Traffic:
    """Connections through HAProxy's frontend at about RATE_PER_S a
    second: each one a session of s1 (stot)."""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        gap = 1.0 / RATE_PER_S
        while not self.stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), 1.0) as s:
                    s.settimeout(1.0)
                    try:
                        s.recv(1)
                    except OSError:
                        pass
            except OSError:
                pass
            self.stop.wait(gap)

    def close(self):
        self.stop.set()
        self.t.join(5)


def check_errors():
    h.section("lbagent -c: each wrong combination at its line")
    rc, out, _ = h.check_config(h.ini_text({
        "agent": {"listen": "127.0.0.1:1", "state_dir": "/tmp", "no_probes": "yes"},
        "probe p": {"type": "file", "path": "/"},
        "service web": {"probes": "p", "capacity_half_life": "1s",
                        "maxconn_min": "3"},
        "service api": {"probes": "p", "weight_from": "capacity",
                        "capacity_rate": "haproxy", "capacity_utilization": "p",
                        "capacity_reference": "10"},
    }), name="check-capacity")
    h.expect(rc != 0, f"lbagent -c refused it: {out!r}")
    for want in (r":\d+: capacity_half_life: only with weight_from = capacity",
                 r":\d+: maxconn_min: only with maxconn = adaptive",
                 r":\d+: capacity_rate = haproxy: no \[haproxy\] sources",
                 r":\d+: capacity_utilization: \[probe p\] \(type = file\) gives no "
                 r"value that is the utilization"):
        h.expect(re.search(want, out), f"lbagent -c says {want!r}:\n{out}")


def main():
    h.require_kinds("http", "file")
    check_errors()
    app = h.HttpStub()
    app.set_json("/load", {"utilization": 0.5})
    d = h.tmpdir()
    sock = os.path.join(d, "api.sock")
    fe_port = h.free_port()
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "no_probes": "yes", **h.IMMEDIATE},
        "http": {"listen": f"unix:{sock}"},
        "peers": {"interval": f"{ROUND_MS}ms", "steady_interval": f"{ROUND_MS}ms",
                  "timeout": "2s"},
        "haproxy": {"backend": "be", "server": "s1"},
        "probe p": {"type": "file", "path": "/", "interval": "200ms",
                    "timeout": "150ms"},
        "probe load": {"type": "http", "url": app.url("/load"),
                       "json_field": "utilization", "interval": f"{PROBE_MS}ms",
                       "timeout": "250ms"},
        "service web": {"probes": "p", "backend": "be",
                        "weight_from": "capacity", "capacity_rate": "haproxy",
                        "capacity_utilization": "load",
                        # The estimate is about 2 x RATE_PER_S: 80 to 100 req/s.
                        "capacity_reference": str(3 * RATE_PER_S),
                        "capacity_blackout": "1s", "capacity_half_life": "1s",
                        "capacity_expiry": f"{EXPIRY_MS}ms",
                        "maxconn": "adaptive", "maxconn_latency": "haproxy"},
    }, start=False)
    hap = h.Haproxy(backends={"be": [h.Server("s1", lb)]}, agent_send="web",
                    stats_tcp=True, start=False)
    hap.config_text += "\n".join([
        "", "frontend fe", f"    bind 127.0.0.1:{fe_port}", "    default_backend be", ""])
    with open(hap.config_path, "w") as f:
        f.write(hap.config_text)
    # The source is known once HAProxy has its port.
    lb.config_text = lb.config_text.replace(
        "[haproxy]\n", f"[haproxy]\nsources = tcp:{hap.stats_tcp_address()}\n")
    with open(lb.config_path, "w") as f:
        f.write(lb.config_text)
    rc, out, _ = h.check_config(lb.config_text)
    h.expect_equal(rc, 0, f"lbagent -c: {out!r}")
    lb.start()
    hap.start()
    h.wait_all_status([hap], "UP", h.startup_bound_s(), "s1 UP")
    traffic = Traffic(fe_port)
    try:
        run(lb, hap, app, sock)
    finally:
        traffic.close()


def detail(sock):
    doc = h.http_json("unix:" + sock, "/status?fresh=1")[1]
    return next(s for s in doc["services"] if s["name"] == "web")


def weight_of(reply):
    m = re.search(rb"\b(\d+)%", reply)
    return int(m.group(1)) if m else 100


def run(lb, hap, app, sock):
    bound = h.startup_bound_s() + 20

    h.section("an estimate: the reply's weight is its factor, with maxconn:N")
    reply = h.wait_reply(lb, lambda r: weight_of(r) < 100 and b"maxconn:" in r,
                         "a capacity weight under 100% and maxconn:N",
                         send=b"web\n", timeout_s=bound)
    svc = h.wait_until(lambda: detail(sock), bound, "the factor the reply carries",
                       ok=lambda s: s["capacity_weight"]["state"] == "active" and
                       f" {s['capacity_weight']['factor_pct']}% " in s["reply"])
    cw = svc["capacity_weight"]
    h.expect(cw["estimate"] and cw["estimate"] > 0, f"an estimate: {cw}")
    h.expect(0.4 < (cw["utilization"] or 0) < 0.6, f"the utilization 0.5: {cw}")
    h.expect(cw["factor_pct"] < 100, f"a factor under 100%: {cw}")
    mc = svc["maxconn"]
    h.expect(mc["learned"] and mc["per_lb"] and mc["per_lb"] > 0, f"a limit: {mc}")
    h.expect(f"maxconn:{mc['per_lb']}" in svc["reply"] or b"maxconn:" in reply,
             f"the reply carries the limit: {svc['reply']!r} {mc}")
    pub = detail(sock)["capacity"]
    h.expect(pub and pub["estimate"] > 0 and pub["age_ms"] >= 0,
             f"the public /status publishes the estimate: {pub}")

    h.section("lbagentctl status and why, /metrics: the factor, its inputs, the limit")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "status", "web")
    h.expect(rc == 0 and re.search(r"capacity +capacity \d+%: [\d.]+ req/s at 0\.5\d", out)
             and re.search(r"maxconn +maxconn \d+", out),
             f"status shows the capacity and maxconn lines: {rc} {out!r} {err!r}")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "why", "web")
    h.expect(rc == 0 and "capacity " in out and "maxconn " in out,
             f"why shows them: {rc} {out!r} {err!r}")
    body = h.http_request(f"unix:{sock}", "/metrics")[2].decode()
    for name in ("lbagent_capacity_factor_percent", "lbagent_capacity_estimate",
                 "lbagent_capacity_utilization", "lbagent_maxconn"):
        h.expect(re.search(r'^%s\{service="web"\} [\d.]+$' % name, body, re.M),
                 f"/metrics has {name} for web")

    h.section("HAProxy applies the weight and the limit")
    st = h.wait_until(lambda: hap.stat("be", "s1"), h.agent_checks_bound_s(3),
                      "HAProxy's weight under 100 and a server limit",
                      ok=lambda r: int(r["weight"]) < 100 and r.get("slim", "") not in ("", "0"))
    h.expect(int(st["slim"]) >= 1, f"slim from maxconn:N: {st['slim']}")

    h.section("a reload that changes nothing of it keeps the estimate")
    reload(lb)
    cw = detail(sock)["capacity_weight"]
    h.expect(cw["state"] == "active" and cw["estimate"],
             f"still active with its estimate after the reload: {cw}")

    h.section("the report goes away: stale within the expiry, the health weight")
    app.set("/load", status=503, body=b"gone")
    h.wait_until(lambda: detail(sock)["capacity_weight"], EXPIRY_MS / 1000 + bound / 4,
                 "capacity stale", ok=lambda c: c["state"] == "stale")
    h.expect(detail(sock)["capacity"] is None, "no estimate published while stale")
    h.wait_reply(lb, lambda r: weight_of(r) == 100, "the health weight, 100%",
                 send=b"web\n", timeout_s=h.agent_checks_bound_s(2))
    h.wait_until(lambda: hap.stat("be", "s1"), h.agent_checks_bound_s(3),
                 "HAProxy's weight back to 100", ok=lambda r: int(r["weight"]) == 100)


    h.section("a reload that changes a capacity key starts it over: a blackout")
    with open(lb.config_path) as f:
        text = f.read()
    with open(lb.config_path, "w") as f:
        f.write(text.replace("capacity_blackout = 1s", "capacity_blackout = 1h"))
    reload(lb)
    cw = detail(sock)["capacity_weight"]
    h.expect(cw["state"] == "blackout" and cw["estimate"] is None and
             "started or reloaded" in cw["reason"], f"a blackout after the reload: {cw}")
    h.expect_equal(weight_of(lb.ask(send=b"web\n")), 100, "the health weight")


def reload(lb):
    mark = lb.log_mark()
    os.kill(lb.pid, 1)
    h.wait_until(lambda: lb.log_since(mark), 10, "the reload in the log",
                 ok=lambda t: "reload: " in t and "service(s) kept" in t)


if __name__ == "__main__":
    h.run(main)
