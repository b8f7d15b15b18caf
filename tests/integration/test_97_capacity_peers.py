"""Capacity weights relative to the fleet, with nobody reading a detail
(issue 31): two lbagents, peers of each other ([peers] agents, no load
balancer), each taking its rate and utilization from its application's
load report (http probes' json_field). A's report: 100 req/s at 0.4
(an estimate of 250 req/s), B's: 100 req/s at 0.8 (125). The fleet's
mean is 187.5, so A replies 133% and B 67%, and both keep replying so
for longer than capacity_expiry: each round asks the peers for their
estimates, not only the rounds that read every server (which a node in
and healthy, unwatched, never has after its first). Then B's report
changes to 0.4 as well: both go back to 100% (within the factor's
deadband of 2 points: 99 to 101)."""

import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

ROUND_MS = 300
EXPIRY_MS = 2000


def node(name, app, port, ports):
    return h.Lbagent({
        "agent": {"reply_reasons": "yes", "no_probes": "yes", "node_id": name,
                  **h.IMMEDIATE},
        "http": {"listen": f"127.0.0.1:{port}"},
        "peers": {"agents": ", ".join(f"http://127.0.0.1:{p}" for p in ports),
                  "interval": f"{ROUND_MS}ms", "steady_interval": f"{ROUND_MS}ms",
                  "timeout": "1s"},
        "probe p": {"type": "file", "path": "/", "interval": "200ms",
                    "timeout": "150ms"},
        "probe rate": {"type": "http", "url": app.url(f"/{name}"), "json_field": "qps",
                       "interval": "200ms", "timeout": "150ms"},
        "probe util": {"type": "http", "url": app.url(f"/{name}"),
                       "json_field": "utilization", "interval": "200ms",
                       "timeout": "150ms"},
        "service web": {"probes": "p", "weight_from": "capacity",
                        "capacity_rate": "rate", "capacity_utilization": "util",
                        "capacity_blackout": "0s", "capacity_half_life": "200ms",
                        "capacity_expiry": f"{EXPIRY_MS}ms"},
    }, name=f"lbagent-{name}")


def percent(r):
    """The weight of a reply of up alone (100) or up and a weight; None
    for any other reply."""
    w = h.reply_words(r)
    if w == [b"up"]:
        return 100
    if len(w) == 2 and w[0] == b"up" and w[1].endswith(b"%") and w[1][:-1].isdigit():
        return int(w[1][:-1])
    return None


def replies(lb, want, what):
    return h.wait_reply(lb, lambda r: percent(r) in want, what, send=b"web\n")


def main():
    h.require_kinds("http", "file")
    app = h.HttpStub()
    app.set_json("/a", {"qps": 100, "utilization": 0.4})
    app.set_json("/b", {"qps": 100, "utilization": 0.8})
    ports = [h.free_port(), h.free_port()]
    a = node("a", app, ports[0], ports)
    b = node("b", app, ports[1], ports)

    h.section("A at 250 req/s, B at 125: 133% and 67%, past the expiry")
    replies(a, (133,), "A replies 133%")
    replies(b, (67,), "B replies 67%")
    # Past the expiry of the estimates read in the first round (a whole
    # one): only rounds that go on asking the peers keep them.
    end = time.monotonic() + 2 * EXPIRY_MS / 1000.0
    while time.monotonic() < end:
        for lb, want in ((a, 133), (b, 67)):
            r = lb.ask(send=b"web\n")
            h.expect(percent(r) == want, f"{lb.name} still replies {want}%: {r!r}")
        time.sleep(0.25)

    h.section("B's utilization falls to 0.4: both at 100%, within the deadband")
    app.set_json("/b", {"qps": 100, "utilization": 0.4})
    # B's estimate climbs to 250 damped (capacity_half_life): the factor
    # follows in steps and stops once the target is less than the
    # deadband's 2 points away, so at 99, 100 or 101.
    for lb in (a, b):
        replies(lb, (99, 100, 101), f"{lb.name} back at 100% (99 to 101)")
    h.expect(a.alive() and b.alive(), "both still running")


if __name__ == "__main__":
    h.run(main)
