"""What an agent's percentage does to a server's weight in the real HAProxy.

lbagent runs one service per percentage, each with a failing probe whose
on_crit gives it: w75 (`up 75%`), w50, w33 and w0 (on_crit = drain:
`up 0%`). One HAProxy has a server for each pairing below (agent-send
picks the service), so that every claim is seen in one `show stat`:

1. Dynamic algorithms (roundrobin here): the current weight is the
   configured weight times the percentage over 100, truncated. With
   weight 1, 75% and 50% are 0 (the server shows DRAIN: no new
   connections); weight 3 at 50% is 1, weight 10 at 33% is 3 and at 75%
   is 7, weight 100 at 33% is 33, weight 256 at 33% is 84. A weight of 0
   is not HAProxy's DRAIN flag: `show stat` still says UP.
2. Static algorithms (static-rr, and `balance source` with the default
   map-based hash) accept only 0% and 100%: at 50% the server keeps its
   configured weight and HAProxy says why in the agent check's last
   description (last_agt: "via agent : up (Backend is using a static LB algorithm and only accepts weights '0%'
   and '100%'.)"); 0% still takes the weight to 0. With `hash-type
   consistent` the same source hash takes 50%.
3. `balance first` takes the weight (it is dynamic in HAProxy) although
   it picks servers by their order, not by weight."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

PCT = {"w75": "75%", "w50": "50%", "w33": "33%", "w0": "drain"}
STATIC_MSG = "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'"
# backend: (balance lines, [(server, configured weight, service, expected weight)])
CASES = {
    "rr": (["balance roundrobin"], [
        ("w1p75", 1, "w75", 0), ("w1p50", 1, "w50", 0), ("w3p50", 3, "w50", 1),
        ("w10p33", 10, "w33", 3), ("w10p75", 10, "w75", 7),
        ("w100p33", 100, "w33", 33), ("w256p33", 256, "w33", 84)]),
    "srr": (["balance static-rr"], [("w100p50", 100, "w50", 100),
                                    ("w100p0", 100, "w0", 0)]),
    "src": (["balance source"], [("w100p50", 100, "w50", 100),
                                 ("w100p0", 100, "w0", 0)]),
    "srcch": (["balance source", "hash-type consistent"], [("w100p50", 100, "w50", 50)]),
    "first": (["balance first"], [("w100p50", 100, "w50", 50)]),
}
STATIC = ("srr", "src")


def main():
    h.require_kinds("file")
    missing = os.path.join(h.tmpdir(), "missing")
    conf = {"agent": {**h.IMMEDIATE, "reply_reasons": "yes"}}
    for svc, on_crit in PCT.items():
        conf[f"probe {svc}f"] = {"type": "file", "path": missing, "interval": "300ms",
                                 "timeout": "200ms", "on_crit": on_crit}
        conf[f"service {svc}"] = {"probes": f"{svc}f"}
    lb = h.Lbagent(conf)
    for svc, on_crit in PCT.items():
        pct = "0%" if on_crit == "drain" else on_crit
        h.wait_reply(lb, f"up {pct} #{svc}f: does not exist\n".encode(), f"{svc}'s reply",
                     send=f"{svc}\n".encode())

    backends = {be: [h.Server(name, lb, weight=w, agent_send=svc) for name, w, svc, _ in srvs]
                for be, (_, srvs) in CASES.items()}
    hap = h.Haproxy(backends=backends,
                    backend_lines={be: lines for be, (lines, _) in CASES.items()})
    want = {f"{be}/{name}": str(exp) for be, (_, srvs) in CASES.items()
            for name, _, _, exp in srvs}
    names = [(be, name) for be, (_, srvs) in CASES.items() for name, _, _, _ in srvs]

    def seen():
        return hap.stat_many(names)

    def weights(rows):
        return {f"{be}/{n}": st["weight"] for (be, n), st in rows.items()}

    def settled(rows):
        # Every server has had an agent reply, and its health check has
        # passed (before that HAProxy says "UP 1/3").
        return all(h.agent_result(st) not in ("", "INI") and
                   st["check_status"].lstrip("* ") not in ("", "INI")
                   for st in rows.values()) and weights(rows) == want

    h.section("each server's weight, every server in one show stat")
    rows = h.wait_until(seen, h.agent_checks_bound_s(3), "the weights of the table",
                        ok=settled,
                        describe=lambda r: "; ".join(f"{be}/{n} {h.describe_stat(st)}"
                                                     for (be, n), st in r.items()))
    for (be, n), st in rows.items():
        print(f"   {be:6} {n:8} weight {st['weight']:>3} {st['status']:4} "
              f"{st['last_agt']!r}", flush=True)
        # Weight 0 is not the DRAIN flag: show stat still says UP.
        h.expect_equal(st["status"], "UP", f"{be}/{n}'s status ({h.describe_stat(st)})")
    for be in STATIC:
        st = rows[(be, "w100p50")]
        h.expect(STATIC_MSG in st["last_agt"],
                 f"{be}/w100p50: HAProxy's reason for refusing 50%: {h.describe_stat(st)}")
    for be in ("rr", "srcch", "first"):
        for (b, n), st in rows.items():
            if b == be:
                h.expect(STATIC_MSG not in st["last_agt"],
                         f"{b}/{n}: {h.describe_stat(st)}")
    h.expect(lb.alive(), "lbagent died")


h.run(main)
