"""The peer guard (issue 6) with two real HAProxy instances (sources
127.0.0.N, each checking all three nodes' lbagents). Every lbagent reads
both: the first over its unix admin socket, the second over its stats
page's CSV (http://.../stats;csv). Same three nodes and windows as
test_45 (peer_cluster.py); each scenario on fresh processes.

1. one node fails: it goes out in both, the others stay UP in both; the
   detail lists both load balancers, answering, with this node's server;
2. all fail one after the other: the last is held in (UP in both) and warns
   once; the two out stay out past alone_grace;
3. a peer MAINT on one load balancer only is not serving ("every load
   balancer that answered shows it UP"): with n3 out, n1 failing stays in;
   once the operator readies n2 there, n1 goes out;
4. a load balancer that does not answer is left out of the judgement: with
   the second HAProxy stopped, n3 failing goes out (the first shows n1, n2
   UP); with both stopped nobody can be seen serving, so n2 failing stays
   in (its reply and its log say so).

PEERTEST_ONLY=1,3 runs only those scenarios;
PEERTEST_NO_PEERS=1 leaves the [peers] section out (scaffolding check:
only scenario 1 is meaningful then)."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

SOURCES = ("unix", "http")


def cluster():
    c = pc.Cluster(haproxies=2, sources=SOURCES)
    c.start()
    return c


def one_fails():
    c = cluster()
    n1 = c["n1"]
    if c.peers:
        h.section("the detail lists both load balancers with this node's server")
        srcs = c.haproxy_sources()
        doc = pc.wait_doc(n1, lambda d: len(pc.lb_rows(d)) == 2 and
                          all(pc.lb_ok(r) and pc.this_node(r).get("found")
                              for r in pc.lb_rows(d)),
                          pc.PROBE_S + pc.ROUND_S,
                          "n1's detail: both load balancers answering, n1 found")
        h.expect_equal(sorted(r.get("source") for r in pc.lb_rows(doc)), sorted(srcs),
                       "the load balancers by their source text")
        for r, form in zip(pc.lb_rows(doc), SOURCES):
            t = pc.this_node(r)
            # The stats page's CSV has only the current weight: the
            # configured one comes from the Runtime API (show servers state).
            iw = 100 if form != "http" else None
            h.expect(t.get("status") == "UP" and t.get("weight") == 100 and
                     t.get("initial_weight") == iw and t.get("server") == "n1" and
                     t.get("backend") == "be" and not t.get("warnings"),
                     f"n1 as {r.get('source')} shows it (initial weight {iw}): {t}")

    h.section("n1 fails: out in both; n2, n3 stay UP in both")
    mark = n1.lb.log_mark()
    n1.fail()
    c.wait_out("n1")
    c.hold({"n1": "DOWN", "n2": "UP", "n3": "UP"}, pc.HOLD_S, "n1 out, n2 and n3 in")
    h.expect_equal(n1.hold_warnings(mark), [], "no hold warning with others serving")
    n1.heal()
    c.wait_in("n1", timeout_s=pc.PROBE_S + pc.UP_AFTER_S + pc.HAP_S)
    c.close()


def fail_in_turn():
    c = cluster()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]
    n1.fail()
    c.wait_out("n1", "n1 out in both")
    n2.fail()
    c.wait_out("n2", "n2 out in both")
    mark = n3.lb.log_mark()
    n3.fail()
    pc.wait_held(n3)
    c.hold({"n1": "DOWN", "n2": "DOWN", "n3": "UP"}, pc.ALONE_GRACE_S + 2.0,
           "n3 held in both; n1, n2 stay out")
    warned = n3.hold_warnings(mark)
    h.expect(len(warned) == 1, f"n3 warns once, saw {len(warned)}:\n" + "\n".join(warned))
    h.expect_equal(pc.guard_state(n3.detail()), "holding", "n3's guard state")
    c.close()


def maint_on_one():
    c = cluster()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]
    hap1, hap2 = c.haps
    n3.fail()
    c.wait_out("n3", "n3 out in both")
    hap2.set_server_state("be", "n2", "maint")
    h.wait_until(lambda: c.status("n2", hap2), pc.HAP_S, "n2 MAINT in the second HAProxy",
                 ok=lambda s: s == "MAINT")
    h.expect_equal(c.status("n2", hap1), "UP", "n2 still UP in the first")
    mark = n1.lb.log_mark()
    n1.fail()
    pc.wait_held(n1)
    c.hold({"n1": "UP", "n3": "DOWN"}, pc.HOLD_S, "n1 held in both")
    warned = n1.hold_warnings(mark)
    h.expect(len(warned) == 1, f"n1 warns once, saw {len(warned)}:\n" + "\n".join(warned))
    row = pc.peer_row(n1.detail(), n2.url())
    why = pc.peer_why_not(row) or ""
    h.expect(pc.peer_serving(row) is False and "MAINT" in why and
             c.source_text(hap2, "http") in why,
             f"n1 sees n2 not serving: MAINT on the second load balancer: {row}")

    h.section("the operator readies n2: n1 goes out")
    hap2.set_server_state("be", "n2", "ready")
    h.wait_until(lambda: c.status("n2", hap2), pc.HAP_S, "n2 UP in the second again",
                 ok=lambda s: s == "UP")
    c.wait_out("n1", "n1 out once n2 serves on both", timeout_s=pc.ROUND_S + pc.HAP_S + 2.0)
    c.close()


def silent_lbs():
    c = cluster()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]
    hap1, hap2 = c.haps
    hap2.stop()
    src2 = c.source_text(hap2, "http")
    h.section("the second HAProxy stopped: the first answers")
    if c.peers:
        doc = pc.wait_doc(n3, lambda d: pc.lb_ok(pc.lb_row(d, src2)) is False,
                          pc.ROUND_S + 2.0, "n3 sees the second not answering")
        r2 = pc.lb_row(doc, src2)
        h.expect(r2.get("error"), f"the silent load balancer with an error: {r2}")
    n3.fail()
    h.wait_until(lambda: c.status("n3", hap1), pc.OUT_S, "n3 DOWN in the first",
                 ok=lambda s: s == "DOWN")

    h.section("both stopped: nobody can be seen serving; n2 failing stays in")
    hap1.stop()
    mark = n2.lb.log_mark()
    n2.fail()
    r = pc.wait_held(n2)
    print(f"   n2 held: {r!r}", flush=True)
    h.hold_for(n2.ask, pc.HOLD_S, "n2 keeps replying the hold",
               ok=lambda r: pc.HOLD_REASON_RE.match(r) is not None)
    warned = n2.hold_warnings(mark)
    h.expect(len(warned) == 1, f"n2 warns once, saw {len(warned)}:\n" + "\n".join(warned))
    doc = n2.detail()
    h.expect(all(pc.lb_ok(r) is False for r in pc.lb_rows(doc)),
             f"n2 sees no load balancer answering: {pc.lb_rows(doc)}")
    row = pc.peer_row(doc, n1.url())
    h.expect(pc.peer_serving(row) is False,
             f"n1's lbagent says serving, but no load balancer answered: {row}")
    h.expect(n1.public()["serving"] is True, "n1's own lbagent says serving")
    c.close()


SCENARIOS = [
    ("1. one node fails: out in both load balancers", one_fails),
    ("2. all fail one after the other: the last is held in", fail_in_turn),
    ("3. MAINT on one load balancer only: not serving", maint_on_one),
    ("4. load balancers that do not answer", silent_lbs),
]


h.run(lambda: pc.run_scenarios(SCENARIOS))
