"""lbagent itself out of descriptors: its probes cannot run, and that says
nothing about the service.

An exec probe (a script that prints "fine") and a tcp probe (to a
listening stand-in) pass, every 200 ms, with down_after 1s and up_after
60s. The daemon's RLIMIT_NOFILE is then cut to 0, so that neither pipe()
nor socket() can get a descriptor, for four times down_after. Meanwhile,
on an HTTP connection to /status opened before the cut (kept alive, so
lbagent needs no new descriptor to answer it):

- the service stays up and its target stays up: the runs do not count;
- each probe's last run is `unknown` with lbagent's reason (`pipe: Too
  many open files (lbagent out of descriptors)`, `socket: ...`), it still
  counts as ok, settled, and its unknown runs are counted apart;
- /metrics shows the last result as 3 and the unknown runs;
- the log says so at warning level, once per probe (rate-limited).

With the limit restored the probes run ok again and the reply is `up` (had
the node gone down, up_after would hold it down for a minute)."""

import http.client
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


class KeptAlive:
    """One HTTP/1.1 connection to the API's unix socket, reused for every
    request: it must stay the same socket while lbagent cannot accept."""

    def __init__(self, path):
        self.conn = http.client.HTTPConnection("localhost", timeout=5)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        self.conn.sock = s
        self.sock = s

    def get(self, path):
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        body = r.read()
        if self.conn.sock is not self.sock or r.getheader("connection", "").lower() == "close":
            raise h.TestFailure(f"{path}: the API closed the kept-alive connection")
        return r.status, body

    def status(self):
        code, body = self.get("/status")
        h.expect_equal(code, 200, "/status")
        return json.loads(body)

    def close(self):
        self.conn.close()


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
        if line.startswith(f'{name}{{probe="{probe}",result="unknown"}}'):
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
    api = KeptAlive(sock)
    h.wait_until(lambda: probes(api.status()), BOUND_S, "both probes settled and ok",
                 ok=lambda ps: all(ps[n]["settled"] and ps[n]["last"] is not None and
                                   ps[n]["last"]["result"] == "ok" for n in PROBES))
    h.expect_equal(lb.ask(), b"up\n", "the reply before the cut")

    h.section(f"RLIMIT_NOFILE cut to 0 for {HOLD_S:.0f} s: probes unknown, node up")
    mark = lb.log_mark()
    _, hard = resource.prlimit(lb.pid, resource.RLIMIT_NOFILE)
    resource.prlimit(lb.pid, resource.RLIMIT_NOFILE, (0, hard))
    try:
        want = {"run": "pipe: Too many open files (lbagent out of descriptors)",
                "port": "socket: Too many open files (lbagent out of descriptors)"}
        ps = h.wait_until(lambda: probes(api.status()), BOUND_S,
                          "both probes' last run unknown, with lbagent's reason",
                          ok=lambda ps: all(ps[n]["last"]["result"] == "unknown"
                                            for n in PROBES))
        for n in PROBES:
            h.expect(ps[n]["last"]["reason"].endswith(want[n]),
                     f"probe {n}: reason {ps[n]['last']['reason']!r}, expected it to end "
                     f"with {want[n]!r}")
        cut = time.monotonic()

        def still_up(doc):
            s = doc["services"][0]
            ps = probes(doc)
            return (s["state"] == "up" and s["reply"] == "up" and
                    s["target"]["state"] == "up" and
                    all(ps[n]["counted"] == "ok" and ps[n]["settled"] and
                        ps[n]["last"]["result"] == "unknown" for n in PROBES))

        seen = {}

        def observe():
            seen["doc"] = api.status()
            return seen["doc"]

        h.hold_for(observe, HOLD_S, "the service up, the probes counted ok, their runs "
                   "unknown", ok=still_up, describe=brief)
        ps = probes(seen["doc"])
        for n in PROBES:
            # A run every 200 ms; at least a down_after's worth, unknown.
            h.expect(ps[n]["runs"]["unknown"] >= DOWN_AFTER_S * 1000 / INTERVAL_MS,
                     f"probe {n}: unknown runs counted apart: {ps[n]['runs']}")
            h.expect_equal(ps[n]["runs"]["crit"], 0, f"probe {n}: no crit runs")
        code, body = api.get("/metrics")
        text = body.decode()
        for n in PROBES:
            h.expect_equal(metric(text, "lbagent_probe_last_result", n), 3.0,
                           f"lbagent_probe_last_result of {n}")
            h.expect(metric(text, "lbagent_probe_runs_total", n) >= 1,
                     f"lbagent_probe_runs_total of {n}, result unknown")
        held = time.monotonic() - cut
    finally:
        resource.prlimit(lb.pid, resource.RLIMIT_NOFILE, (hard, hard))
    h.expect(held >= HOLD_S, f"held {held:.1f} s")
    log = lb.log_since(mark)
    for n in PROBES:
        lines = [x for x in log.splitlines() if f"probe {n}: unknown, not counted" in x]
        h.expect(len(lines) == 1 and want[n] in lines[0],
                 f"probe {n}: one warning in {held:.0f} s of unknown runs, saw {lines}")

    h.section("limit restored: the probes run ok again, the reply is up")
    h.wait_until(lambda: probes(api.status()), BOUND_S, "both probes ok again",
                 ok=lambda ps: all(ps[n]["last"]["result"] == "ok" for n in PROBES))
    h.expect_equal(lb.ask(), b"up\n", "the reply after the cut")
    api.close()
    lb.stop(expect_rc=0)


h.run(main)
