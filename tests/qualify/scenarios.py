"""The scenarios. Each is a function of a Run, with its expected outcome
as its docstring (the report quotes it); it acts on the deployment while
the workload and the sampler run, and records its verdicts with
run.check(). Waits are liveness bounds (generous); what is measured is
reported, not asserted, except where a promise is a time (markers, reply
deadline: the sampler's invariants)."""

import time

import harness as h
import fleet as fleetdep
from deploy import Deployment
from invariants import Sampler, Timeline, check_planned, serving
from workload import Workload


def _out(status, weight):
    return not serving(status, weight)


def _full(status, weight):
    return status == "UP" and weight == 100


def _drained(status, weight):
    return status.startswith("DRAIN") or (status.startswith("UP") and weight == 0)


class Run:
    def __init__(self, name, t, agent_over=None, deploy=None, deployment=None):
        """deployment: the deployment's class (Deployment, three nodes,
        unless the scenario names another, as fleet does)."""
        self.name = name
        self.t = t
        self.tl = Timeline()
        self.dep = (deployment or Deployment)(t, self.tl.log, agent_over=agent_over,
                                              **(deploy or {}))
        self.sampler = Sampler(self.dep, self.tl)
        self.workload = None
        self.checks = []            # (ok, text)
        self.metrics = {}
        self.planned = []           # (start, end, what)
        self.t_fault = None
        self.t_heal = None
        self.error = None
        self.full = False

    # -- life cycle
    def start(self):
        self.tl.log({"kind": "phase", "what": "deployment starting"})
        self.dep.start()
        self.tl.log({"kind": "phase", "what": "deployment up: every server UP/100 on both"})
        self.sampler.start()
        self.workload = Workload(self.dep.fe_ports, self.t,
                                 **getattr(self.dep, "workload", {}))
        self.workload.start()
        self.settle(1.5, "warm-up")

    def stop(self):
        if self.workload is not None:
            self.workload.stop()
        self.sampler.stop()
        check_planned(self.sampler, self.requests(), self.planned, self.tl.t0)

    def close(self):
        self.dep.close()

    def requests(self):
        return self.workload.snapshot() if self.workload else []

    # -- helpers for the scenarios
    def note(self, what):
        self.tl.log({"kind": "phase", "what": what})
        h.section(f"{self.name}: {what}")

    def settle(self, seconds, what):
        self.note(f"{what} ({seconds:g} s)")
        time.sleep(seconds)

    def check(self, ok, text):
        self.checks.append((bool(ok), text))
        self.tl.log({"kind": "check", "ok": bool(ok), "what": text})
        return bool(ok)

    def wait(self, fn, timeout_s, what):
        """Polls fn() until true; records a failed check on timeout.
        Returns when it became true (monotonic) or None."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if fn():
                    return time.monotonic()
            except Exception:  # noqa: BLE001 - not yet
                pass
            if time.monotonic() > deadline:
                self.check(False, f"{what} (not within {timeout_s:g} s: "
                           f"{self.dep.describe()})")
                return None
            time.sleep(0.05)

    def out_everywhere(self, node, since):
        return self.sampler.first_all(node, _out, since)

    def wait_out(self, node, since, what=None):
        t = self.t
        bound = (t.probe_interval_ms + t.probe_timeout_ms + t.down_after_ms +
                 4 * t.peer_timeout_ms + 2 * t.agent_inter_ms) / 1000.0 + 10.0
        got = self.wait(lambda: self.out_everywhere(node, since), bound,
                        what or f"{node} out on both load balancers")
        return self.out_everywhere(node, since) if got else None

    def wait_back(self, node, since, what=None):
        t = self.t
        bound = (t.up_after_ms + t.ramp_ms + 2 * t.agent_inter_ms) / 1000.0 + 15.0
        got = self.wait(lambda: self.sampler.first_all(node, _full, since), bound,
                        what or f"{node} back UP at full weight on both load balancers")
        return self.sampler.first_all(node, _full, since) if got else None

    def failed_after(self, t, node=None):
        return [r for r in self.requests() if r.start >= t and r.end is not None and not r.ok and
                (node is None or r.node == node or r.node is None)]

    def fault(self, what):
        self.t_fault = time.monotonic()
        self.note(what)

    def heal(self, what):
        self.t_heal = time.monotonic()
        self.note(what)


# ------------------------------------------------------------ scenarios

def dependency_fails(run):
    """n1's dependency fails: n1 leaves both load balancers after
    down_after; no client request fails that started after the detection
    plus one agent-inter; n2 and n3 stay UP; once healed, n1 comes back no
    sooner than up_after, with the ramp (weights between 0 and 100) visible
    in HAProxy, and ends UP at full weight."""
    d, t, s = run.dep, run.t, run.sampler
    run.fault("n1's dependency fails")
    d["n1"].fail()
    out = run.wait_out("n1", run.t_fault)
    if out is None:
        return
    run.metrics["detection_ms"] = int((out - run.t_fault) * 1000)
    run.check(out - run.t_fault >= t.down_after_ms / 1000.0,
              f"n1 left no sooner than down_after ({t.down_after_ms} ms): after "
              f"{run.metrics['detection_ms']} ms")
    run.settle(3.0, "n1 out, the workload on n2 and n3")
    late = run.failed_after(out + t.agent_inter_ms / 1000.0)
    run.check(not late, f"no request failed that started after the detection + one "
              f"agent-inter ({len(late)} did" + (": " + late[0].describe(run.tl.t0) if late
                                                  else "") + ")")
    for n in ("n2", "n3"):
        seen = s.seen(n, since=run.t_fault)
        run.check(all(serving(st, w) for _, _, st, w, _ in seen),
                  f"{n} stayed UP on both load balancers throughout")
    run.heal("n1's dependency heals")
    d["n1"].heal()
    back = run.wait_back("n1", run.t_heal)
    if back is None:
        return
    first_in = s.first_all("n1", serving, run.t_heal)
    run.metrics["back_ms"] = int((back - run.t_heal) * 1000)
    run.metrics["first_in_ms"] = int((first_in - run.t_heal) * 1000)
    run.check(first_in - run.t_heal >= t.up_after_ms / 1000.0,
              f"n1 came back no sooner than up_after ({t.up_after_ms} ms): after "
              f"{run.metrics['first_in_ms']} ms")
    ramp = sorted({w for _, _, st, w, _ in s.seen("n1", since=run.t_heal)
                   if st.startswith("UP") and 0 < w < 100})
    run.metrics["ramp_weights"] = ramp
    run.check(ramp, f"the ramp is visible in HAProxy's weights for n1: {ramp}")
    served = [r for r in run.requests() if r.node == "n1" and r.ok and r.start >= run.t_heal]
    run.check(served, "n1 serves client requests again")
    run.settle(1.0, "n1 back")


def all_fail(run):
    """Every node's dependency fails at once: on each load balancer at
    least one server stays UP with a weight above 0 the whole time (the
    peer guard holds the last one in); after healing, all three are back
    UP at full weight."""
    d, t = run.dep, run.t
    run.fault("every dependency fails")
    for n in d.nodes:
        n.fail()
    hold = (t.probe_interval_ms + t.down_after_ms + 4 * t.peer_timeout_ms +
            t.just_out_ms + 2 * t.agent_inter_ms) / 1000.0 + 4.0
    run.settle(hold, "all failing: never zero in rotation")
    outs = [n.name for n in d.nodes if run.out_everywhere(n.name, run.t_fault)]
    run.metrics["out_while_all_fail"] = outs
    run.check(len(outs) < 3, f"not every node out: out were {outs or 'none'}")
    run.heal("every dependency heals")
    for n in d.nodes:
        n.heal()
    for n in d.nodes:
        run.wait_back(n.name, run.t_heal)
    run.metrics["back_ms"] = int((time.monotonic() - run.t_heal) * 1000)


def two_fail_together(run):
    """n1's and n2's dependencies fail at the same moment: n3 keeps serving
    on both load balancers throughout; n1 and n2 both leave (n3 serves);
    no request fails that started after both left plus one agent-inter;
    after healing both come back at full weight."""
    d, t, s = run.dep, run.t, run.sampler
    run.fault("n1 and n2 fail together")
    d["n1"].fail()
    d["n2"].fail()
    o1 = run.wait_out("n1", run.t_fault)
    o2 = run.wait_out("n2", run.t_fault)
    if o1 is None or o2 is None:
        return
    both = max(o1, o2)
    run.metrics["detection_ms"] = int((both - run.t_fault) * 1000)
    run.settle(3.0, "n3 alone")
    seen = s.seen("n3", since=run.t_fault)
    run.check(all(serving(st, w) for _, _, st, w, _ in seen),
              "n3 stayed UP on both load balancers throughout")
    late = run.failed_after(both + t.agent_inter_ms / 1000.0)
    run.check(not late, f"no request failed that started after both left + one "
              f"agent-inter ({len(late)} did)")
    run.heal("n1 and n2 heal")
    d["n1"].heal()
    d["n2"].heal()
    for n in ("n1", "n2"):
        run.wait_back(n, run.t_heal)
    run.metrics["back_ms"] = int((time.monotonic() - run.t_heal) * 1000)


def _drain_wait(run, node, t_on):
    """`lbagentctl drain on --wait`, as the docs tell an operator, then
    the load balancers' own word on it: when it returns, both show the
    server drained with no session left. Returns when it returned, or
    None."""
    rc = _ctl(run, node, "drain", "on", "--wait", "--reason", "qualify planned drain")
    t = time.monotonic()
    if rc != 0:
        return None
    d = run.dep
    seen = {hp.qname: d.status(node, hp) for hp in d.haps}
    run.check(all(_drained(st, w) and cur == 0 for st, w, cur in seen.values()),
              f"when `drain on --wait` returned, both load balancers showed {node} "
              f"drained with no session: {seen}")
    return t


def _ctl(run, node, *args):
    rc, out, err = run.dep[node].ctl(*args)
    run.tl.log({"kind": "action", "node": node, "what": "lbagentctl " + " ".join(args),
                "rc": rc, "out": (out + err).strip().replace("\n", " | ")[:300]})
    run.check(rc == 0, f"`lbagentctl {' '.join(args)}` on {node} succeeded (rc {rc})")
    return rc


def planned_drain(run):
    """The operator drains n1 the way the docs say (`lbagentctl drain on
    --wait`), with long requests in flight on n1, then undrains it: the
    drain shows on both within 1 s + one agent-inter; when --wait returns
    both load balancers show n1 drained with no session; every request
    that overlapped the operation succeeds, the long ones in flight on n1
    complete; n1 comes back UP."""
    d, s = run.dep, run.sampler
    app = d["n1"].app
    run.wait(lambda: app.long_in_flight() > 0, 30.0, "a long request in flight on n1")
    in_flight_before = app.long_in_flight()
    start = time.monotonic()
    run.note(f"drain on n1 ({in_flight_before} long requests in flight on it)")
    s.expect_marker("n1", "drain on", lambda st, w: _drained(st, w), start)
    t_empty = _drain_wait(run, "n1", start)
    if t_empty is None:
        return
    run.metrics["drain_wait_ms"] = int((t_empty - start) * 1000)
    long_n1 = [r for r in run.requests() if r.kind == "long" and r.node == "n1" and
               r.start < start and r.end is not None and r.end > start]
    run.metrics["long_in_flight_completed"] = len(long_n1)
    run.check(long_n1 and all(r.ok for r in long_n1),
              f"the long requests in flight on n1 completed: {len(long_n1)}, "
              f"{sum(1 for r in long_n1 if r.ok)} succeeded")
    run.settle(1.0, "n1 drained")
    t_off = time.monotonic()
    s.expect_marker("n1", "drain off", lambda st, w: st.startswith("UP") and w > 0, t_off)
    _ctl(run, "n1", "drain", "off")
    back = run.wait_back("n1", t_off)
    end = time.monotonic()
    run.planned.append((start, end, "the planned drain of n1"))
    if back:
        run.metrics["back_ms"] = int((back - t_off) * 1000)
    run.settle(1.0, "n1 back")


def planned_maint(run):
    """Maintenance on n1 the way the docs have it: `lbagentctl drain on
    --wait` with long requests in flight (when it returns, both load
    balancers show no session on n1), then `lbagentctl maint on`;
    afterwards `maint off` and `drain off`. Each marker shows on both within 1 s + one agent-inter;
    every request that overlapped the operation succeeds, the long ones in
    flight on n1 complete; n1 comes back UP."""
    d, s = run.dep, run.sampler
    app = d["n1"].app
    run.wait(lambda: app.long_in_flight() > 0, 30.0, "a long request in flight on n1")
    start = time.monotonic()
    run.note("drain on n1, then maint once empty")
    s.expect_marker("n1", "drain on", lambda st, w: _drained(st, w), start)
    t_empty = _drain_wait(run, "n1", start)
    if t_empty is None:
        return
    run.metrics["drain_wait_ms"] = int((t_empty - start) * 1000)
    t_maint = time.monotonic()
    s.expect_marker("n1", "maint on", lambda st, w: st.startswith("MAINT"), t_maint)
    if _ctl(run, "n1", "maint", "on", "--reason", "qualify maintenance") != 0:
        return
    run.settle(2.0, "n1 in maintenance")
    long_n1 = [r for r in run.requests() if r.kind == "long" and r.node == "n1" and
               r.start < start and r.end is not None and r.end > start]
    run.check(long_n1 and all(r.ok for r in long_n1),
              f"the long requests in flight on n1 completed: {len(long_n1)}, "
              f"{sum(1 for r in long_n1 if r.ok)} succeeded")
    t_off = time.monotonic()
    _ctl(run, "n1", "maint", "off")
    _ctl(run, "n1", "drain", "off")
    s.expect_marker("n1", "maint and drain off", lambda st, w: st.startswith("UP") and w > 0,
                    t_off)
    back = run.wait_back("n1", t_off)
    run.planned.append((start, time.monotonic(), "the planned maintenance of n1"))
    if back:
        run.metrics["back_ms"] = int((back - t_off) * 1000)
    run.settle(1.0, "n1 back")


def agent_sigkill(run):
    """kill -9 and restart of n1's lbagent, three times. (a) while drained
    (`lbagentctl drain on`): HAProxy keeps n1 drained while the agent is
    gone, after the restart n1 is still drained (nothing forgotten), no
    client request fails; undrained, n1 comes back UP. (b) while out by its
    rules (its dependency failing): n1 stays out across the kill and the
    restart. (c) while ramping back: the ramp continues, n1's weight only
    rises until it is back at full weight."""
    d, s, t = run.dep, run.sampler, run.t
    start = time.monotonic()
    s.expect_marker("n1", "drain on", lambda st, w: _drained(st, w), start)
    if _ctl(run, "n1", "drain", "on", "--reason", "qualify drain before kill") != 0:
        return
    if run.wait(lambda: d.everywhere("n1", lambda st, w, c: _drained(st, w)), 10.0,
                "n1 drained on both") is None:
        return
    lb = d["n1"].lb
    s.paused.add("n1")
    run.fault("kill -9 n1's lbagent")
    lb.kill()
    run.settle(2 * t.agent_inter_ms / 1000.0 + 1.0, "n1's lbagent dead")
    dead = s.seen("n1", since=run.t_fault)
    run.check(all(_drained(st, w) for _, _, st, w, _ in dead),
              "n1 stayed drained on both while its lbagent was dead")
    run.note("n1's lbagent starts again")
    lb.start()
    t_up = time.monotonic()
    s.paused.discard("n1")
    run.settle(3.0, "n1's lbagent back")
    after = s.seen("n1", since=t_up)
    run.check(after and all(_drained(st, w) for _, _, st, w, _ in after),
              "n1 still drained on both after the restart")
    reply = lb.ask().decode(errors="replace").strip()
    run.check(reply.startswith("drain"), f"n1's reply after the restart: {reply!r}")
    t_off = time.monotonic()
    s.expect_marker("n1", "drain off", lambda st, w: st.startswith("UP") and w > 0, t_off)
    _ctl(run, "n1", "drain", "off")
    run.wait_back("n1", t_off)
    run.planned.append((start, time.monotonic(), "drain, kill -9, restart, undrain of n1"))
    # Requests that started inside the planned window end before (b)'s fault.
    run.settle(1.0, "n1 back")

    # (b) while down: out by its rules, it must stay out across the kill.
    # The table's detection and recovery are (b)'s, the phase whose
    # requests fail (before n1 is out).
    run.fault("(b) n1's dependency fails; kill -9 while it is out")
    t_b = run.t_fault
    d["n1"].fail()
    if run.wait_out("n1", t_b) is None:
        return
    t_out = run.out_everywhere("n1", t_b)
    run.metrics["detection_ms"] = int((t_out - t_b) * 1000)
    _kill_restart(run, "n1", "(b)")
    t_r = time.monotonic()
    run.settle(3.0, "(b) n1's lbagent back, still failing")
    run.check(_stayed(run, "n1", _out, t_out),
              "(b) n1 stayed out on both across the kill and restart")
    run.check(_stayed(run, "n1", _out, t_r), "(b) n1 still out after the restart")

    # (c) while ramping: the ramp continues, never back to full at once,
    # never out.
    run.note("(c) n1 heals; kill -9 during its ramp")
    t_c = time.monotonic()
    d["n1"].heal()
    ramping = run.wait(lambda: s.first_all("n1", lambda st, w: st.startswith("UP") and
                                           0 < w < 100, t_c),
                       (t.up_after_ms + t.ramp_ms) / 1000.0 + 15.0, "(c) n1 ramping on both")
    if ramping is None:
        return
    _kill_restart(run, "n1", "(c)")
    t_r = time.monotonic()
    back = run.wait_back("n1", t_r)
    if back is None:
        return
    for hp in ("lb1", "lb2"):
        ws = [w for _, _, st, w, _ in s.seen("n1", since=ramping, until=back, lb=hp)]
        run.check(all(a <= b for a, b in zip(ws, ws[1:])) and ws and min(ws) > 0,
                  f"(c) {hp}: n1's weight only rose across the kill during the ramp: "
                  f"{sorted(set(ws))}")
    after = {w for _, _, st, w, _ in s.seen("n1", since=t_r, until=back)}
    run.metrics["ramp_weights_after_restart"] = sorted(after)


def _kill_restart(run, node, label):
    lb = run.dep[node].lb
    run.sampler.paused.add(node)
    run.tl.log({"kind": "action", "node": node, "what": f"{label} kill -9 its lbagent"})
    lb.kill()
    time.sleep(run.t.agent_inter_ms / 1000.0 * 2)
    run.tl.log({"kind": "action", "node": node, "what": f"{label} its lbagent starts again"})
    lb.start()
    run.sampler.paused.discard(node)


def hung_probe(run):
    """n1's dependency is black-holed (its probe connects and never gets
    an answer): lbagent keeps answering its agent port on time throughout
    (the reply-deadline invariant); n1 goes out on both (the probe times
    out); once the black hole is lifted n1 comes back at full weight."""
    d, s = run.dep, run.sampler
    run.fault("n1's dependency black-holed")
    d["n1"].dep.set("blackhole")
    out = run.wait_out("n1", run.t_fault)
    if out is not None:
        run.metrics["detection_ms"] = int((out - run.t_fault) * 1000)
    run.settle(4.0, "n1's probe hung")
    run.heal("the black hole lifted")
    d["n1"].dep.set("pass")
    back = run.wait_back("n1", run.t_heal)
    if back:
        run.metrics["back_ms"] = int((back - run.t_heal) * 1000)
    st = [r for r in s.replies if r[1] == "n1" and r[0] >= run.t_fault]
    run.metrics["n1_replies_during"] = len(st)
    run.metrics["n1_reply_max_ms"] = round(max((r[2] for r in st), default=0), 1)
    run.check(st, f"n1 was asked while hung: {len(st)} replies, slowest "
              f"{run.metrics['n1_reply_max_ms']} ms")


def _stayed(run, node, ok, since, until=None, lb=None):
    seen = run.sampler.seen(node, since=since, until=until, lb=lb)
    return bool(seen) and all(ok(st, w) for _, _, st, w, _ in seen)


def operator_runtime_maint(run):
    """An operator puts n2 in MAINT on lb1 and sets n3's weight to 50 on
    lb2 through the Runtime API; then n1 fails and heals (lbagent takes it
    out and brings it back with its ramp) and n2's lbagent is restarted:
    n2 stays MAINT on lb1 and n3 keeps weight 50 on lb2 throughout (never
    undone by lbagent), and lb1 never runs out of servers (n3 serves)."""
    d, s = run.dep, run.sampler
    lb1, lb2 = d.hap("lb1"), d.hap("lb2")
    run.note("the operator: n2 MAINT on lb1, n3 weight 50 on lb2")
    lb1.set_server_state("be", "n2", "maint")
    out = lb2.cmd("set weight be/n3 50")
    run.check(not out.strip(), f"`set weight be/n3 50` accepted: {out.strip()!r}")
    run.tl.log({"kind": "action", "what": "operator: lb1 n2 maint, lb2 n3 weight 50"})
    if run.wait(lambda: d.status("n2", lb1)[0].startswith("MAINT") and
                d.status("n3", lb2)[1] == 50, 5.0, "the operator's settings shown") is None:
        return
    s.expect_operator("lb1", "n2", "MAINT", lambda st, w: st.startswith("MAINT"))
    s.expect_operator("lb2", "n3", "weight 50", lambda st, w: w == 50)
    run.fault("n1's dependency fails")
    d["n1"].fail()
    out = run.wait_out("n1", run.t_fault)
    if out:
        run.metrics["detection_ms"] = int((out - run.t_fault) * 1000)
    run.settle(2.0, "n1 out")
    run.heal("n1's dependency heals")
    d["n1"].heal()
    t = run.t
    run.wait(lambda: s.first_all("n1", lambda st, w: st.startswith("UP") and w > 0,
                                 run.t_heal),
             (t.up_after_ms + t.ramp_ms) / 1000.0 + 15.0, "n1 back on both")
    run.settle(t.ramp_ms / 1000.0 + 1.0, "n1's ramp")
    run.note("n2's lbagent restarted")
    s.paused.add("n2")
    d["n2"].lb.restart()
    s.paused.discard("n2")
    run.settle(3.0, "n2's lbagent back")
    run.check(_stayed(run, "n2", lambda st, w: st.startswith("MAINT"), run.t_fault, lb="lb1"),
              "n2 stayed MAINT on lb1 throughout")
    run.check(_stayed(run, "n3", lambda st, w: w == 50, run.t_fault, lb="lb2"),
              "n3 kept weight 50 on lb2 throughout")
    for o in s.operators:
        o.active = False


def flapping_dependency(run):
    """n1's dependency flips between failing and passing, each phase longer
    than down_after and shorter than up_after: n1 goes out once and stays
    out while it flaps (at most one transition per load balancer), then
    comes back once it passes for good."""
    d, t = run.dep, run.t
    phase_s = (t.down_after_ms + t.up_after_ms) / 2000.0
    total_s = 60.0 if run.full else 12.0
    run.fault(f"n1's dependency flaps every {phase_s:g} s for {total_s:g} s")
    end = time.monotonic() + total_s
    flips = 0
    while time.monotonic() < end:
        if flips % 2 == 0:
            d["n1"].fail()
        else:
            d["n1"].heal()
        flips += 1
        time.sleep(phase_s)
    d["n1"].fail()
    t_end = time.monotonic()
    run.metrics["flips"] = flips
    out = run.out_everywhere("n1", run.t_fault)
    if out:
        run.metrics["detection_ms"] = int((out - run.t_fault) * 1000)
    for lb in ("lb1", "lb2"):
        seen = run.sampler.seen("n1", since=run.t_fault, until=t_end, lb=lb)
        changes = sum(1 for a, b in zip(seen, seen[1:])
                      if serving(a[2], a[3]) != serving(b[2], b[3]))
        run.metrics[f"transitions_{lb}"] = changes
        run.check(changes <= 1, f"{lb}: n1 changed between in and out {changes} times "
                  f"while flapping (at most 1)")
    run.heal("n1's dependency passes for good")
    d["n1"].heal()
    back = run.wait_back("n1", run.t_heal)
    if back:
        run.metrics["back_ms"] = int((back - run.t_heal) * 1000)


def agent_frozen(run):
    """n1's lbagent is frozen (SIGSTOP) for several agent-inters, then
    thawed (SIGCONT): HAProxy keeps n1 as it was (UP at full weight) while
    its agent checks time out, no client request fails, and once thawed the
    agent answers on time again. The report records what an operator sees
    in HAProxy meanwhile (the agent check's status)."""
    d, s, t = run.dep, run.sampler, run.t
    lb = d["n1"].lb
    s.paused.add("n1")
    run.fault("SIGSTOP n1's lbagent")
    os_kill(lb.pid, "SIGSTOP")
    freeze_s = max(5.0, 6 * t.agent_inter_ms / 1000.0)
    seen_agent = set()
    end = time.monotonic() + freeze_s
    while time.monotonic() < end:
        for hp in d.haps:
            try:
                r = hp.stat("be", "n1")
                seen_agent.add(f"{hp.qname}: {r['status']} agent {r.get('agent_status')}")
            except Exception:  # noqa: BLE001 - sampled again
                pass
        time.sleep(0.25)
    run.metrics["seen_while_frozen"] = sorted(seen_agent)
    run.heal("SIGCONT n1's lbagent")
    os_kill(lb.pid, "SIGCONT")
    t_thaw = time.monotonic()
    run.check(_stayed(run, "n1", _full, run.t_fault, t_thaw),
              "n1 stayed UP at full weight on both while its lbagent was frozen")
    ok = run.wait(lambda: lb.ask(timeout_s=1.0).endswith(b"\n"), 10.0,
                  "n1's lbagent answers again")
    s.paused.discard("n1")
    if ok:
        run.metrics["answers_after_thaw_ms"] = int((ok - t_thaw) * 1000)
    run.settle(3.0, "n1's lbagent thawed")
    run.planned.append((run.t_fault, time.monotonic(), "n1's lbagent frozen"))


def degraded(run):
    """n1's dependency turns slow (its /health above the probe's
    warn_latency, on_warn = 50%): after degrade_after n1 stays UP with
    weight 50 on both load balancers and its share of short requests drops
    to about half the others' (between 0.3 and 0.7 of their mean); once
    fast again it goes back to full weight."""
    d, t, s = run.dep, run.t, run.sampler
    run.fault(f"n1's dependency slows to {t.slow_health_ms} ms")
    d["n1"].degrade(t.slow_health_ms)
    half = run.wait(lambda: s.first_all("n1", lambda st, w: st.startswith("UP") and w == 50,
                                        run.t_fault), 15.0, "n1 at weight 50 on both")
    if half is None:
        return
    run.metrics["detection_ms"] = int((half - run.t_fault) * 1000)
    a = time.monotonic()
    run.settle(8.0, "n1 at half weight")
    b = time.monotonic()
    run.check(_stayed(run, "n1", lambda st, w: st.startswith("UP") and w == 50, a, b),
              "n1 stayed UP at weight 50 on both while slow")
    share = {}
    for r in run.requests():
        if r.kind == "short" and r.ok and a <= r.start <= b:
            share[r.node] = share.get(r.node, 0) + 1
    others = (share.get("n2", 0) + share.get("n3", 0)) / 2.0
    ratio = share.get("n1", 0) / others if others else 0.0
    run.metrics["short_requests_by_node"] = dict(sorted(share.items()))
    run.metrics["share_ratio"] = round(ratio, 2)
    run.check(0.3 <= ratio <= 0.7, f"n1's share of short requests is about half the "
              f"others': {ratio:.2f} of their mean")
    run.heal("n1's dependency fast again")
    d["n1"].degrade(0)
    back = run.wait_back("n1", run.t_heal)
    if back:
        run.metrics["back_ms"] = int((back - run.t_heal) * 1000)


def shadow_mode(run):
    """Every lbagent in shadow mode ([agent] mode = shadow) through a week's
    worth of failures, compressed: n1 fails and heals twice (three times
    with --full), then every dependency fails at once and heals. HAProxy's
    state never changes (every server UP at full weight on both,
    throughout), and each node's log and metrics show the changes it would
    have made (n1: a would-be `down` reply for each failure)."""
    d, t = run.dep, run.t
    fail_s = (t.probe_interval_ms + t.down_after_ms) / 1000.0 + 1.5
    heal_s = (t.up_after_ms + t.ramp_ms) / 1000.0 + 1.0
    cycles = 3 if run.full else 2
    run.fault(f"n1 fails and heals {cycles} times, in shadow mode")
    for i in range(cycles):
        d["n1"].fail()
        time.sleep(fail_s)
        d["n1"].heal()
        time.sleep(heal_s)
    run.note("every dependency fails, in shadow mode")
    for n in d.nodes:
        n.fail()
    time.sleep(fail_s + 1.0)
    for n in d.nodes:
        n.heal()
    time.sleep(heal_s)
    run.t_heal = time.monotonic()
    for n in d.nodes:
        run.check(_stayed(run, n.name, _full, run.t_fault),
                  f"{n.name} stayed UP at full weight on both throughout")
    for n in d.nodes:
        log = n.lb.log()
        would = [ln for ln in log.splitlines() if 'shadow: would reply "down' in ln]
        run.metrics[f"{n.name}_would_down"] = len(would)
        want = cycles if n.name == "n1" else 1
        run.check(len(would) >= want or (n.name != "n1" and
                                         "peer-guard" in log and "shadow" in log),
                  f"{n.name}'s log shows {len(would)} would-be `down` replies "
                  f"(at least {want}; a node held in by the peer guard shows the hold)")
        m = n.metrics()
        run.check("lbagent_shadow" in m, f"{n.name}'s metrics show lbagent_shadow")


shadow_mode.agent_over = {"mode": "shadow"}


def _agent_no_word(d, node):
    """Every load balancer's last agent check of node carried no word of
    lbagent's (a reply that is only a `# comment`): HAProxy says CHECKED,
    "No status change"."""
    return all(hp.stat("be", node).get("agent_status") == "CHECKED" for hp in d.haps)


def kill_switch(run):
    """The kill switch (`lbagentctl mode off`): HAProxy keeps whatever it
    has. n1 fails and goes out; both n1's and n2's switches go off. n1
    heals and n2 fails: n1 stays DOWN and n2 UP at full weight on both
    load balancers, lbagent saying nothing of its own, until `mode auto`,
    after which n2 goes out and n1 comes back, as the rules say."""
    d, t = run.dep, run.t
    off_bound_s = t.marker_bound_ms() / 1000.0
    run.fault("n1's dependency fails")
    d["n1"].fail()
    if run.wait_out("n1", run.t_fault) is None:
        return
    for n in ("n1", "n2"):
        if _ctl(run, n, "mode", "off") != 0:
            return
    if run.wait(lambda: _agent_no_word(d, "n1") and _agent_no_word(d, "n2"),
                off_bound_s, "both load balancers get no word of lbagent's from n1 "
                "and n2 (`# lbagent automation off`)") is None:
        return
    t_off = time.monotonic()
    run.note("switched off: n1 heals, n2 fails")
    d["n1"].heal()
    d["n2"].fail()
    run.settle((t.probe_interval_ms + t.down_after_ms + t.up_after_ms + t.ramp_ms) /
               1000.0 + 2.0, "both switched off, their dependencies flipped")
    run.check(_stayed(run, "n1", lambda st, w: st.startswith("DOWN"), t_off),
              "n1 stayed DOWN on both while switched off, although healed")
    run.check(_stayed(run, "n2", _full, t_off),
              "n2 stayed UP at full weight on both while switched off, although failing")
    run.heal("the switches back to auto")
    for n in ("n1", "n2"):
        if _ctl(run, n, "mode", "auto") != 0:
            return
    if run.wait_out("n2", run.t_heal, "n2, failing, out on both once automated") is None:
        return
    if run.wait_back("n1", run.t_heal) is None:
        return
    d["n2"].heal()
    run.wait_back("n2", time.monotonic())


def _reload_while_held(run, with_state):
    d, s, t = run.dep, run.sampler, run.t
    if _ctl(run, "n1", "drain", "on", "--reason", "qualify held across reload") != 0:
        return
    d["n2"].degrade(t.slow_health_ms)
    if run.wait(lambda: d.everywhere("n1", lambda st, w, c: _drained(st, w)) and
                d.everywhere("n2", lambda st, w, c: st.startswith("UP") and w == 50),
                15.0, "n1 drained and n2 at weight 50 on both") is None:
        return
    run.settle(1.0, "held: n1 drained, n2 at 50")
    lb1 = d.hap("lb1")
    run.fault("lb1 reloaded" + (" with its server state saved" if with_state else ""))
    d.reload(lb1)
    t_new = time.monotonic()
    run.settle(3.0, "after the reload")
    samples = s.seen("n1", since=t_new, lb="lb1")
    n2s = s.seen("n2", since=t_new, lb="lb1")
    lost1 = [x for x in samples if not _drained(x[2], x[3])]
    lost2 = [x for x in n2s if x[3] != 50]
    back1 = max((x[0] for x in lost1), default=t_new)
    back2 = max((x[0] for x in lost2), default=t_new)
    run.metrics["n1_not_drained_samples"] = len(lost1)
    run.metrics["n2_not_50_samples"] = len(lost2)
    run.metrics["restored_ms"] = int((max(back1, back2) - t_new) * 1000)
    bound_s = (t.agent_inter_ms + t.marker_slack_ms) / 1000.0
    run.check(samples and _drained(samples[-1][2], samples[-1][3]) and n2s and
              n2s[-1][3] == 50, "after the reload lb1 shows n1 drained and n2 at 50")
    run.check(max(back1, back2) - t_new <= bound_s,
              f"restored within one agent-inter (+{t.marker_slack_ms} ms): "
              f"{run.metrics['restored_ms']} ms")
    if with_state:
        run.check(not lost1 and not lost2, "with the server state file, the new worker "
                  "never showed n1 undrained or n2 at another weight")
    d["n2"].degrade(0)
    _ctl(run, "n1", "drain", "off")
    run.wait_back("n1", time.monotonic())
    run.wait_back("n2", time.monotonic())


def haproxy_reload(run):
    """lb1 (master-worker, as Debian's unit runs it) is reloaded while
    lbagent holds n1 drained and n2 at weight 50, without a server state
    file: the new worker shows them restored within one agent-inter (its
    first agent check); lb2 is untouched."""
    _reload_while_held(run, with_state=False)


haproxy_reload.deploy = {"master_worker": True}


def haproxy_reload_state(run):
    """As haproxy-reload, with server-state-file and
    load-server-state-from-file global, the state saved just before the
    reload: the new worker shows n1 drained and n2 at weight 50 from its
    first sample on."""
    _reload_while_held(run, with_state=True)


haproxy_reload_state.deploy = {"master_worker": True, "state_file": True}


def lb_restart_during_release(run):
    """n1 is drained; lb2 saves its servers' state (server-state-file,
    n1 DRAIN in it) and stops; n1 is undrained (`lbagentctl drain off`:
    lbagent delivers `ready` to lb1, and still owes it to lb2); lb2 starts
    again from that file, n1 DRAIN in it: lbagent delivers the `ready` it
    owes, and both load balancers end with n1 UP at full weight."""
    d = run.dep
    if _ctl(run, "n1", "drain", "on", "--reason", "qualify release") != 0:
        return
    if run.wait(lambda: d.everywhere("n1", lambda st, w, c: _drained(st, w)), 10.0,
                "n1 drained on both") is None:
        return
    run.settle(1.0, "n1 drained")
    lb2 = d.hap("lb2")
    run.fault("lb2 saves its state and stops; n1 undrained")
    lb2.save_servers_state(lb2.state_path)
    lb2.stop()
    _ctl(run, "n1", "drain", "off")
    run.settle(1.0, "lb2 down while ready is delivered")
    run.note("lb2 starts again")
    lb2.start()
    t_up = time.monotonic()
    back = run.wait_back("n1", t_up)
    if back:
        run.metrics["both_up_ms"] = int((back - t_up) * 1000)
    first = s_first(run, "n1", "lb2", t_up)
    run.metrics["lb2_first_seen"] = first
    run.check(first is None or first.startswith("DRAIN"),
              f"lb2 started from its file with n1 drained (first seen: {first})")


def s_first(run, node, lb, since):
    seen = run.sampler.seen(node, since=since, lb=lb)
    return f"{seen[0][2]}/{seen[0][3]}" if seen else None


lb_restart_during_release.deploy = {"state_file": True}


def reload_under_traffic(run):
    """SIGHUP to every lbagent every second for 10 s (a minute with
    --full) under the workload: no request fails, no reply misses its
    deadline, HAProxy's view never changes, and each lbagent logged every
    reload."""
    import os
    import signal
    d = run.dep
    total = 60 if run.full else 10
    marks = {n.name: n.lb.log_mark() for n in d.nodes}
    start = time.monotonic()
    run.note(f"SIGHUP every second for {total} s")
    for _ in range(total):
        for n in d.nodes:
            os.kill(n.lb.pid, signal.SIGHUP)
        time.sleep(1.0)
    run.settle(1.0, "after the reloads")
    run.planned.append((start, time.monotonic(), "the reloads"))
    for n in d.nodes:
        run.check(_stayed(run, n.name, _full, start),
                  f"{n.name} stayed UP at full weight on both throughout")
        text = n.lb.log_since(marks[n.name]).lower()
        count = text.count("reload")
        run.metrics[f"{n.name}_reload_lines"] = count
        run.check(count >= total, f"{n.name} logged its reloads ({count} lines, "
                  f"{total} signals)")


def os_kill(pid, name):
    import os
    import signal
    os.kill(pid, getattr(signal, name))


def peer_partition(run):
    """(a) n1 is cut off from both peers (n2's API refuses, n3's answers
    come later than the peer timeout) and then its dependency fails: it
    cannot see another node serving, so it stays in (held by the peer
    guard) on both load balancers. (b) healed and reconnected, n1 is cut
    off from lb1's stats only (one direction: lb1's answers are dropped),
    and its dependency fails again: it judges by lb2 and the peers, and
    goes out on both."""
    d, t = run.dep, run.t
    n1 = d["n1"]
    # Two ways to be cut off: n2's API refuses, n3's answers later than
    # the peer timeout.
    run.note("(a) n1 cut off from its peers: n2 refused, n3 delayed past the timeout")
    n1.to_peer["n2"].set("refuse")
    n1.to_peer["n3"].set("delay", delay_ms=2 * t.peer_timeout_ms)
    run.settle(4 * t.peer_timeout_ms / 1000.0 + 1.0, "the partition settles")
    run.fault("(a) n1's dependency fails, partitioned")
    n1.fail()
    hold = (t.probe_interval_ms + t.down_after_ms + 4 * t.peer_timeout_ms +
            2 * t.agent_inter_ms) / 1000.0 + 3.0
    run.settle(hold, "n1 failing, cut off from its peers")
    run.check(_stayed(run, "n1", serving, run.t_fault),
              "(a) n1 stayed in on both while it could not see a peer serving")
    reply = n1.lb.ask().decode(errors="replace").strip()
    run.metrics["reply_partitioned"] = reply
    run.check("peer-guard" in reply, f"(a) n1's reply says the peer guard holds it: {reply!r}")
    run.note("(a) healed, reconnected")
    n1.heal()
    for p in n1.to_peer.values():
        p.set("pass")
    run.settle(t.up_after_ms / 1000.0 + 2.0, "n1 passing again")
    # One direction only: lb1 gets the stats request, its answer never
    # comes back.
    run.note("(b) n1 cut off from lb1's stats (its answers dropped)")
    n1.to_lb["lb1"].set("drop_down")
    run.settle(4 * t.peer_timeout_ms / 1000.0 + 1.0, "the cut settles")
    held = [r for r in run.requests() if r.start >= run.t_fault and r.end and not r.ok]
    run.metrics["failed_while_held_a"] = len(held)
    # The figures of the table (detection, recovery) are (b)'s.
    run.fault("(b) n1's dependency fails, cut off from lb1's stats")
    n1.fail()
    out = run.wait_out("n1", run.t_fault, "(b) n1 out on both, judged by lb2 and the peers")
    if out:
        run.metrics["detection_ms"] = int((out - run.t_fault) * 1000)
    run.heal("(b) healed, lb1's stats reachable")
    n1.heal()
    n1.to_lb["lb1"].set("pass")
    back = run.wait_back("n1", run.t_heal)
    if back:
        run.metrics["back_ms"] = int((back - run.t_heal) * 1000)


FLEET_SETTLE_S = 10.0       # after start-up, before the first healthy window
FLEET_HEALTHY_S = 20.0      # each healthy window
FLEET_OUT_S = 10.0          # the failed nodes out, steady
FLEET_HEALTHY_SHARE = 0.05  # healthy: under 5% of asking every interval


def _first_view(s, lb, since, ok):
    """When lb's samples first showed ok(view) at or after since, or None."""
    for t, l, v in list(s.samples):
        if l == lb and t >= since and ok(v):
            return t
    return None


def fleet(run):
    """50 nodes (each an lbagent with the same 50-entry peer list and both
    load balancers as sources) behind two HAProxy instances; the
    dependencies of 17 nodes (n1, n4, ..., n49) fail at once, then
    recover. Both load balancers take those 17 out and only them, each
    settling with the 33 others UP; never zero serving; after recovery all
    50 are UP at full weight on both. While healthy the fleet's peer and
    stats queries stay below 5% of what asking every [peers] interval
    would cost (N x (N + 2) a interval). Reported per phase (healthy,
    failing, out, recovered, healthy again): peer /status and stats
    queries a second across the fleet, lbagent CPU ms a second (mean and
    max over the 50), and each load balancer's settle times."""
    d, s = run.dep, run.sampler
    n = len(d.nodes)
    failing = d.nodes[::3][:fleetdep.N_FAIL]
    names = {x.name for x in failing}
    others = [x.name for x in d.nodes if x.name not in names]
    full_qps = n * (n + len(d.haps)) * 1000.0 / d.peer_interval_ms
    bound_qps = FLEET_HEALTHY_SHARE * full_qps
    phases = []
    run.metrics["fleet"] = {
        "nodes": n, "failing": len(failing), "peer_interval_ms": d.peer_interval_ms,
        "peer_timeout_ms": fleetdep.PEER_TIMEOUT_MS, "ask_every_interval_qps": full_qps,
        "healthy_bound_qps": bound_qps, "agent_port_asked_every_ms": int(d.ask_s * 1000),
        "dependency": "file probe, its file removed to fail it",
        "buildtype": fleetdep.buildtype()}
    run.metrics["phases"] = phases

    def window(phase, a, b, **extra):
        r = {"phase": phase, **fleetdep.rates(a, b), **extra}
        phases.append(r)
        run.tl.log({"kind": "measured", **r})
        return r

    def healthy(phase):
        c0 = fleetdep.Counters(d)
        run.settle(FLEET_HEALTHY_S, f"{phase}: measured")
        r = window(phase, c0, fleetdep.Counters(d))
        run.check(r["peer_qps"] + r["stats_qps"] < bound_qps,
                  f"{phase}: the fleet's peer + stats queries, {r['peer_qps']} + "
                  f"{r['stats_qps']} a second, below {FLEET_HEALTHY_SHARE:.0%} of asking "
                  f"every interval ({full_qps:.0f} a second): {bound_qps:.0f}")

    run.settle(FLEET_SETTLE_S, "start-up settles")
    healthy("healthy")

    def settled(v):
        return (all(not serving(*v[x][:2]) for x in names) and
                all(serving(*v[x][:2]) for x in others))

    c0 = fleetdep.Counters(d)
    run.fault(f"{len(failing)} dependencies fail at once")
    for x in failing:
        x.fail()
    got = run.wait(lambda: all(_first_view(s, hp.qname, run.t_fault, settled)
                               for hp in d.haps), 90.0,
                   f"both load balancers show the {len(failing)} out and the "
                   f"{len(others)} others UP")
    if got is None:
        return
    settle = {hp.qname: int((_first_view(s, hp.qname, run.t_fault, settled) - run.t_fault)
                            * 1000) for hp in d.haps}
    run.metrics["settle_ms"] = settle
    run.metrics["detection_ms"] = max(settle.values())
    window("failing", c0, fleetdep.Counters(d), settle_ms=settle)
    c0 = fleetdep.Counters(d)
    run.settle(FLEET_OUT_S, f"the {len(failing)} out")
    window("out", c0, fleetdep.Counters(d))
    run.check(all(serving(st, w) for x in others for _, _, st, w, _ in s.seen(x)),
              f"only the {len(failing)} went out: the {len(others)} others stayed UP with "
              f"a weight above 0 on both load balancers throughout")
    run.check(all(_first_view(s, hp.qname, run.t_fault, settled) for hp in d.haps) and
              all(not serving(*s.seen(x.name, lb=hp.qname)[-1][2:4])
                  for x in failing for hp in d.haps),
              f"the {len(failing)} are still out on both at the end of the out phase")

    c0 = fleetdep.Counters(d)
    run.heal(f"the {len(failing)} dependencies recover")
    for x in failing:
        x.heal()

    def all_full(v):
        return all(st == "UP" and w == 100 for st, w, _ in v.values())

    got = run.wait(lambda: all(_first_view(s, hp.qname, run.t_heal, all_full)
                               for hp in d.haps), 120.0,
                   f"all {n} back UP at full weight on both load balancers")
    if got is None:
        return
    back = {hp.qname: int((_first_view(s, hp.qname, run.t_heal, all_full) - run.t_heal)
                          * 1000) for hp in d.haps}
    run.metrics["back_ms"] = back
    window("recovered", c0, fleetdep.Counters(d), back_ms=back)
    run.settle(FLEET_SETTLE_S, "the fleet healthy again settles")
    healthy("healthy again")


fleet.deployment = fleetdep.FleetDeployment


SCENARIOS = [
    ("dependency-fails", dependency_fails),
    ("all-fail", all_fail),
    ("two-fail-together", two_fail_together),
    ("planned-drain", planned_drain),
    ("planned-maint", planned_maint),
    ("agent-sigkill", agent_sigkill),
    ("hung-probe", hung_probe),
    ("operator-runtime-maint", operator_runtime_maint),
    ("flapping-dependency", flapping_dependency),
    ("agent-frozen", agent_frozen),
    ("peer-partition", peer_partition),
    ("degraded", degraded),
    ("shadow-mode", shadow_mode),
    ("kill-switch", kill_switch),
    ("haproxy-reload", haproxy_reload),
    ("haproxy-reload-state", haproxy_reload_state),
    ("lb-restart-during-release", lb_restart_during_release),
    ("reload-under-traffic", reload_under_traffic),
    ("fleet", fleet),
]

FULL_ONLY = {"fleet"}


def run_one(name, fn, t, full=False):
    run = Run(name, t, agent_over=getattr(fn, "agent_over", None),
              deploy=getattr(fn, "deploy", None),
              deployment=getattr(fn, "deployment", None))
    run.full = full
    try:
        run.start()
        fn(run)
    except h.TestFailure as e:
        run.error = str(e)
        run.check(False, f"the scenario stopped: {e}")
    except Exception as e:  # noqa: BLE001 - a harness bug fails the scenario, reported
        import traceback
        run.error = traceback.format_exc()
        run.check(False, f"the scenario raised {type(e).__name__}: {e}")
    finally:
        try:
            run.stop()
        except Exception as e:  # noqa: BLE001
            run.check(False, f"stopping the workload raised {e}")
    return run

