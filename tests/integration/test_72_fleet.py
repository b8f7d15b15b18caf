"""The fleet view and the peers' liveness (issue 16): three lbagents n1,
n2, n3 on loopback with the same [peers] agents list (each lists all
three, itself included) and one real HAProxy read over its unix socket
(peer_cluster.py). Liveness bounds: suspect after 3 rounds, dead after 25
(set here, so that suspect lasts seconds at a 200 ms interval).

1. `lbagentctl fleet` on n1 shows all three, n1 marked as this node, each
   alive, serving, with HAProxy's view; --json parses and says the same;
   every line within 80 columns;
2. n3 stopped: its row says it does not answer; after the rounds its
   liveness goes suspect, then dead; the guard's outcome is unchanged (n1
   and n2 still serving, the guard watching);
3. n3 restarted: alive again, with a higher incarnation than before."""

import json
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

SUSPECT_AFTER = 3
DEAD_AFTER = 25
# Rounds pass at the [peers] interval; a refused connection ends one at
# once. Every bound: the rounds it takes, twice, plus a round's margin.
SUSPECT_S = 2 * SUSPECT_AFTER * pc.PEER_INTERVAL_MS / 1000.0 + pc.ROUND_S
DEAD_S = 2 * DEAD_AFTER * pc.PEER_INTERVAL_MS / 1000.0 + pc.ROUND_S


def fleet(node, *args):
    rc, out, err = h.lbagentctl("-f", node.lb.config_path, "fleet", *args)
    h.expect_equal(rc, 0, f"lbagentctl fleet {' '.join(args)} exit status "
                   f"(stderr: {err!r})")
    return out


def fleet_json(node):
    out = fleet(node, "--json")
    try:
        return json.loads(out)
    except ValueError as e:
        raise h.TestFailure(f"fleet --json is not JSON ({e}): {out!r}") from None


def rows_by_node(doc):
    return {r["node"]: r for r in doc["rows"]}


def table_row(text, name):
    """The table's line of node name (this node's has a '*')."""
    for ln in text.splitlines():
        first = ln.split(" ", 1)[0]
        if first in (name, name + "*"):
            return ln
    raise h.TestFailure(f"no row for {name} in:\n{text}")


def main():
    h.require_haproxy()
    c = pc.Cluster(peers_over={"suspect_after": str(SUSPECT_AFTER),
                               "dead_after": str(DEAD_AFTER)})
    c.start()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]

    h.section("the fleet from n1: all three, alive and serving")
    doc = h.wait_until(lambda: fleet_json(n1), pc.PROBE_S + pc.ROUND_S,
                       "n1's fleet: all three alive and serving",
                       ok=lambda d: sorted(rows_by_node(d)) == ["n1", "n2", "n3"] and
                       all(r["liveness"] in ("alive", "self") and r["serving"] is True
                           for r in d["rows"]),
                       describe=pc.short)
    rows = rows_by_node(doc)
    h.expect(rows["n1"]["self"] is True and doc["rows"][0]["node"] == "n1",
             f"n1 is this node, first: {pc.short(doc)}")
    for name in ("n1", "n2", "n3"):
        r = rows[name]
        h.expect(r["state"] == "up" and r["weight"] == 100 and r["automation"] == "auto",
                 f"{name}: up, 100, auto: {r}")
        lbs = r["load_balancers"]
        h.expect(len(lbs) == 1 and lbs[0]["server"] == name and
                 lbs[0]["status"].startswith("UP"),
                 f"{name}: HAProxy shows it UP: {lbs}")
        h.expect(isinstance(r["incarnation"], int), f"{name}: an incarnation: {r}")
    h.expect(isinstance(doc["last_round_s"], (int, float)) and
             doc["suspect_after"] == SUSPECT_AFTER and doc["dead_after"] == DEAD_AFTER,
             f"the rounds' age and bounds: {pc.short(doc)}")
    n3_inc = rows["n3"]["incarnation"]
    text = fleet(n1)
    for ln in text.splitlines():
        h.expect(len(ln) <= 80, f"a line over 80 columns: {ln!r}")
    h.expect(table_row(text, "n1").startswith("n1*"), f"n1 marked:\n{text}")
    for name in ("n2", "n3"):
        ln = table_row(text, name)
        h.expect(" up " in ln and " alive " in ln and "1:UP" in ln,
                 f"{name}'s line: {ln!r}")
    # The same from n2, for the default service named.
    h.expect(sorted(rows_by_node(json.loads(fleet(n2, "--json", "-")))) ==
             ["n1", "n2", "n3"], "n2's fleet lists all three")

    h.section("n3 stopped: no answer, suspect, then dead; the guard unchanged")
    n3.lb.stop()
    doc = h.wait_until(lambda: fleet_json(n1), SUSPECT_S,
                       "n1's fleet: n3 does not answer, suspect",
                       ok=lambda d: rows_by_node(d)["n3"]["answered"] is False and
                       rows_by_node(d)["n3"]["liveness"] == "suspect",
                       describe=pc.short)
    r3 = rows_by_node(doc)["n3"]
    h.expect(r3["error"] and r3["incarnation"] == n3_inc,
             f"n3: why, and the incarnation last seen: {r3}")
    ln = table_row(fleet(n1), "n3")
    h.expect("no answer" in ln and "suspect" in ln, f"n3's line: {ln!r}")
    h.wait_until(lambda: fleet_json(n1), DEAD_S, "n1's fleet: n3 dead",
                 ok=lambda d: rows_by_node(d)["n3"]["liveness"] == "dead",
                 describe=pc.short)
    ln = table_row(fleet(n1), "n3")
    h.expect("no answer" in ln and "dead" in ln, f"n3's line: {ln!r}")
    # Information only: the guard still sees n2 serving and watches.
    d1 = n1.detail()
    h.expect_equal(pc.guard_state(d1), "watching", "n1's guard with n3 dead")
    h.expect(pc.other_serving(d1) is True, f"n1 sees another node serving: "
             f"{pc.short(pc.guard(d1))}")
    h.expect_equal(n1.ask(), b"up\n", "n1's reply with n3 dead")

    h.section("n3 restarted: alive, with a higher incarnation")
    n3.lb.start()
    doc = h.wait_until(lambda: fleet_json(n1), pc.ROUND_S + pc.PROBE_S,
                       "n1's fleet: n3 alive again",
                       ok=lambda d: rows_by_node(d)["n3"]["liveness"] == "alive",
                       describe=pc.short)
    r3 = rows_by_node(doc)["n3"]
    h.expect(isinstance(r3["incarnation"], int) and r3["incarnation"] > n3_inc and
             r3["restarts"] >= 1, f"n3's incarnation rose from {n3_inc}: {r3}")
    c.close()


h.run(main)
