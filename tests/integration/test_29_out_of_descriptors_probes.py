"""lbagent itself out of descriptors: its probes cannot run, and that says
nothing about the service.

An exec probe (a script that prints "fine") and a tcp probe (to a
listening stand-in) pass, every 200 ms, with down_after 1s and up_after
60s. The daemon's RLIMIT_NOFILE is then cut to 0, so that neither pipe()
nor socket() can get a descriptor, for four times down_after. lbagent
cannot accept a connection then, so it is watched through what needs no
new descriptor: its log, and HTTP requests on connections it accepted
before the cut, each sent but for its last line (the API answers one
request per connection, within 5 s of accepting it):

- each probe's last run is `unknown` with lbagent's reason (`pipe: Too
  many open files (lbagent out of descriptors)`, `socket: ...`), it still
  counts as ok and settled (/status), and /metrics shows the last result
  as 3 and the unknown runs;
- the log says so at warning level, once per probe (rate-limited), and
  for four times down_after says nothing else of the probes or the reply:
  no probe turned crit, the reply never changed;
- afterwards /status counts the unknown runs apart, and no crit run.

With the limit restored the probes run ok again and the reply is `up` (had
the node gone down, up_after would hold it down for a minute)."""

import json
import os
import resource
import socket
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 200
TIMEOUT_MS = 150
DOWN_AFTER_S = 1.0
HOLD_S = 4 * DOWN_AFTER_S
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS) + 2.0
PROBES = ("run", "port")


class Primed:
    """A request to the API's unix socket sent but for its last line, on a
    connection accepted now: finished later, it needs no new descriptor."""

    def __init__(self, path, target):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(path)
        self.sock.sendall(f"GET {target} HTTP/1.1\r\nHost: lbagent\r\n".encode())

    def finish(self):
        """(status code, body)."""
        self.sock.sendall(b"\r\n")
        data = b""
        while True:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            data += chunk
        self.sock.close()
        head, _, body = data.partition(b"\r\n\r\n")
        return int(head.split(b" ", 2)[1]), body


def api_connections(pid, path):
    """How many connections pid holds that it accepted on the unix socket
    at path: connected (state 03 in /proc/net/unix) and bound to that path,
    as accepted sockets are; not the listener itself."""
    with open("/proc/net/unix") as f:
        inodes = set()
        for line in list(f)[1:]:
            cols = line.split()
            if len(cols) >= 8 and cols[5] == "03" and cols[7] == path:
                inodes.add(cols[6])
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            n += 1
    return n


def status(sock):
    code, doc = h.http_json("unix:" + sock, "/status")
    h.expect_equal(code, 200, "/status")
    return doc


def probes(doc):
    return {p["name"]: p for p in doc["services"][0]["probes"]}


def brief(doc):
    s = doc["services"][0]
    return repr({"state": s["state"], "reply": s["reply"], "target": s["target"],
                 "probes": {n: (p["counted"], p["settled"], p["last"])
                            for n, p in probes(doc).items()}})


def metric(text, name, probe):
    for line in text.splitlines():
        if line.startswith(f'{name}{{probe="{probe}"') and "result=" not in line:
            return float(line.rsplit(" ", 1)[1])
        if line.startswith(f'{name}{{probe="{probe}",service="default",result="unknown"}}'):
            return float(line.rsplit(" ", 1)[1])
    raise h.TestFailure(f"no {name} for probe {probe} in the metrics:\n{text}")


def main():
    h.require_kinds("exec", "tcp")
    d = h.tmpdir()
    script = h.write_script(os.path.join(d, "check"), 'echo "fine"\nexit 0\n')
    sock = os.path.join(d, "http.sock")
    backend = h.backend_stub()
    every = {"interval": f"{INTERVAL_MS}ms", "timeout": f"{TIMEOUT_MS}ms"}
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "down_after": "1s", "up_after": "60s",
                  "ramp": "0", "degrade_after": "0", "restore_after": "0"},
        "http": {"listen": f"unix:{sock}"},
        "probe run": dict(every, type="exec", command=script),
        "probe port": dict(every, type="tcp", address=f"127.0.0.1:{backend.port}"),
    })
    h.wait_until(lambda: probes(status(sock)), BOUND_S, "both probes settled and ok",
                 ok=lambda ps: all(ps[n]["settled"] and ps[n]["last"] is not None and
                                   ps[n]["last"]["result"] == "ok" for n in PROBES))
    h.expect_equal(lb.ask(), b"up\n", "the reply before the cut")
    before = probes(status(sock))

    h.section(f"RLIMIT_NOFILE cut to 0 for {HOLD_S:.0f} s: probes unknown, node up")
    # The /status requests above are answered, but lbagent closes each one
    # only once it read the client's EOF: none of them may still be open
    # when the primed ones are counted.
    h.wait_until(lambda: api_connections(lb.pid, sock), 5,
                 "lbagent to close the API connections it answered",
                 ok=lambda n: n == 0)
    primed = [Primed(sock, "/status"), Primed(sock, "/metrics")]
    # connect() returns once the kernel queued the connection: the cut
    # must wait until lbagent accepted both.
    h.wait_until(lambda: api_connections(lb.pid, sock), 5,
                 "lbagent to accept the two primed requests",
                 ok=lambda n: n == 2)
    mark = lb.log_mark()
    _, hard = resource.prlimit(lb.pid, resource.RLIMIT_NOFILE)
    resource.prlimit(lb.pid, resource.RLIMIT_NOFILE, (0, hard))
    cut = time.monotonic()
    want = {"run": "pipe: Too many open files (lbagent out of descriptors)",
            "port": "socket: Too many open files (lbagent out of descriptors)"}
    try:
        h.wait_until(lambda: lb.log_since(mark), BOUND_S,
                     "a warning for each probe's unknown run",
                     ok=lambda t: all(f"probe {n}: unknown, not counted" in t
                                      for n in PROBES))
        code, body = primed[0].finish()
        h.expect_equal(code, 200, "/status during the cut")
        ps = probes(json.loads(body))
        for n in PROBES:
            h.expect(ps[n]["last"]["result"] == "unknown" and
                     ps[n]["last"]["reason"].endswith(want[n]) and
                     ps[n]["counted"] == "ok" and ps[n]["settled"],
                     f"probe {n} during the cut: {ps[n]}")
        code, body = primed[1].finish()
        h.expect_equal(code, 200, "/metrics during the cut")
        text = body.decode()
        for n in PROBES:
            h.expect_equal(metric(text, "lbagent_probe_last_result", n), 3.0,
                           f"lbagent_probe_last_result of {n}")
            h.expect(metric(text, "lbagent_probe_runs_total", n) >= 1,
                     f"lbagent_probe_runs_total of {n}, result unknown")
        # Long enough for down_after to pass many times over, had it counted.
        time.sleep(max(0.0, HOLD_S - (time.monotonic() - cut)))
        log = lb.log_since(mark)
    finally:
        resource.prlimit(lb.pid, resource.RLIMIT_NOFILE, (hard, hard))
    for n in PROBES:
        lines = [x for x in log.splitlines() if f"probe {n}: unknown, not counted" in x]
        h.expect(len(lines) == 1 and want[n] in lines[0],
                 f"probe {n}: one warning in {HOLD_S:.0f} s of unknown runs, saw {lines}")
    others = [x for x in log.splitlines()
              if "unknown, not counted" not in x and
              ("probe " in x or "reply changed" in x or "down" in x)]
    h.expect(not others, "the log during the cut says more than the unknown runs:\n"
             + "\n".join(others))
    after = probes(status(sock))
    for n in PROBES:
        runs = after[n]["runs"]
        # A run every 200 ms; at least a down_after's worth, unknown.
        h.expect(runs["unknown"] - before[n]["runs"]["unknown"] >=
                 DOWN_AFTER_S * 1000 / INTERVAL_MS,
                 f"probe {n}: unknown runs counted apart: {runs}")
        h.expect_equal(runs["crit"], 0, f"probe {n}: no crit runs")

    h.section("limit restored: the probes run ok again, the reply is up")
    h.wait_until(lambda: probes(status(sock)), BOUND_S, "both probes ok again",
                 ok=lambda ps: all(ps[n]["last"]["result"] == "ok" for n in PROBES))
    h.expect_equal(lb.ask(), b"up\n", "the reply after the cut")
    lb.stop(expect_rc=0)


h.run(main)
