"""The capacity group of the qualification (issue 31): does HAProxy spread
load by what each node can take? Three nodes whose applications complete
at most 120, 120 and 60 requests a second (2:2:1 x 60, 300 in all: the
2-core machine carries 600 a second through HAProxy with the client
at a fifth of a core, so the model's capacity is the limit, not the
machine's), two HAProxy (roundrobin, agent-check), an open-loop client
(Poisson arrivals, a new connection each). Each case runs three ways one
after the other, each on a fresh deployment (capdeploy.py): equal static
weights, ideal static weights (2:2:1, by hand) and lbagent's capacity
weights. The capacity way needs issue 31's keys; until lbagent has them
it fails with "lbagent rejected the config".

Run: ./scripts/qualify --only capacity (every case), or
--only capacity-hetero,capacity-halve,... ; --full runs them longer."""

import json
import os
import shutil
import time

import harness as h
import capdeploy as cd
import capplot
from invariants import Sampler, Timeline
from workload import percentile

CAPS = {"n1": 120.0, "n2": 120.0, "n3": 60.0}      # requests a second, 2:2:1 x 60
TOTAL = sum(CAPS.values())
WAYS = ("equal", "ideal", "capacity")

# The targets, by name.
HETERO_LOAD = 0.70                  # of the total capacity
HETERO_MAX_OVER_MEAN = 1.10         # max over mean node utilization, after settling
HETERO_P99_VS_IDEAL = 1.10          # client p99 against the ideal-static way's
SETTLE_S = 30.0                     # weights settle within this (x tier scale)
SETTLE_WITHIN = 0.10                # of the ideal share
DRIFT_PER_MIN = 0.10                # after settling, a weight moves at most this a minute
STEP_LOW, STEP_HIGH = 0.40, 0.80    # the load step, of the total capacity
STEP_SWING = 0.15                   # never further from the ideal share, after SETTLE_S
OVERLOAD_LOAD = 0.60                # offered while n1 drops to a third
OVERLOAD_INFLIGHT_VS_LIMIT = 1.05   # in flight on n1 against its limit (HAProxy's slim)
OVERLOAD_P99_VS_UNLOADED = 1.5      # client p99 against the same way's before the drop
OVERLOAD_GOODPUT = 0.95             # requests answered 200 within GOODPUT_MS
GOODPUT_MS = 1000.0
FAULT_FLOOR = 0.25                  # capacity_floor's default: never below
FAULT_FLAPS = 2                     # weight changes of more than 2 points allowed per fault
HEALTH_WEIGHT = 100                 # the health weight (up, no warn): 100%

# The bounded tier runs every time in the cases at this scale (and
# lbagent's capacity timings alike); --full at 1.
BOUNDED_SCALE = 1.0 / 3.0


class CapTimings:
    def __init__(self, scale, adaptive_maxconn=False):
        # lbagent's defaults (include/lbagent/core/capacity.h), scaled.
        self.blackout_ms = 10000 * scale
        self.half_life_ms = 5000 * scale
        self.expiry_ms = 30000 * scale
        # The pace of the samples: [peers] steady_interval, which
        # docs/capacity.md advises at 1 to 2 s for capacity weights.
        self.steady_interval_ms = 1000 * scale
        self.adaptive_maxconn = adaptive_maxconn

    def as_dict(self):
        return dict(vars(self))


def ideal_shares(caps):
    tot = sum(caps.values())
    return {n: c / tot for n, c in caps.items()}


# ------------------------------------------------------------- the cases

class Case:
    """name, expected (the report's), the plan [(seconds, rate)], events
    [(at_s, node, {capacity: N} | fault)], which ways, its judge."""
    adaptive = False
    ways = WAYS

    def __init__(self, scale):
        self.scale = scale

    def s(self, seconds):
        return seconds * self.scale

    def events(self):
        return []

    def caps_at(self, t_rel):
        caps = dict(CAPS)
        for at, node, what in self.events():
            if at <= t_rel and "capacity" in what:
                caps[node] = float(what["capacity"])
        return caps


class Hetero(Case):
    name = "capacity-hetero"
    expected = (f"{HETERO_LOAD:.0%} of the total capacity offered to nodes of 2:2:1: within "
                f"{SETTLE_S:g} s max over mean node utilization at most "
                f"{HETERO_MAX_OVER_MEAN}, client p99 at most {HETERO_P99_VS_IDEAL} times the "
                "ideal-static way's")

    def plan(self):
        return [(self.s(60), HETERO_LOAD * TOTAL)]


class Halve(Case):
    name = "capacity-halve"
    expected = (f"n1's capacity halves mid-run ({HETERO_LOAD:.0%} of the total offered): the "
                f"weights settle within {SETTLE_S:g} s to within {SETTLE_WITHIN:.0%} of the new "
                f"ideal; after settling no weight moves more than {DRIFT_PER_MIN:.0%} a minute")

    def plan(self):
        return [(self.s(30), HETERO_LOAD * TOTAL), (self.s(50), HETERO_LOAD * TOTAL)]

    def events(self):
        return [(self.s(30), "n1", {"capacity": CAPS["n1"] / 2})]


class Step(Case):
    name = "capacity-step"
    expected = (f"load steps {STEP_LOW:.0%} -> {STEP_HIGH:.0%} -> {STEP_LOW:.0%} of the "
                f"capacity: no weight swings more than {STEP_SWING:.0%} from its ideal at any "
                f"point after the first {SETTLE_S:g} s")

    def plan(self):
        return [(self.s(30), STEP_LOW * TOTAL), (self.s(20), STEP_HIGH * TOTAL),
                (self.s(20), STEP_LOW * TOTAL)]


class Overload(Case):
    name = "capacity-overload"
    adaptive = True
    expected = (f"n1's capacity drops to a third, {OVERLOAD_LOAD:.0%} of the total offered "
                f"throughout: with adaptive maxconn, in flight on n1 at most "
                f"{OVERLOAD_INFLIGHT_VS_LIMIT} times its limit, client p99 at most "
                f"{OVERLOAD_P99_VS_UNLOADED} times the unloaded p99, goodput (200 within "
                f"{GOODPUT_MS:g} ms) at least {OVERLOAD_GOODPUT:.0%}; the static ways beside")

    def plan(self):
        return [(self.s(30), OVERLOAD_LOAD * TOTAL), (self.s(30), OVERLOAD_LOAD * TOTAL)]

    def events(self):
        return [(self.s(30), "n1", {"capacity": CAPS["n1"] / 3})]


class Faults(Case):
    name = "capacity-faults"
    ways = ("capacity",)
    expected = ("capacity weights active, then on n3 in turn: its application stops "
                "reporting, its peers disappear, both HAProxy's stats go away: each time its "
                "weight returns to the health weight within capacity_expiry (plus two "
                f"agent-inter), never below the floor ({FAULT_FLOOR:.0%}), no flap (at most "
                f"{FAULT_FLAPS} moves a fault); static ways have nothing to lose here")

    def hold(self):
        return self.s(30) + 6.0      # expiry + room

    def plan(self):
        return [(self.s(30) + 3 * (self.hold() + self.s(30)), HETERO_LOAD * TOTAL)]

    def events(self):
        out = []
        at = self.s(30)
        for fault in ("report", "peers", "stats"):
            out.append((at, "n3", {"fault": fault, "on": True}))
            out.append((at + self.hold(), "n3", {"fault": fault, "on": False}))
            at += self.hold() + self.s(30)
        return out


CASES = [Hetero, Halve, Step, Overload, Faults]
NAMES = [c.name for c in CASES]


# ---------------------------------------------------------- one way's run

def apply_event(dep, node, what):
    n = dep[node]
    if "capacity" in what:
        n.set_app(capacity=what["capacity"])
        return
    mode = "refuse" if what["on"] else "pass"
    if what["fault"] == "report":
        n.set_app(report="off" if what["on"] else "on")
    elif what["fault"] == "peers":
        for p in n.to_peer.values():
            p.set(mode)
    elif what["fault"] == "stats":
        for p in n.to_lb.values():
            p.set(mode)


def run_way(case, way, t, outdir):
    """One way of a case on a fresh deployment: its figures (a dict), or
    {"rejected": why} when lbagent refused the configuration."""
    d = os.path.join(outdir, way)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    tl = Timeline()
    ct = CapTimings(case.scale, adaptive_maxconn=case.adaptive)
    dep = cd.CapDeployment(t, tl.log, way, CAPS, ct, d)
    out = {"way": way, "weights_configured": dep.weights}
    sampler = None
    try:
        try:
            dep.start()
        except cd.ConfigRejected as e:
            out["rejected"] = str(e)
            return out
        sampler = Sampler(dep, tl)
        sampler.start()
        time.sleep(1.0)
        path = os.path.join(d, "requests.jsonl")
        client = cd.run_client(list(dep.fe_ports.values()), case.plan(), path)
        t0 = time.monotonic()
        tl.log({"kind": "phase", "what": f"client starts: {case.plan()}"}, t0)
        for at, node, what in sorted(case.events(), key=lambda e: e[0]):
            delay = t0 + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            apply_event(dep, node, what)
        client.wait(timeout=sum(s for s, _ in case.plan()) + 60)
        t0 = _client_t0(path, t0)
        out.update(figures(case, dep, sampler, path, t0))
    finally:
        if sampler is not None:
            sampler.stop()
            out["violations"] = [f"+{tl.rel(v['t']):.1f}s {v['invariant']}: {v['what']}"
                                 for v in sampler.violations]
            with open(os.path.join(d, "timeline.txt"), "w") as f:
                for ev in tl.snapshot():
                    f.write(tl.render(ev) + "\n")
        for name, p in dep.artefacts():
            if not p.startswith(d):
                shutil.copy(p, os.path.join(d, name))
        dep.close()
    return out


def _client_t0(path, fallback):
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "phase" in rec:
                return rec["at"]
    return fallback


def load_requests(path, t0):
    out = []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "start" in rec:
                rec["t"] = rec["start"] - t0
                out.append(rec)
    return out


def figures(case, dep, sampler, path, t0):
    """Series (per 1 s: each node's served share, utilization, weight
    share, in flight) and the raw material of the verdicts."""
    reqs = load_requests(path, t0)
    end = sum(s for s, _ in case.plan())
    series = capplot.series(dep, sampler, t0, end)
    with open(os.path.join(dep.outdir, "series.json"), "w") as f:
        json.dump(series, f)
    return {"requests": reqs, "series": series, "end_s": end,
            "replies": [(round(t - t0, 2), n, txt) for t, n, _, txt in sampler.replies]}


# ------------------------------------------------------------ the verdicts

def window_stats(way, a, b):
    """Figures over [a, b) seconds of the client's run."""
    reqs = [r for r in way["requests"] if a <= r["t"] < b]
    ok = [r["ms"] for r in reqs if r["status"] == 200 and not r["error"]]
    good = [m for m in ok if m <= GOODPUT_MS]
    by_node = {}
    for n in CAPS:
        lat = [r["ms"] for r in reqs if r["node"] == n and r["status"] == 200]
        by_node[n] = {"p99_ms": _r(percentile(lat, 99)), "served": len(lat)}
    util = capplot.mean_over(way["series"], "util", a, b)
    vals = [v for v in util.values() if v is not None]
    mean = sum(vals) / len(vals) if vals else None
    return {"requests": len(reqs), "ok": len(ok), "failed": len(reqs) - len(ok),
            "p99_ms": _r(percentile(ok, 99)), "p50_ms": _r(percentile(ok, 50)),
            "goodput": round(len(good) / len(reqs), 4) if reqs else None,
            "util": {n: _r(v, 3) for n, v in util.items()},
            "util_max": _r(max(vals), 3) if vals else None, "util_mean": _r(mean, 3),
            "max_over_mean": _r(max(vals) / mean, 3) if vals and mean else None,
            "by_node": by_node}


def _count(items):
    out = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return dict(sorted(out.items()))


def _r(v, k=1):
    return None if v is None else round(v, k)


def weight_dev(series, caps_at, a, b):
    """Max over [a, b) of |weight share - ideal| / ideal, over nodes and
    load balancers."""
    worst = 0.0
    for row in series:
        if not a <= row["t"] < b:
            continue
        ideal = ideal_shares(caps_at(row["t"]))
        for lb in ("lb1", "lb2"):
            for n, s in (row.get("wshare", {}).get(lb) or {}).items():
                worst = max(worst, abs(s - ideal[n]) / ideal[n])
    return worst


def settle_time(series, caps_at, since, end):
    """Seconds from since until the weight shares stay within
    SETTLE_WITHIN of the ideal to end; None when the last bin is still
    off (or there is none)."""
    rows = [r for r in series if since <= r["t"] < end]
    if not rows:
        return None
    bad = [r["t"] for r in rows
           if weight_dev([r], caps_at, r["t"], r["t"] + 1e-9) > SETTLE_WITHIN]
    if not bad:
        return 0.0
    if bad[-1] >= rows[-1]["t"]:
        return None
    return round(bad[-1] + capplot.BIN_S - since, 1)


def max_move_per_min(series, caps_at, a, b, minute_s):
    """Max move of a weight share within any minute_s window in [a, b),
    relative to its ideal."""
    rows = [r for r in series if a <= r["t"] < b]
    worst = 0.0
    for i, r in enumerate(rows):
        ideal = ideal_shares(caps_at(r["t"]))
        for q in rows[i + 1:]:
            if q["t"] - r["t"] > minute_s:
                break
            for lb in ("lb1", "lb2"):
                x, y = r.get("wshare", {}).get(lb) or {}, q.get("wshare", {}).get(lb) or {}
                for n in x:
                    if n in y:
                        worst = max(worst, abs(y[n] - x[n]) / ideal[n])
    return worst


def judge(case, ways, checks):
    """The case's verdicts: checks.append((ok, text)); the side-by-side
    table's rows come back (a dict way -> figures)."""
    table = {}
    end = next(iter(ways.values())).get("end_s", 0)
    settle_bound = case.s(SETTLE_S)
    minute = case.s(60.0)
    for name, w in ways.items():
        if "rejected" in w:
            table[name] = {"rejected": w["rejected"]}
            continue
        since = max([at for at, _, what in case.events() if "capacity" in what] or [0.0])
        row = window_stats(w, since + settle_bound if since + settle_bound < end else since, end)
        st = settle_time(w["series"], case.caps_at, since, end)
        row["settle_s"] = st
        row["move_per_min"] = round(max_move_per_min(
            w["series"], case.caps_at, since + (st or settle_bound), end, minute), 3)
        row["weight_dev_after_settle"] = round(weight_dev(
            w["series"], case.caps_at, since + settle_bound, end), 3)
        table[name] = row
    default_verdicts(case, ways, table, checks)
    JUDGES[case.name](case, ways, table, checks)
    return table


def default_verdicts(case, ways, table, checks):
    for name, w in ways.items():
        if "rejected" in w:
            checks.append((False, f"{name} way: {w['rejected']}"))
        elif w.get("violations"):
            checks.append((False, f"{name} way: invariant violations: "
                           + "; ".join(w["violations"][:3])))


def _has(table, *names):
    return all(n in table and "rejected" not in table[n] for n in names)


def judge_hetero(case, ways, table, checks):
    if _has(table, "equal", "ideal"):
        e, i = table["equal"], table["ideal"]
        checks.append((e["max_over_mean"] > HETERO_MAX_OVER_MEAN and
                       (e["by_node"]["n3"]["p99_ms"] or 0) > (i["by_node"]["n3"]["p99_ms"] or 0),
                       f"the harness shows the problem: equal weights overload n3 (max/mean "
                       f"utilization {e['max_over_mean']}, n3's p99 {e['by_node']['n3']['p99_ms']}"
                       f" ms against {i['by_node']['n3']['p99_ms']} ms with ideal weights)"))
        checks.append((i["max_over_mean"] <= HETERO_MAX_OVER_MEAN,
                       f"the ideal static way meets the utilization target itself: max/mean "
                       f"{i['max_over_mean']} <= {HETERO_MAX_OVER_MEAN}"))
    if _has(table, "capacity", "ideal"):
        c, i = table["capacity"], table["ideal"]
        checks.append((c["max_over_mean"] is not None and
                       c["max_over_mean"] <= HETERO_MAX_OVER_MEAN,
                       f"capacity weights: max/mean utilization after {case.s(SETTLE_S):g} s "
                       f"{c['max_over_mean']} <= {HETERO_MAX_OVER_MEAN}"))
        checks.append((c["p99_ms"] is not None and i["p99_ms"] and
                       c["p99_ms"] <= HETERO_P99_VS_IDEAL * i["p99_ms"],
                       f"capacity weights: p99 {c['p99_ms']} ms <= {HETERO_P99_VS_IDEAL} x the "
                       f"ideal way's {i['p99_ms']} ms"))


def judge_halve(case, ways, table, checks):
    if _has(table, "ideal"):
        i = table["ideal"]
        checks.append((i["util"]["n1"] is not None and i["util"]["n1"] > 0.95,
                       f"the harness shows the problem: static 2:2:1 weights overload the "
                       f"halved n1 (utilization {i['util']['n1']}, p99 {i['p99_ms']} ms)"))
    if _has(table, "capacity"):
        c = table["capacity"]
        checks.append((c["settle_s"] is not None and c["settle_s"] <= case.s(SETTLE_S),
                       f"capacity weights settle within {case.s(SETTLE_S):g} s to within "
                       f"{SETTLE_WITHIN:.0%} of the new ideal: {c['settle_s']} s"))
        checks.append((c["move_per_min"] <= DRIFT_PER_MIN,
                       f"after settling no weight moves more than {DRIFT_PER_MIN:.0%} a "
                       f"{case.s(60):g} s window: {c['move_per_min']:.1%}"))


def judge_step(case, ways, table, checks):
    hi = case.s(30), case.s(50)
    if _has(table, "equal"):
        u = capplot.mean_over(ways["equal"]["series"], "util", *hi)["n3"]
        checks.append((u is not None and u > 0.95,
                       f"the harness shows the problem: at {STEP_HIGH:.0%} equal weights "
                       f"saturate n3 (utilization {_r(u, 3)})"))
    if _has(table, "capacity"):
        dev = weight_dev(ways["capacity"]["series"], case.caps_at, case.s(SETTLE_S),
                         ways["capacity"]["end_s"])
        table["capacity"]["swing"] = round(dev, 3)
        checks.append((dev <= STEP_SWING,
                       f"capacity weights: no weight further than {STEP_SWING:.0%} from its "
                       f"ideal after {case.s(SETTLE_S):g} s: at most {dev:.1%}"))


def judge_overload(case, ways, table, checks):
    drop = case.events()[0][0]
    end = next(iter(ways.values())).get("end_s", drop)
    for name, w in ways.items():
        if name not in table or "rejected" in table[name]:
            continue
        before = window_stats(w, 0, drop)
        after = window_stats(w, drop, end)
        table[name].update({"unloaded_p99_ms": before["p99_ms"], "p99_ms": after["p99_ms"],
                            "goodput": after["goodput"],
                            "inflight_vs_limit": capplot.inflight_vs_limit(
                                w["series"], "n1", drop, end)})
    if _has(table, "ideal"):
        i = table["ideal"]
        checks.append((i["goodput"] < OVERLOAD_GOODPUT or
                       i["p99_ms"] > OVERLOAD_P99_VS_UNLOADED * i["unloaded_p99_ms"],
                       f"the harness shows the problem: with static weights n1's queue grows "
                       f"(p99 {i['p99_ms']} ms against {i['unloaded_p99_ms']} ms before, goodput "
                       f"{i['goodput']:.1%})"))
    if _has(table, "capacity"):
        c = table["capacity"]
        r = c["inflight_vs_limit"]
        checks.append((r is not None and r <= OVERLOAD_INFLIGHT_VS_LIMIT,
                       f"adaptive maxconn: in flight on n1 at most {OVERLOAD_INFLIGHT_VS_LIMIT} x "
                       f"its limit: {r}"))
        checks.append((c["p99_ms"] is not None and c["unloaded_p99_ms"] and
                       c["p99_ms"] <= OVERLOAD_P99_VS_UNLOADED * c["unloaded_p99_ms"],
                       f"p99 {c['p99_ms']} ms <= {OVERLOAD_P99_VS_UNLOADED} x the unloaded "
                       f"{c['unloaded_p99_ms']} ms"))
        checks.append((c["goodput"] is not None and c["goodput"] >= OVERLOAD_GOODPUT,
                       f"goodput {c['goodput']} >= {OVERLOAD_GOODPUT}"))


def judge_faults(case, ways, table, checks):
    if not _has(table, "capacity"):
        return
    w = ways["capacity"]
    ev = case.events()
    bound = case.s(30) + 2 * 0.5 + 1.0       # expiry + two agent-inter + sampling
    for k in range(0, len(ev), 2):
        on, off = ev[k][0], ev[k + 1][0]
        what = ev[k][2]["fault"]
        got = capplot.weight_back_at(w["series"], "n3", HEALTH_WEIGHT, on, off)
        low = capplot.weight_min(w["series"], "n3", on, off)
        moves = capplot.weight_moves(w["series"], "n3", on, off)
        table["capacity"][f"{what}_back_s"] = got
        checks.append((got is not None and got <= bound,
                       f"{what} gone: n3's weight back to {HEALTH_WEIGHT} within {bound:g} s: "
                       f"{got} s"))
        checks.append((low is not None and low >= 100 * FAULT_FLOOR,
                       f"{what} gone: n3's weight never below the floor: at least {low}"))
        checks.append((moves <= FAULT_FLAPS, f"{what} gone: no flap: {moves} moves"))


JUDGES = {"capacity-hetero": judge_hetero, "capacity-halve": judge_halve,
          "capacity-step": judge_step, "capacity-overload": judge_overload,
          "capacity-faults": judge_faults}


# --------------------------------------------------------------- the case

def run_case(name, t, full, outdir):
    """Runs the case's ways and judges them: a summary as report.summarize
    makes (results.json's entry), with the table under "capacity"."""
    case = next(c for c in CASES if c.name == name)(1.0 if full else BOUNDED_SCALE)
    t1 = time.monotonic()
    d = os.path.join(outdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    ways, checks, error = {}, [], None
    for way in case.ways:
        h.section(f"{name}: the {way} way")
        try:
            ways[way] = run_way(case, way, t, d)
        except Exception as e:  # noqa: BLE001 - a harness bug fails the case, reported
            import traceback
            error = traceback.format_exc()
            ways[way] = {"rejected": f"the {way} way raised {type(e).__name__}: {e}"}
    table = judge(case, ways, checks)
    plot = capplot.write_svg(os.path.join(d, "plot.svg"), case, ways)
    reqs = [r for w in ways.values() for r in w.get("requests", [])]
    ok = [r["ms"] for r in reqs if r["status"] == 200 and not r["error"]]
    # The summary table's p99 is the capacity way's (the one on trial).
    mine = [r["ms"] for r in ways.get("capacity", {}).get("requests", [])
            if r["status"] == 200 and not r["error"]]
    summary = {
        "name": name, "passed": bool(checks) and all(c for c, _ in checks) and error is None,
        "elapsed_s": round(time.monotonic() - t1, 1), "expected": case.expected,
        "checks": [{"ok": bool(c), "what": w} for c, w in checks],
        "violations": [], "requests": len(reqs), "failed": len(reqs) - len(ok),
        "failed_by_node": _count(r["node"] or "none" for r in reqs
                                 if r["status"] != 200 or r["error"]),
        "served_by_node": _count(r["node"] for r in reqs if r["status"] == 200),
        "p99_short_ms": _r(percentile(mine, 99)), "p99_ms": _r(percentile(mine, 99)),
        "max_ms": _r(max(mine) if mine else None),
        "detection_ms": None, "recover_ms": None, "markers": [],
        "replies": {"asked": sum(len(w.get("replies", [])) for w in ways.values()),
                    "max_ms": None},
        "transitions": {}, "fault_at_s": None, "heal_at_s": None,
        "metrics": {"scale": case.scale, "capacities": CAPS},
        "capacity": {"table": table, "plot": os.path.relpath(plot, outdir) if plot else None,
                     "ways": list(case.ways), "plan": case.plan(),
                     "events": case.events(), "scale": case.scale}}
    if error:
        with open(os.path.join(d, "error.txt"), "w") as f:
            f.write(error)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return summary
