"""What an agent's percentage does to a server's weight in the real HAProxy.

lbagent runs one service per percentage, each with a failing probe whose
on_crit gives it: w75 (`up 75%`), w50, w33 and w0 (on_crit = drain:
`up 0%`). One HAProxy has a server for each pairing below (agent-send
picks the service), so that every claim is seen in one `show stat`:

1. Dynamic algorithms (roundrobin here): the current weight is the
   configured weight times the percentage over 100, truncated, for
   weights 1, 3, 10, 100 and 256 at 75%, 50% and 33% (docs/haproxy.md's
   table): with weight 1 every one is 0 (no new connections), weight 3 at
   50% is 1, weight 256 at 33% is 84 (the test reads the table from the
   documentation, so the two cannot differ). A weight of 0 is not HAProxy's
   DRAIN flag: `show stat` still says UP.
2. Static algorithms (static-rr, and `balance source` with the default
   map-based hash) accept only 0% and 100%: at 50% the server keeps its
   configured weight and HAProxy says why in the agent check's last
   description (last_agt: "via agent : up (Backend is using a static LB
   algorithm and only accepts weights '0%' and '100%'.)"); 0% still takes
   the weight to 0. With `hash-type consistent` the same source hash
   takes 50%.
3. `balance first` takes the weight (it is dynamic in HAProxy) although
   it picks servers by their order, not by weight.
4. An operator's `set server ... state drain` shows as "DRAIN (agent)"
   as well: HAProxy names the agent for any DRAIN of a server that has
   an agent check, whoever set it.
5. `slowstart 60s` on every server of a second HAProxy, lbagent's own
   ramp off: after a `down` ends (and when `ready` ends a MAINT) HAProxy
   ramps the weight from almost nothing, and an agent's `up 50%` then
   gets 50% of the ramped weight, not 50: each UP sample's weight is
   below its target and within what HAProxy's formula gives for the
   seconds since the change (lastchg, from the same row). A drain that
   ends, or a weight that rises from 50% to 100%, is no such change: the
   first sample after it shows the full weight."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(ROOT, "docs", "haproxy.md")
TABLE_HEAD = "| `weight` | `75%` | `50%` | `33%` |"
TABLE_PCT = (75, 50, 33)


def doc_table():
    """{weight: (at 75%, 50%, 33%)} from docs/haproxy.md's table."""
    with open(DOC) as f:
        lines = f.read().split("\n")
    i = lines.index(TABLE_HEAD) + 2
    table = {}
    while i < len(lines) and lines[i].startswith("|"):
        cells = [c.strip() for c in lines[i].strip("|").split("|")]
        table[int(cells[0])] = tuple(int(c) for c in cells[1:])
        i += 1
    return table


# The table the documentation shows is the one measured here.
TABLE = doc_table()
PCT = {"w75": "75%", "w50": "50%", "w33": "33%", "w0": "drain"}
STATIC_MSG = "Backend is using a static LB algorithm and only accepts weights '0%' and '100%'"
# backend: (balance lines, [(server, configured weight, service, expected weight)])
CASES = {
    "rr": (["balance roundrobin"], [
        (f"w{w}p{p}", w, f"w{p}", exp) for w, row in TABLE.items()
        for p, exp in zip(TABLE_PCT, row)]),
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
                   for st in rows.values())

    h.section("each server's weight, every server in one show stat")
    # lbagent already sends each reply: the first one sets the weight.
    rows = h.wait_until(seen, h.agent_checks_bound_s(3), "every server's first checks",
                        ok=settled,
                        describe=lambda r: "; ".join(f"{be}/{n} {h.describe_stat(st)}"
                                                     for (be, n), st in r.items()))
    h.expect_equal(weights(rows), want, "each server's weight (backend/server: weight)")
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
    h.section("an operator's drain shows as DRAIN (agent) too")
    hap.set_server_state("rr", "w100p75", "drain")
    st = hap.stat("rr", "w100p75")
    h.expect_equal(st["status"], "DRAIN (agent)",
                   f"status after `set server rr/w100p75 state drain` ({h.describe_stat(st)})")
    hap.set_server_state("rr", "w100p75", "ready")
    h.expect(lb.alive(), "lbagent died")
    hap.stop()
    h.env().forget(hap)
    slowstart()


SLOWSTART_S = 60


def slowstart():
    h.section("slowstart: a down and a maint start it, a drain and a weight rise do not")
    d = h.tmpdir()
    files = {n: os.path.join(d, f"ss-{n}.ok") for n in ("down", "both50", "w50", "fine")}
    for f in files.values():
        h.write_atomic(f, "ok\n")

    def fp(name, on_crit):
        return {"type": "file", "path": files[name], "interval": "300ms", "timeout": "200ms",
                "on_crit": on_crit}

    lb = h.Lbagent({"agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
                    "probe down": fp("down", "down"),
                    "probe both50": fp("both50", "50%"),
                    "probe w50": fp("w50", "50%"),
                    "probe fine": fp("fine", "down"),
                    "service vdown": {"probes": "down"},
                    "service vboth": {"probes": "down, both50"},
                    "service vw": {"probes": "w50"},
                    "service vmaint": {"probes": "fine"},
                    "service vdrain": {"probes": "fine"}}, name="lbagent-slowstart")
    servers = {"sdown": "vdown", "sboth": "vboth", "sw": "vw", "smaint": "vmaint",
               "sdrain": "vdrain"}
    hap = h.Haproxy(backends={"ss": [h.Server(n, lb, agent_send=svc,
                                              extra=f"slowstart {SLOWSTART_S}s")
                                     for n, svc in servers.items()]},
                    name="haproxy-slowstart")
    names = [("ss", n) for n in servers]

    def rows():
        return {n: st for (_, n), st in hap.stat_many(names).items()}

    def brief(r):
        return "; ".join(f"{n} {st['status']} w{st['weight']} lastchg {st['lastchg']}"
                         for n, st in r.items())

    def wait(what, ok):
        return h.wait_until(rows, h.agent_checks_bound_s(3) + 5, what, ok=ok, describe=brief)

    wait("every server UP at 100", lambda r: all(st["status"] == "UP" and
                                                  st["weight"] == "100" for st in r.values()))
    h.section("slowstart: down, maint, drain, 50%")
    os.unlink(files["down"])
    os.unlink(files["w50"])
    os.unlink(files["both50"])
    h.write_atomic(os.path.join(lb.state_dir, "vmaint", "maint"), "")
    h.write_atomic(os.path.join(lb.state_dir, "vdrain", "drain"), "")
    wait("sdown and sboth DOWN, smaint MAINT, sdrain DRAIN, sw at 50",
         lambda r: r["sdown"]["status"].startswith("DOWN") and
         r["sboth"]["status"].startswith("DOWN") and r["smaint"]["status"].startswith("MAINT")
         and r["sdrain"]["status"] == "DRAIN (agent)" and r["sw"]["weight"] == "50")

    h.section("slowstart: each undone")
    h.write_atomic(files["down"], "ok\n")
    h.write_atomic(files["w50"], "ok\n")
    os.unlink(os.path.join(lb.state_dir, "vmaint", "maint"))
    os.unlink(os.path.join(lb.state_dir, "vdrain", "drain"))
    seen = []

    def bound(target, lastchg):
        # HAProxy 2.6 (server_recalc_eweight): the weight shown is
        # target x (16 x elapsed + slowstart) / (16 x slowstart), rounded
        # up, elapsed in whole seconds and recomputed every slowstart/20: a
        # 16th of the target at once. One second more for the rounding of
        # lastchg, one weight more for the stats' own rounding.
        n = target * (16 * (int(lastchg) + 1) + SLOWSTART_S)
        return -(-n // (16 * SLOWSTART_S)) + 1

    def one():
        r = rows()
        seen.append(brief(r))
        for n, target in (("sdown", 100), ("smaint", 100), ("sboth", 50)):
            st = r[n]
            if st["status"] == "UP":
                w = int(st["weight"])
                h.expect(w < target and w <= bound(target, st["lastchg"]),
                         f"{n} UP {st['lastchg']} s after its change at weight {w}: not "
                         f"within slowstart's ramp to {target}; samples: {seen[-5:]!r}")
        for n in ("sdrain", "sw"):
            st = r[n]
            if st["status"] == "UP" and st["weight"] != "50":
                h.expect_equal(st["weight"], "100", f"{n}'s weight once its change came")
        return r

    h.wait_until(one, h.agent_checks_bound_s(3) + 5,
                 "sdown, smaint, sboth UP in slowstart, sdrain and sw at 100", describe=brief,
                 ok=lambda r: all(r[n]["status"] == "UP" for n in servers) and
                 r["sdrain"]["weight"] == "100" and r["sw"]["weight"] == "100")
    print("   " + seen[-1], flush=True)
    h.hold_for(one, 2.0, "slowstart's ramp", ok=lambda r: True)
    h.expect(lb.alive(), "lbagent died")


h.run(main)
