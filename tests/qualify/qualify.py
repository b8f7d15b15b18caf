"""The qualification run: each scenario on a fresh deployment of real
HAProxy and real lbagents, faults injected, a client workload the whole
time, the promises checked throughout; build/qualify/report.md and
results.json at the end. Run it through scripts/qualify.

usage: qualify.py --build DIR [--full] [--only NAME,...] [--out DIR] [--list]
                   [--selftest] [--jobs N]

With --jobs N, up to N scenarios run at once, each in a process and a
network namespace of its own (tests/isolated), and the report is the same
as one run after another: the scenarios mostly wait on their timelines."""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser(description="lbagent's qualification under faults")
    ap.add_argument("--build", default="build")
    ap.add_argument("--full", action="store_true", help="longer timings, every scenario")
    ap.add_argument("--only", default="", help="comma-separated scenario names")
    ap.add_argument("--out", default=None, help="output directory (BUILD/qualify)")
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--summary", action="store_true",
                    help="print the last results.json's summary as Markdown")
    ap.add_argument("--selftest", action="store_true",
                    help="only check the harness's own parts (fault proxies, checks)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="scenarios at once, each in its own network namespace")
    ap.add_argument("--part", action="store_true",
                    help=argparse.SUPPRESS)  # one scenario of a --jobs run
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    os.environ["LBAGENT"] = os.path.join(build, "lbagent")
    os.environ["LBAGENTCTL"] = os.path.join(build, "lbagentctl")
    import harness as h
    import report
    import scenarios
    import capacity
    from deploy import Timings

    # The capacity group (capacity.py) runs only when named: `--only
    # capacity` (every case) or its cases' names.
    names = [n for n, _ in scenarios.SCENARIOS] + capacity.NAMES
    if args.list:
        print("\n".join(names))
        return 0
    only = [n.strip() for n in args.only.split(",") if n.strip()]
    if "capacity" in only:
        only = [n for n in only if n != "capacity"] + \
            [n for n in capacity.NAMES if n not in only]
    unknown = [n for n in only if n not in names]
    if unknown:
        print(f"qualify: no scenario {', '.join(unknown)}; there are: {', '.join(names)}",
              file=sys.stderr)
        return 2
    outdir = os.path.abspath(args.out or os.path.join(build, "qualify"))
    if args.summary:
        with open(os.path.join(outdir, "results.json")) as f:
            sys.stdout.write(report.summary_md(json.load(f)))
        return 0
    # The harness's own parts first: a fault proxy that does not do what
    # it says would make every verdict after it meaningless.
    import selftest
    if not args.part and selftest.main(verbose=args.selftest) != 0:
        print("qualify: the harness's self-test failed; no scenario run", file=sys.stderr)
        return 1
    if args.selftest:
        return 0
    try:
        h.require_haproxy()
        h.require_source("127.0.0.2")
    except h.Skip as e:
        print(f"qualify: cannot run here: {e}", file=sys.stderr)
        return 2
    os.makedirs(outdir, exist_ok=True)
    t = Timings(full=args.full)
    tier = "full" if args.full else "bounded"
    started = time.time()
    t_start = time.monotonic()
    def wanted_one(name):
        if only:
            return name in only
        return name not in capacity.NAMES and (args.full or name not in scenarios.FULL_ONLY)
    wanted = [(name, fn) for name, fn in scenarios.SCENARIOS + [(n, None) for n in capacity.NAMES]
              if wanted_one(name)]
    if args.jobs > 1 and len(wanted) > 1:
        results = side_by_side(args, build, outdir, [n for n, _ in wanted])
        wanted = []
    else:
        results = []
    for name, fn in wanted:
        h.section(f"scenario {name}")
        t1 = time.monotonic()
        if fn is None:
            summary = capacity.run_case(name, t, args.full, outdir)
        else:
            run = scenarios.run_one(name, fn, t, full=args.full)
            run.fn = fn
            summary = report.summarize(run, time.monotonic() - t1)
            report.write_scenario(outdir, run, summary)
            run.close()
        results.append(summary)
        print(f"{'PASS' if summary['passed'] else 'FAIL'} {name} "
              f"({summary['elapsed_s']} s; {summary['failed']}/{summary['requests']} "
              f"requests failed; {len(summary['violations'])} violations)", flush=True)
        for c in summary["checks"]:
            if not c["ok"]:
                print(f"   failed: {c['what']}", flush=True)
        for v in summary["violations"]:
            print(f"   violation +{v['t_s']}s {v['invariant']}: {v['what']}", flush=True)
        if args.part:
            with open(os.path.join(outdir, f"{name}.part.json"), "w") as f:
                json.dump(summary, f)
            return 0 if summary["passed"] else 1
    elapsed = time.monotonic() - t_start
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                   "tier": tier, "elapsed_s": round(elapsed, 1),
                   "machine": f"{platform.node()}, {os.cpu_count()} CPUs",
                   "timings": t.as_dict(), "scenarios": results}, f, indent=2)
    head = report.write_report(outdir, results, t, tier, started, elapsed)
    print("\n" + head)
    print(f"\nreport: {os.path.join(outdir, 'report.md')}")
    return 0 if results and all(r["passed"] for r in results) else 1


def side_by_side(args, build, outdir, names):
    """Each scenario in a child of its own (qualify.py --part) in a network
    namespace of its own, at most args.jobs at once; each child's output is printed whole when it ends. The summaries come
    back in the scenarios' own order."""
    isolated = os.path.join(HERE, "..", "isolated")
    lock = os.path.join(outdir, "isolated.lock")
    pending = list(names)
    running = []
    while pending or running:
        while pending and len(running) < args.jobs:
            name = pending.pop(0)
            part = os.path.join(outdir, f"{name}.part.json")
            if os.path.exists(part):
                os.unlink(part)
            cmd = [sys.executable, isolated, lock, sys.executable, os.path.abspath(__file__),
                   "--build", build, "--out", outdir, "--only", name, "--part"]
            if args.full:
                cmd.append("--full")
            log = open(os.path.join(outdir, f"{name}.out"), "w+")
            running.append((subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
        time.sleep(0.2)
        for proc, log in [r for r in running if r[0].poll() is not None]:
            running.remove((proc, log))
            log.seek(0)
            sys.stdout.write(log.read())
            sys.stdout.flush()
            log.close()
    results = []
    for name in names:
        try:
            with open(os.path.join(outdir, f"{name}.part.json")) as f:
                results.append(json.load(f))
        except (OSError, ValueError):
            print(f"FAIL {name}: its run ended without a result "
                  f"(see {os.path.join(outdir, name + '.out')})", flush=True)
            results.append({"name": name, "passed": False, "elapsed_s": 0,
                            "failed": 0, "requests": 0, "violations": [], "markers": [],
                            "metrics": {}, "transitions": {},
                            "checks": [{"what": "the scenario ended without a result",
                                        "ok": False}]})
    return results


if __name__ == "__main__":
    sys.exit(main())
