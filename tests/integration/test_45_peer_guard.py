"""The peer guard (issue 6) with one real HAProxy: three nodes n1, n2, n3,
each its own lbagent (agent port, HTTP API, state dir) with an `http` probe
`dep` on a local HTTP server the test flips between 200 and 503, and one
HAProxy whose backend `be` has servers n1, n2, n3 (agent-check to each
lbagent). Every lbagent reads the others' public /status and HAProxy's
`show stat` ([peers]). Short windows: down_after 1s, up_after 2s, ramp 0,
alone_grace 3s, recheck_after 500ms, just_out 3s (peer_cluster.py). Each
scenario runs on fresh processes.

1. one node fails: it goes out (HAProxy DOWN), the others stay UP; every
   node lists every node, itself included, and skips itself by node_id;
2. all fail, one after the other: the last one is held in (HAProxy UP,
   `up #peer-guard: dep failing but no other node serving`) and logs the
   hold warning exactly once; the two out stay out (a node held in serves);
3. all fail at the same moment: at least one node stays in (held or
   latched), and a held one warned once;
4. A out by its probe, then B and C out by maint markers (obeyed, C with
   the warning since nobody else serves): A comes back after alone_grace,
   not before; it goes out again once B serves again;
5. A and B fail at the same moment with C already out, each seeing the
   other's /status as it was 1 s before (a lagged view in between): both
   go out, the look-again brings at least one back, latched (log,
   status), and it stays in while failing; a restart ends the latch;
6. unreachable peers (nothing listening, an accepted request never
   answered, HTTP 503, not JSON) are not serving: the failing node stays
   in; the detail status says why for each;
7. a peer whose lbagent says serving but that HAProxy shows MAINT (an
   operator's) is not serving: with n3 out and n2 MAINT, n1 failing stays
   in, and goes out once n2 is ready again; the detail shows this node's
   server as HAProxy sees it, with warnings for an initial weight below 10
   and for a MAINT lbagent did not ask for (HAProxy read over a TCP Runtime
   API socket here, its unix socket elsewhere);
8. a probe whose reaction is drain, failing with no peer reachable: held in
   at full weight (HAProxy UP at 100, never 0%), one warning;
9. a peer address that answers (serving) as another node_id than the one
   first seen there is not serving: the node failing stays in.
Scenario 6 also shows that a weight reduction is not guarded: a probe with
on_crit 50% takes the weight to 50 although no other node serves.

PEERTEST_ONLY=2,5 runs only those scenarios (by number above);
PEERTEST_NO_PEERS=1 leaves the [peers] section out (scaffolding check:
only scenario 1 is meaningful then)."""

import re
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402


def one_fails():
    c = pc.Cluster()
    c.start()
    n1, n2 = c["n1"], c["n2"]
    if c.peers:
        h.section("every node lists all three; it finds itself by node_id")
        for n in c.nodes:
            doc = pc.wait_doc(n, lambda d: all(pc.peer_serving(pc.peer_row(d, o.url()))
                                               for o in c.nodes if o is not n),
                              pc.PROBE_S + pc.ROUND_S,
                              f"{n.name}: both others serving in its detail status")
            me = pc.peer_row(doc, n.url())
            h.expect(pc.peer_is_self(me) is True and me.get("node_id") == n.name,
                     f"{n.name}: its own entry is marked self: {me}")
            for o in c.nodes:
                if o is not n:
                    row = pc.peer_row(doc, o.url())
                    h.expect(pc.peer_is_self(row) is False and row.get("node_id") == o.name
                             and pc.peer_why_not(row) is None,
                             f"{n.name}: peer {o.name} serving, not self: {row}")
            h.expect_equal(pc.guard_state(doc), "watching", f"{n.name}: guard state")
        pub = n2.public()
        h.expect("peers" not in pub and "haproxy" not in pub,
                 f"the public /status has no peers or haproxy: {sorted(pub)}")
        h.expect_equal(pc.public_server(pub), "n2", "n2 publishes its server name")

    h.section("n1 fails: it goes out, n2 and n3 stay in")
    mark = n1.lb.log_mark()
    n1.fail()
    c.wait_out("n1", "n1 DOWN in HAProxy after its probe failed")
    r = n1.ask()
    h.expect(r.startswith(b"down #dep: "), f"n1's reply: {r!r}")
    c.hold({"n1": "DOWN", "n2": "UP", "n3": "UP"}, pc.HOLD_S,
           "n1 out, n2 and n3 in")
    h.expect_equal(n1.hold_warnings(mark), [], "n1 going out with others serving: no "
                   "hold warning")
    if c.peers:
        doc = n1.detail()
        h.expect(pc.other_serving(doc) is True, f"n1: other_serving: {pc.guard(doc)}")

    h.section("n1 healthy again: back in")
    n1.heal()
    c.wait_in("n1", timeout_s=pc.PROBE_S + pc.UP_AFTER_S + pc.HAP_S)
    c.close()


def fail_in_turn():
    c = pc.Cluster()
    c.start()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]
    n1.fail()
    c.wait_out("n1", "n1 out (n2, n3 serve)")
    n2.fail()
    c.wait_out("n2", "n2 out (n3 serves)")
    mark = n3.lb.log_mark()
    n3.fail()
    r = pc.wait_held(n3)
    print(f"   n3 held in: {r!r}", flush=True)
    # Longer than alone_grace: n1 and n2 must not come back, n3 serves.
    c.hold({"n1": "DOWN", "n2": "DOWN", "n3": "UP"}, pc.ALONE_GRACE_S + 2.0,
           "n3 held in; n1, n2 out (n3 serves, so no coming back alone)")
    r = n3.ask()
    h.expect(pc.HOLD_REASON_RE.match(r), f"n3 still held: {r!r}")
    warned = n3.hold_warnings(mark)
    h.expect(len(warned) == 1, f"n3 logs the hold warning once per episode, "
             f"saw {len(warned)}:\n" + "\n".join(warned))
    doc = n3.detail()
    g = pc.guard(doc)
    h.expect(g.get("state") == "holding" and g.get("other_serving") is False and
             "no other node serving" in (g.get("reason") or ""),
             f"n3's peer_guard while held: {g}")
    for o in (n1, n2):
        row = pc.peer_row(doc, o.url())
        h.expect(pc.peer_serving(row) is False and pc.peer_why_not(row),
                 f"n3 sees {o.name} not serving, with why: {row}")
    c.close()


def fail_together():
    c = pc.Cluster()
    c.start()
    marks = {n.name: n.lb.log_mark() for n in c.nodes}
    for n in c.nodes:
        n.fail()

    def kind(n):
        r = n.ask()
        if r.startswith(b"down"):
            return "out"
        if pc.HOLD_REASON_RE.match(r):
            return "held"
        if pc.guard_state(n.detail()) == "latched":
            return "latched"
        if r.startswith(b"up") and (h.reply_reason(r) or b"").startswith(b"peer-guard"):
            return "in by the guard"
        return f"undecided {r!r}"

    def kinds():
        return {n.name: kind(n) for n in c.nodes}

    h.wait_until(kinds, pc.OUT_S + pc.RECHECK_AFTER_S + pc.JUST_OUT_S + pc.ROUND_S,
                 "every node out or in by the peer guard",
                 ok=lambda k: all(not v.startswith("undecided") for v in k.values()))
    # Let every look-again of just_out have happened, by each lbagent's own
    # clock: a node out for longer than just_out is not brought back
    # latched any more; a node latched for longer than a round has been
    # seen serving by the others, so a held one has had its round to go.
    def over(n):
        doc = n.detail()
        state, age = pc.level_age_s(doc)
        if state == "down":
            return age > pc.JUST_OUT_S
        return pc.guard_state(doc) != "latched" or age > pc.ROUND_S

    h.wait_until(lambda: {n.name: over(n) for n in c.nodes},
                 pc.RECHECK_AFTER_S + pc.JUST_OUT_S + 2 * pc.ROUND_S + 2.0,
                 "every node past its look-again (just_out), or latched for a round",
                 ok=lambda v: all(v.values()))
    settled = kinds()
    print(f"   after just_out: {settled}; HAProxy {c.describe()}", flush=True)
    h.hold_for(lambda: (kinds(), c.up_names()), pc.HOLD_S,
               "at least one node in, nobody changing",
               ok=lambda v: v[0] == settled and v[1])
    ins = [n for n in c.nodes if settled[n.name] != "out"]
    h.expect(ins, f"at least one node stays in: {settled}")
    for n in ins:
        h.expect(n.name in c.up_names(), f"{n.name} is in by its reply, UP in HAProxy")
        warned = n.hold_warnings(marks[n.name])
        state = pc.guard_state(n.detail())
        if settled[n.name] == "held":
            h.expect(len(warned) == 1, f"{n.name} held: one hold warning, saw "
                     f"{len(warned)}:\n" + "\n".join(warned))
            h.expect_equal(state, "holding", f"{n.name}: guard state while held")
        else:
            h.expect(state == "latched" and n.log_lines("peer-guard", "latched",
                                                        since=marks[n.name]),
                     f"{n.name} ({settled[n.name]}) back in by the guard after going "
                     f"out: latched, and its log says so (state {state!r})")
    c.close()


def alone_grace():
    c = pc.Cluster()
    c.start()
    a, b, cc = c["n1"], c["n2"], c["n3"]
    a.fail()
    c.wait_out("n1", "A (n1) out by its probe, B and C serve")
    # Past just_out: nobody serving any sooner would bring A back latched
    # (the look-again), not after alone_grace.
    pc.wait_past_just_out(a, "A out for longer than just_out")
    h.section("B and C out by maint markers; C's with the warning")
    mark_b = b.lb.log_mark()
    b.lb.set_marker("maint", "peer test: B\n")
    c.wait_status("n2", "MAINT", pc.HAP_S, "B MAINT by its marker")
    # B judges its marker on a round started after the marker took effect
    # (before HAProxy showed it): let that round be over before C's marker.
    t_b = time.monotonic()

    def b_round():
        t = time.monotonic()
        return pc.round_started_at(b.detail(), t)

    h.wait_until(b_round, pc.ROUND_S + 2.0, "B's guard: a round since its marker",
                 ok=lambda t: t is not None and t >= t_b)
    h.expect_equal((b.marker_warnings(mark_b), pc.marker_warning(b.detail())), ([], None),
                   "B's marker came while C served: no warning")
    mark_a, mark_c = a.lb.log_mark(), cc.lb.log_mark()
    t_alone = time.monotonic()
    cc.lb.set_marker("maint", "peer test: C\n")
    c.wait_status("n3", "MAINT", pc.HAP_S, "C MAINT by its marker although nobody serves")
    h.wait_until(lambda: cc.marker_warnings(mark_c),
                 pc.ROUND_S + 2.0, "C's warning: the marker obeyed with no other node serving")
    h.expect(pc.marker_warning(cc.detail()), "C's status shows the marker warning")
    # What HAProxy is told: the marker's reason, and that nobody else serves.
    h.wait_until(lambda: h.reply_reason(cc.lb.ask()), pc.ROUND_S + 2.0,
                 "C's reply: its marker's reason and that no other node serves",
                 ok=lambda r: r == b"peer test: C (no other node serving)")

    h.section("A comes back after alone_grace")
    r = h.wait_reply(a.lb, lambda r: r.startswith(b"up") and
                     (h.reply_reason(r) or b"").startswith(b"peer-guard:"),
                     "A back in: `up #peer-guard: ...`",
                     timeout_s=pc.ALONE_GRACE_S + pc.ROUND_S + h.marker_bound_s() + 3.0)
    took = time.monotonic() - t_alone
    print(f"   A back {took:.2f} s after C's marker: {r!r}", flush=True)
    # C served until its marker was read (at or after t_alone), so A cannot
    # have been alone for alone_grace sooner than this: a causal bound, less
    # one round (interval, or its timeout when longer) for the round that
    # last saw C serving, which may have started just before t_alone.
    h.expect(took >= pc.ALONE_GRACE_S - (pc.PEER_INTERVAL_MS + pc.PEER_TIMEOUT_MS) / 1000.0
             - 0.1,
             f"A came back {took:.2f} s after the last other node stopped serving, "
             f"before alone_grace ({pc.ALONE_GRACE_S:g} s)")
    c.wait_in("n1", "A UP in HAProxy, back alone")
    said = a.log_lines("peer-guard", since=mark_a)
    h.expect(any("alone_grace" in ln or "has served" in ln for ln in said),
             "A's log says no other node has served for alone_grace:\n" + "\n".join(said))
    h.expect_equal(pc.guard_state(a.detail()), "back_alone", "A's guard state")
    c.hold({"n1": "UP", "n2": "MAINT", "n3": "MAINT"}, 1.5, "A stays in while alone")

    h.section("B serves again: A goes out again")
    b.lb.clear_marker("maint")
    c.wait_in("n2", "B UP once its marker is gone", timeout_s=pc.HAP_S)
    c.wait_out("n1", "A out again once B serves", timeout_s=pc.ROUND_S + pc.HAP_S + 2.0)
    c.close()


def latch():
    lag_s = 1.0
    # alone_grace long enough that C, out, waits for A's and B's look-again
    # rather than coming back alone first.
    c = pc.Cluster(sources=None, peers_over={"alone_grace": "10s"})
    a, b, cc = c["n1"], c["n2"], c["n3"]
    b_seen_by_a = c.add(pc.LaggedView(b.http_port, lag_s))
    a_seen_by_b = c.add(pc.LaggedView(a.http_port, lag_s))
    urls = {"n1": [a.url(), b_seen_by_a.url(), cc.url()],
            "n2": [a_seen_by_b.url(), b.url(), cc.url()],
            "n3": [a.url(), b.url(), cc.url()]}
    c.agents = lambda node, cl: urls[node.name]
    c.start()
    cc.fail()
    c.wait_out("n3", "C out, A and B serve")
    # Past C's just_out: A and B leaving any sooner would bring C back
    # latched (its own look-again).
    pc.wait_past_just_out(cc, "C out for longer than just_out")
    h.expect(b_seen_by_a.served() > 0 and a_seen_by_b.served() > 0,
             "A and B ask each other through the lagged views")

    h.section("A and B fail together; each sees the other as it was 1 s before")
    marks = {n.name: n.lb.log_mark() for n in (a, b)}
    a.fail()
    b.fail()
    h.wait_until(lambda: [n.name for n in (a, b)
                          if n.log_lines("down:", since=marks[n.name])],
                 pc.OUT_S, "both A and B went out (each saw the other serving)",
                 ok=lambda v: len(v) == 2)
    latched = h.wait_until(lambda: [n for n in (a, b)
                                    if pc.guard_state(n.detail()) == "latched"],
                           lag_s + pc.JUST_OUT_S + pc.ROUND_S, "A or B latched",
                           ok=bool, describe=lambda v: [n.name for n in v])
    print(f"   latched: {[n.name for n in latched]}", flush=True)
    for n in latched:
        said = n.log_lines("peer-guard", "latched", since=marks[n.name])
        h.expect(said, f"{n.name}'s log says latched")
        c.wait_in(n.name, f"{n.name} latched: UP in HAProxy", timeout_s=pc.HAP_S)
    # The other may have latched too, a moment later: a node UP in HAProxy
    # is judged by its guard read after that (a latch comes before the
    # reply that brings the node back, and lasts until a restart).
    up = c.up_names()
    for n in (a, b):
        if n.name in up and n not in latched:
            g = pc.guard(n.detail())
            if g.get("state") != "latched":
                raise h.TestFailure(f"{n.name} is UP while failing, but not latched: "
                                    f"{g}")
            h.expect(n.log_lines("peer-guard", "latched", since=marks[n.name]),
                     f"{n.name}'s log says latched")
            print(f"   {n.name} latched too", flush=True)
            latched.append(n)
    c.hold({n.name: "UP" for n in latched}, pc.HOLD_S + 1.0,
           "latched: no automated going out while still failing")
    for n in latched:
        r = n.ask()
        h.expect(r.startswith(b"up"), f"{n.name} latched, still `up`: {r!r}")

    h.section("a restart ends the latch")
    n = latched[0]
    n.lb.restart()
    state = h.wait_until(lambda: pc.guard_state(n.detail()), pc.ROUND_S + 2.0,
                         f"{n.name}'s guard state after its restart", ok=bool)
    h.expect(state != "latched", f"{n.name} still latched after a restart: {state}")
    c.close()


def unreachable_peers():
    closed = h.free_port()
    hang = h.HttpStub(name="peer-hang")
    hang.set("/status", hang=True)
    e503 = h.HttpStub(name="peer-503")
    e503.set("/status", 503, "unavailable\n")
    junk = h.HttpStub(name="peer-junk")
    junk.set("/status", 200, "<html>not json</html>\n", content_type="application/json")
    agents = [f"http://127.0.0.1:{closed}", hang.url("").rstrip("/"),
              e503.url("").rstrip("/"), junk.url("").rstrip("/")]
    c = pc.Cluster(names=("n1",), agents=lambda node, cl: agents,
                   probes={pc.PROBE: {}, "half": {"on_crit": "50%"}})
    for s in (hang, e503, junk):
        c.add(s)
    c.start()
    a = c["n1"]

    h.section("a weight reduction is not guarded")
    mark = a.lb.log_mark()
    a.fail("half")
    c.hap.wait_status("be", "n1", "UP", pc.OUT_S, "n1 at weight 50 in HAProxy",
                      ok=lambda st: st["weight"] == "50")
    r = a.ask()
    h.expect(r.startswith(b"up 50% #half: "), f"the reduced weight's reply: {r!r}")
    h.expect_equal(a.log_lines("peer-guard", since=mark), [], "nothing from the guard")
    t = h.wait_until(lambda: pc.this_node(pc.lb_rows(a.detail())[0]), pc.ROUND_S + 2.0,
                     "the detail showing weight 50 of HAProxy's",
                     ok=lambda t: t.get("weight") == 50)
    h.expect(t.get("initial_weight") == 100 and not t.get("warnings"),
             f"the configured weight is still 100, nothing to warn about: {t}")
    a.heal("half")
    c.hap.wait_status("be", "n1", "UP", pc.OUT_S, "n1 back at weight 100",
                      ok=lambda st: st["weight"] == "100")

    h.section("the node fails; no peer reachable: it stays in")
    mark = a.lb.log_mark()
    a.fail()
    r = pc.wait_held(a)
    print(f"   held: {r!r}", flush=True)
    c.hold({"n1": "UP"}, pc.HOLD_S, "A held in: no peer reachable")
    warned = a.hold_warnings(mark)
    h.expect(len(warned) == 1, f"one hold warning, saw {len(warned)}:\n" + "\n".join(warned))
    doc = a.detail()
    h.expect_equal((pc.guard_state(doc), pc.other_serving(doc)), ("holding", False),
                   "A's guard while held")
    rows = {u: pc.peer_row(doc, u) for u in agents}
    for u, row in rows.items():
        h.expect(pc.peer_serving(row) is False and pc.peer_is_self(row) is False and
                 isinstance(pc.peer_why_not(row), str) and pc.peer_why_not(row),
                 f"peer {u}: not serving, with a why: {row}")
    why = {u: pc.peer_why_not(r) for u, r in rows.items()}
    h.expect(re.search(r"refused", why[agents[0]], re.I),
             f"nothing listening: {why[agents[0]]!r}")
    h.expect(re.search(r"time", why[agents[1]], re.I), f"never answered: {why[agents[1]]!r}")
    h.expect("503" in why[agents[2]], f"HTTP 503: {why[agents[2]]!r}")

    h.section("the detail shows this node's server as HAProxy sees it")
    lbs = pc.lb_rows(doc)
    h.expect(len(lbs) == 1 and pc.lb_ok(lbs[0]) is True and lbs[0].get("error") is None,
             f"one load balancer, answering: {lbs}")
    t = pc.this_node(lbs[0])
    h.expect(t.get("found") is True and t.get("backend") == "be" and t.get("server") == "n1"
             and t.get("status") == "UP" and t.get("weight") == 100 and
             t.get("initial_weight") == 100 and t.get("agent_status") == "L7OK" and
             not t.get("warnings"), f"n1 as HAProxy shows it: {t}")
    hang.set("/status", 503)        # releases the hanging requests
    c.close()


def drain_held():
    closed = h.free_port()
    c = pc.Cluster(names=("n1",), agents=lambda node, cl: [f"http://127.0.0.1:{closed}"],
                   probes={pc.PROBE: {"on_crit": "drain"}})
    c.start()
    a = c["n1"]
    mark = a.lb.log_mark()
    a.fail()
    r = pc.wait_held(a)
    print(f"   held: {r!r}", flush=True)
    h.expect(r.startswith(b"up #") or r.startswith(b"up 100% #"),
             f"held at full weight when the rules drain, never 0%: {r!r}")
    h.hold_for(lambda: c.stat("n1"), pc.HOLD_S, "UP at weight 100 in HAProxy",
               ok=lambda st: st["status"] == "UP" and st["weight"] == "100",
               describe=h.describe_stat)
    warned = a.hold_warnings(mark)
    h.expect(len(warned) == 1, f"one hold warning, saw {len(warned)}:\n" + "\n".join(warned))
    c.close()


def impostor():
    fake = h.HttpStub(name="peer-impostor")
    c = pc.Cluster(names=("n1",), sources=None,
                   agents=lambda node, cl: [fake.url("").rstrip("/")])
    c.add(fake)
    c.start()
    a = c["n1"]

    def answer_as(node_id):
        doc = a.public()
        doc["node_id"] = node_id
        for svc in doc["services"]:
            svc["server"] = node_id
        fake.set_json("/status", doc)

    def row():
        return pc.peer_rows(a.detail())[0]

    answer_as("n9")
    h.wait_until(row, pc.ROUND_S + 2.0, "the peer seen as n9, serving",
                 ok=lambda r: r.get("node_id") == "n9" and pc.peer_serving(r) is True)
    answer_as("n8")
    r = h.wait_until(row, pc.ROUND_S + 2.0, "the same address answering as n8: not serving",
                     ok=lambda r: pc.peer_serving(r) is False)
    h.expect(r.get("node_id") == "n8" and "n9" in (pc.peer_why_not(r) or ""),
             f"why: it answers as another node than the first seen there: {r}")
    mark = a.lb.log_mark()
    a.fail()
    pc.wait_held(a)
    c.hold({"n1": "UP"}, pc.HOLD_S, "A held in: its only peer answers as another node")
    h.expect(len(a.hold_warnings(mark)) == 1, "one hold warning")
    c.close()


def haproxy_maint():
    c = pc.Cluster(sources=("tcp",), weights={"n3": 5})
    c.start()
    n1, n2, n3 = c["n1"], c["n2"], c["n3"]
    hap = c.hap

    def mine(n):
        return pc.this_node(pc.lb_rows(n.detail())[0])

    h.section("a server with initial weight 5: a warning in its node's detail")
    t = h.wait_until(lambda: mine(n3), pc.ROUND_S + 2.0, "n3's server in its detail",
                     ok=lambda t: t.get("found") is True)
    h.expect(t.get("weight") == 5 and t.get("initial_weight") == 5 and
             any("weight" in w.lower() for w in t.get("warnings") or []),
             f"n3's server with weight 5, and a warning about it: {t}")

    h.section("an operator's MAINT on n2: a warning in n2's detail")
    hap.set_server_state("be", "n2", "maint")
    c.wait_status("n2", "MAINT", pc.HAP_S, "n2 MAINT by the operator")
    t = h.wait_until(lambda: mine(n2), pc.ROUND_S + 2.0, "n2's detail shows MAINT",
                     ok=lambda t: (t.get("status") or "").startswith("MAINT"))
    h.expect(any("maint" in w.lower() for w in t.get("warnings") or []),
             f"a warning about a MAINT lbagent did not ask for: {t}")
    h.expect(n2.public()["serving"] is True, "n2's own lbagent says serving")

    h.section("n3 out; n1 fails and stays in (n2 is MAINT in HAProxy)")
    n3.fail()
    c.wait_out("n3", "n3 out (n1 serves)")
    mark = n1.lb.log_mark()
    n1.fail()
    pc.wait_held(n1)
    c.hold({"n1": "UP", "n2": "MAINT", "n3": "DOWN"}, pc.HOLD_S, "n1 held in")
    warned = n1.hold_warnings(mark)
    h.expect(len(warned) == 1, f"one hold warning, saw {len(warned)}:\n" + "\n".join(warned))
    row = pc.peer_row(n1.detail(), n2.url())
    h.expect(pc.peer_serving(row) is False and "MAINT" in (pc.peer_why_not(row) or ""),
             f"n1 sees n2 not serving, MAINT in HAProxy: {row}")

    h.section("n2 ready again: n1 goes out")
    hap.set_server_state("be", "n2", "ready")
    c.wait_in("n2", "n2 UP when the operator readies it", timeout_s=pc.HAP_S)
    c.wait_out("n1", "n1 out once n2 serves", timeout_s=pc.ROUND_S + pc.HAP_S + 2.0)
    c.close()


SCENARIOS = [
    ("1. one node fails; every node lists all three, itself included", one_fails),
    ("2. all fail one after the other: the last is held in", fail_in_turn),
    ("3. all fail at the same moment: at least one stays in", fail_together),
    ("4. out alone: back after alone_grace, out again when another serves", alone_grace),
    ("5. A and B out together, C out: the look-again latches", latch),
    ("6. unreachable peers are not serving", unreachable_peers),
    ("7. a peer MAINT in HAProxy is not serving; this node's server warnings", haproxy_maint),
    ("8. drain by the rules is held too, at full weight", drain_held),
    ("9. a peer answering as another node is not serving", impostor),
]


h.run(lambda: pc.run_scenarios(SCENARIOS))
