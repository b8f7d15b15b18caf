"""The peer guard from the load balancers alone (issue 16): [haproxy]
sources and no [peers] agents. Two real HAProxy instances (sources
127.0.0.N), each checking all three nodes' lbagents; every lbagent reads
the first over its unix admin socket, the second over its stats page's CSV.
"Another node serving" is another server of backend `be` UP with a weight
above 0 on every load balancer that answered. Same windows as test_45/46
(peer_cluster.py); each scenario on fresh processes.

1. one node fails: it goes out in both; the detail says the guard judges by
   the load balancers, names the servers serving, lists no peers, and shows
   this node's sessions, queue and the other servers serving on each (and
   /metrics its sessions and queue per load balancer, which promtool
   check metrics passes);
2. all fail one after the other: the last is held in (UP in both, the hold
   reply, one warning), the two out stay out;
3. a server MAINT on one load balancer only is not serving there: with n3
   out and n2 MAINT on the second, n1 failing stays in; once the operator
   readies n2, n1 goes out;
4. load balancers that do not answer: with the second stopped, n3 failing
   goes out on the first (which shows n1, n2 UP); with both stopped nobody
   can be seen serving, so n2 failing stays in.

PEERTEST_NO_PEERS=1 leaves [peers] and [haproxy] out (scaffolding check:
only scenario 1 is meaningful then)."""

import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

SOURCES = ("unix", "http")


def cluster():
    c = pc.Cluster(haproxies=2, sources=SOURCES, lbs_only=True)
    c.start()
    return c


def one_fails():
    c = cluster()
    n1 = c["n1"]
    if c.peers:
        h.section("the detail: judged by the load balancers, n2 and n3 serving")
        doc = pc.wait_doc(n1, lambda d: len(pc.lb_rows(d)) == 2 and
                          all(pc.lb_ok(r) and pc.this_node(r).get("others_serving") == 2
                              for r in pc.lb_rows(d)) and pc.other_serving(d) is True,
                          pc.PROBE_S + pc.ROUND_S,
                          "n1's detail: both load balancers show two others serving")
        g = pc.guard(doc)
        h.expect(g.get("judged_by") == "load_balancers" and g.get("peers") == [] and
                 g.get("serving_peers") == "n2, n3",
                 f"the guard judges by the load balancers, n2 and n3 serving: {g}")
        h.expect(not doc.get("peers"), f"no peers asked: {doc.get('peers')}")
        for r in pc.lb_rows(doc):
            t = pc.this_node(r)
            h.expect(t.get("status") == "UP" and t.get("sessions") == 0 and
                     t.get("queued") == 0 and t.get("server") == "n1",
                     f"n1 on {r.get('source')}: UP, no session, no queue: {t}")
        _, _, body = h.http_request(n1.http_port, "/metrics")
        text = body.decode()
        for src in c.haproxy_sources():
            for fam in ("lbagent_lb_sessions", "lbagent_lb_queued"):
                want = f'{fam}{{service="default",source="{src}"}} 0'
                h.expect(want in text.splitlines(),
                         f"/metrics has {want!r}:\n" +
                         "\n".join(ln for ln in text.splitlines() if "_lb_" in ln))
        promtool = shutil.which("promtool")
        h.expect(promtool is not None, "promtool (scripts/deps test installs prometheus)")
        r = subprocess.run([promtool, "check", "metrics"], input=body,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        h.expect(r.returncode == 0 and r.stdout.strip() == b"",
                 f"promtool check metrics (exit {r.returncode}):\n{r.stdout.decode()}")

    h.section("n1 fails: out in both; n2, n3 stay UP in both")
    mark = n1.lb.log_mark()
    n1.fail()
    c.wait_out("n1")
    c.hold({"n1": "DOWN", "n2": "UP", "n3": "UP"}, pc.HOLD_S, "n1 out, n2 and n3 in")
    h.expect_equal(n1.hold_warnings(mark), [], "no hold warning with others serving")
    if c.peers:
        gone = n1.log_lines("peer-guard: going out", since=mark)
        h.expect(len(gone) == 1 and "n2, n3" in gone[0],
                 f"the log names the servers serving when it goes out: {gone}")
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
    r = pc.wait_held(n3)
    print(f"   n3 held: {r!r}", flush=True)
    c.hold({"n1": "DOWN", "n2": "DOWN", "n3": "UP"}, pc.ALONE_GRACE_S + 2.0,
           "n3 held in both; n1, n2 stay out")
    h.hold_for(n3.ask, pc.ROUND_S, "n3 keeps replying the hold",
               ok=lambda r: pc.HOLD_REASON_RE.match(r) is not None)
    warned = n3.hold_warnings(mark)
    h.expect(len(warned) == 1, f"n3 warns once, saw {len(warned)}:\n" + "\n".join(warned))
    doc = n3.detail()
    h.expect_equal(pc.guard_state(doc), "holding", "n3's guard state")
    why = pc.guard(doc).get("why") or ""
    h.expect("no other server of be UP" in why,
             f"the guard says why nobody else serves: {pc.guard(doc)}")
    c.close()


def maint_on_one():
    c = cluster()
    n1, n3 = c["n1"], c["n3"]
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

    h.section("the operator readies n2: n1 goes out")
    hap2.set_server_state("be", "n2", "ready")
    h.wait_until(lambda: c.status("n2", hap2), pc.HAP_S, "n2 UP in the second again",
                 ok=lambda s: s == "UP")
    c.wait_out("n1", "n1 out once n2 serves on both", timeout_s=pc.ROUND_S + pc.HAP_S + 2.0)
    c.close()


def silent_lbs():
    c = cluster()
    n2, n3 = c["n2"], c["n3"]
    hap1, hap2 = c.haps
    hap2.stop()
    src2 = c.source_text(hap2, "http")
    h.section("the second HAProxy stopped: the first answers")
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
    why = pc.guard(doc).get("why") or ""
    h.expect("no load balancer answered" in why,
             f"the guard says no load balancer answered: {pc.guard(doc)}")
    c.close()


SCENARIOS = [
    ("1. one node fails: out in both load balancers", one_fails),
    ("2. all fail one after the other: the last is held in", fail_in_turn),
    ("3. MAINT on one load balancer only: not serving", maint_on_one),
    ("4. load balancers that do not answer", silent_lbs),
]


h.run(lambda: pc.run_scenarios(SCENARIOS))
