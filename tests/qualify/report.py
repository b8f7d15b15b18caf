"""What a run leaves: per scenario a directory with the timeline, the
requests, the samples and every process log; results.json; report.md."""

import json
import os
import platform
import shutil
import time

from workload import percentile


def _ms(v):
    return "-" if v is None else f"{v:.0f} ms" if isinstance(v, float) else f"{v} ms"


def summarize(run, elapsed_s):
    """The figures of one scenario (results.json's entry)."""
    reqs = run.requests()
    done = [r for r in reqs if r.end is not None]
    failed = [r for r in done if not r.ok]
    short = [r.duration * 1000 for r in done if r.kind == "short" and r.ok]
    alll = [r.duration * 1000 for r in done if r.ok]
    # Time to recover: from the fault to the first request served after
    # the last request that failed (0 when none failed after the fault).
    recover_ms = None
    if run.t_fault is not None:
        after = [r for r in done if r.start >= run.t_fault - 5.0]
        bad = [r for r in after if not r.ok and r.end >= run.t_fault]
        if not bad:
            recover_ms = 0
        else:
            last_bad = max(r.start for r in bad)
            good = [r for r in after if r.ok and r.start > last_bad]
            if good:
                first = min(good, key=lambda r: r.end)
                recover_ms = int((first.end - run.t_fault) * 1000)
    transitions = {}
    for ev in run.tl.snapshot():
        if ev["kind"] == "haproxy" and ev["from"] != "-":
            transitions.setdefault(f"{ev['lb']}/{ev['server']}", []).append(
                (round(run.tl.rel(ev["t"]), 2), ev["to"]))
    violations = [{"t_s": round(run.tl.rel(v["t"]), 3), "invariant": v["invariant"],
                   "what": v["what"],
                   # The timeline around it (the last 30 events).
                   "context": [run.tl.render(e) for e in run.tl.around(v["t"])][-30:]}
                  for v in run.sampler.violations]
    ok = all(c for c, _ in run.checks) and not violations and run.error is None
    markers = [{"node": m.node, "what": m.what,
                "obeyed_ms": None if m.obeyed_at is None else int((m.obeyed_at - m.t_set) * 1000),
                "violated": m.violated} for m in run.sampler.markers]
    return {
        "name": run.name,
        "passed": ok,
        "elapsed_s": round(elapsed_s, 1),
        "expected": " ".join((run.fn.__doc__ or "").split()),
        "checks": [{"ok": c, "what": w} for c, w in run.checks],
        "violations": violations,
        "requests": len(done),
        "failed": len(failed),
        "failed_by_node": _count(r.node or "none" for r in failed),
        "served_by_node": _count(r.node or "none" for r in done if r.ok),
        "p99_short_ms": _round(percentile(short, 99)),
        "p99_ms": _round(percentile(alll, 99)),
        "max_ms": _round(max(alll) if alll else None),
        "detection_ms": run.metrics.get("detection_ms"),
        "recover_ms": recover_ms,
        "metrics": run.metrics,
        "markers": markers,
        "replies": run.sampler.reply_stats(),
        "transitions": transitions,
        "fault_at_s": None if run.t_fault is None else round(run.tl.rel(run.t_fault), 3),
        "heal_at_s": None if run.t_heal is None else round(run.tl.rel(run.t_heal), 3),
    }


def _count(items):
    out = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return dict(sorted(out.items()))


def _round(v):
    return None if v is None else round(v, 1)


def write_scenario(outdir, run, summary):
    d = os.path.join(outdir, run.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "timeline.txt"), "w") as f:
        for ev in run.tl.snapshot():
            f.write(run.tl.render(ev) + "\n")
    with open(os.path.join(d, "requests.jsonl"), "w") as f:
        for r in run.requests():
            f.write(json.dumps(r.as_dict(run.tl.t0)) + "\n")
    with open(os.path.join(d, "samples.jsonl"), "w") as f:
        for t, lb, view in list(run.sampler.samples):
            f.write(json.dumps({"t_s": round(run.tl.rel(t), 3), "lb": lb, "servers": view}) + "\n")
    if summary["violations"]:
        with open(os.path.join(d, "violations.txt"), "w") as f:
            for v in run.sampler.violations:
                f.write(f"== {v['invariant']}: {v['what']}\n")
                for ev in run.tl.around(v["t"]):
                    f.write("   " + run.tl.render(ev) + "\n")
                f.write("\n")
    if run.error:
        with open(os.path.join(d, "error.txt"), "w") as f:
            f.write(run.error)
    for name, path in run.dep.artefacts():
        shutil.copy(path, os.path.join(d, name))
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


def _transitions_text(tr):
    out = []
    for key in sorted(tr):
        steps = " → ".join(f"{to} (+{t:g}s)" for t, to in tr[key])
        out.append(f"  - {key}: {steps}")
    return out


def _phases_text(phases):
    """A scenario's figures per phase (fleet): what the fleet asked and
    spent a second over each measured window, and the settle times."""
    if not phases:
        return []
    out = ["- per phase (queries a second across the fleet; lbagent CPU ms a second, "
           "mean and max over the nodes):", "",
           "  | phase | window | peer /status q/s | stats q/s | CPU ms/s mean | "
           "CPU ms/s max | settle |",
           "  |---|---|---|---|---|---|---|"]
    for p in phases:
        times = p.get("settle_ms") or p.get("back_ms") or {}
        out.append(f"  | {p['phase']} | {p['window_s']} s | {p['peer_qps']} | "
                   f"{p['stats_qps']} | {p['cpu_ms_per_s_mean']} | {p['cpu_ms_per_s_max']} | "
                   + (", ".join(f"{k} {v} ms" for k, v in times.items()) or "-") + " |")
    return out + [""]


def write_report(outdir, results, t, tier, started, elapsed_s):
    passed = sum(1 for r in results if r["passed"])
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started))
    head = [
        "# lbagent qualification report",
        "",
        f"{when}, {tier} tier, {passed} of {len(results)} scenarios passed, "
        f"{elapsed_s:.0f} s, on {platform.node()} ({os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}).",
        "",
        "Each scenario ran on a fresh deployment on loopback: two HAProxy "
        "(mode http, agent-check from 127.0.0.N), three nodes (an application "
        "server and its lbagent, which reaches its dependency, its peers and "
        "both load balancers' stats through fault proxies), and a client "
        "workload through both frontends (per load balancer two threads of "
        f"{t.short_ms} ms requests and one of {t.long_ms} ms requests). "
        "`fleet` has a deployment of its own: 50 nodes, file probes as their "
        "dependencies, one client thread per load balancer (see its section).",
        "",
        "## Summary",
        "",
        "| scenario | result | detection | recovery | failed / requests | p99 short | p99 all | violations |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        head.append(
            f"| {r['name']} | {'PASS' if r['passed'] else '**FAIL**'} | "
            f"{_ms(r['detection_ms'])} | {_ms(r['recover_ms'])} | "
            f"{r['failed']} / {r['requests']} | {_ms(r['p99_short_ms'])} | "
            f"{_ms(r['p99_ms'])} | {len(r['violations'])} |")
    head += [
        "",
        "Detection: from the fault to the node shown out on both load balancers. "
        "Recovery: from the fault to the first request served after the last one "
        "that failed (0: none failed). p99: of the successful requests' durations.",
        "",
        "## Timings used (shortened for the run)",
        "",
    ]
    for k, v in t.as_dict().items():
        head.append(f"- `{k}` = {v}")
    head.append(f"- a marker must show within {t.marker_bound_ms()} ms "
                f"(1 s + one agent-inter + {t.marker_slack_ms} ms of sampling slack)")
    body = []
    for r in results:
        body += ["", f"## {r['name']}: {'PASS' if r['passed'] else 'FAIL'}", "",
                 f"Expected: {r['expected']}", "",
                 f"- {r['requests']} client requests, {r['failed']} failed "
                 f"(by node: {r['failed_by_node'] or 'none'}); served by node: "
                 f"{r['served_by_node']}",
                 f"- detection {_ms(r['detection_ms'])}, recovery {_ms(r['recover_ms'])}, "
                 f"p99 short {_ms(r['p99_short_ms'])}, p99 all {_ms(r['p99_ms'])}, "
                 f"slowest {_ms(r['max_ms'])}",
                 f"- agent port asked {r['replies']['asked']} times, slowest answer "
                 f"{_ms(r['replies']['max_ms'])}"]
        for m in r["markers"]:
            body.append(f"- marker {m['node']} {m['what']}: shown on both after "
                        f"{_ms(m['obeyed_ms'])}" + (" (**late**)" if m["violated"] else ""))
        extra = {k: v for k, v in r["metrics"].items() if k not in ("detection_ms", "phases")}
        if extra:
            body.append("- measured: " + ", ".join(f"{k} = {v}" for k, v in extra.items()))
        body += _phases_text(r["metrics"].get("phases"))
        if r.get("capacity"):
            import capplot
            body += capplot.report_lines(r) + [""]
        body.append("- checks:")
        body += [f"  - {'ok' if c['ok'] else '**FAILED**'}: {c['what']}" for c in r["checks"]]
        body.append("- invariant violations:" + (" none" if not r["violations"] else ""))
        for i, v in enumerate(r["violations"]):
            body.append(f"  - +{v['t_s']}s {v['invariant']}: {v['what']}")
            if i < 3:
                body += ["", "    ```"] + [f"    {ln}" for ln in v["context"]] + ["    ```", ""]
        body.append("- transitions seen in HAProxy (status/weight, time since the start):")
        body += _transitions_text(r["transitions"]) or ["  - none"]
        body.append(f"- timeline and logs: `build/qualify/{r['name']}/`")
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(head + body) + "\n")
    return "\n".join(head)


def summary_md(doc):
    """The summary of a results.json, as docs/qualification.md keeps it."""
    rs = doc["scenarios"]
    passed = sum(1 for r in rs if r["passed"])
    out = [f"{doc['date'][:10]}, {doc['tier']} tier: {passed} of {len(rs)} scenarios "
           f"passed in {doc['elapsed_s']:.0f} s"
           + (f" ({doc['machine']})" if doc.get("machine") else "") + ".",
           "",
           "| scenario | result | detection | recovery | failed / requests | p99 short | violations |",
           "|---|---|---|---|---|---|---|"]
    for r in rs:
        out.append(f"| {r['name']} | {'PASS' if r['passed'] else '**FAIL**'} | "
                   f"{_ms(r['detection_ms'])} | {_ms(r['recover_ms'])} | "
                   f"{r['failed']} / {r['requests']} | {_ms(r['p99_short_ms'])} | "
                   f"{len(r['violations'])} |")
    return "\n".join(out) + "\n"
