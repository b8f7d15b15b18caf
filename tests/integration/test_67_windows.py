"""Probe windows (latency percentiles and error rates) against the real
HAProxy, driven by an HTTP server whose latency and errors the test sets
per path while it runs. Three windowed http probes, one lbagent, one
HAProxy with a server per service (agent-send picks the service):

- `lat` (service lat, `on_warn = 50%`; interval 2s, samples_per_run 2,
  so a sample every second; timeout 1s; window 10s; warn_p99 300ms):
  fast until its window judges (ok); then every 5th request takes 600 ms
  from the next one on. HAProxy's weight stays 100 for degrade_after after
  that change, then goes to 50; the reply says `up 50% #lat: p99 ... over
  10s (warn 300ms)` with a p99 of at least the slow latency and at most the
  timeout, p50 below the threshold, no errors. Fast again: the weight stays
  50 until the last slow sample has left the window and restore_after has
  passed, then comes back to 100.
- `err` (service err, `on_crit = down`, fall 2; interval 2s,
  samples_per_run 4; window 8s; crit_error_rate 20%): all 200 until its
  window judges; then requests 1, 4 and 7 of every 10 answer 500. Never
  do two of those land on the first samples of two consecutive runs
  (every 4th request: of 1, 4 and 7 only 4 is ever a run's, and never
  twice in a row), so the runs alone never make the probe fail (fall 2):
  the window does. HAProxy keeps it UP for down_after,
  then DOWN (agent); the probe counts crit with `error rate N% over 8s
  (crit 20%)`; once the window holds only samples from after the change,
  its error count is one that N consecutive requests of that pattern can
  have, and error_rate is errors / samples.
- `young` (the default service, on_warn ignore; min_samples 6): every
  request takes 600 ms from the start. Until it has 6 samples the window
  does not judge (`judging` false, result ok, the probe counted ok) while
  its p99 already shows the slow latency; then it judges: warn.
- `plain`, an http probe without a window: `window` is null.

Then /metrics: promtool finds nothing; lbagent_probe_latency_seconds is a
summary with quantiles 0.5, 0.95 and 0.99 equal to the status document's
p50/p95/p99 and `_sum`/`_count` (every `young` sample took at least 600 ms
and at most its timeout); lbagent_probe_error_ratio equals errors/samples;
neither has a series for `plain`.

The latencies keep every answer far from the thresholds on a loaded
machine: a fast answer (loopback, at once) is 300 ms under warn_p99, a slow
one 300 ms over it and 400 ms under the timeout; the run under test on two
cores with the rest of the suite saw answers 150 ms late."""

import http.server
import re
import shutil
import socketserver
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

# lat: a sample every second; slow ones far above the threshold and far
# below the timeout, fast ones (loopback, an immediate answer) far below it.
LAT = {"interval_ms": 2000, "spr": 2, "timeout_ms": 1000, "window_s": 10,
       "min_samples": 8, "warn_p99_ms": 300}
SLOW_S = 0.600
SLOW_EVERY = 5
# err: a sample every 500 ms, 16 in the window.
ERR = {"interval_ms": 2000, "spr": 4, "timeout_ms": 500, "window_s": 8,
       "min_samples": 10, "crit_pct": 20}
ERR_PATTERN = (1, 4, 7)          # of every 10 requests: 500
ERR_PERIOD = 10
# young: every request slow, min_samples 6 (6 s of samples).
YOUNG = {"interval_ms": 2000, "spr": 2, "timeout_ms": 1000, "window_s": 10,
         "min_samples": 6, "warn_p99_ms": 300}
DEGRADE_AFTER_S = 1.0
RESTORE_AFTER_S = 1.0
DOWN_AFTER_S = 1.0


def samples_bound_s(p, n):
    """Liveness bound for probe settings p to add n samples to a window:
    n sample steps (each run's interval up to +10% jitter, split into
    samples_per_run), one more run in flight, the harness's margin."""
    runs = -(-n // p["spr"]) + 1
    return runs * p["interval_ms"] * 1.1 / 1000.0 + h.probe_bound_s(p["interval_ms"],
                                                                      p["timeout_ms"])


def window_samples(p):
    """How many samples probe settings p keep in a full window."""
    return p["window_s"] * 1000 // p["interval_ms"] * p["spr"]


# ------------------------------------------------------------ the server

class Plan:
    """What a path answers: request k (0 from when the plan was set) gets
    fn(k) = (delay in seconds, status)."""

    def __init__(self, fn):
        self.fn = fn
        self.base = None


def every(n, delay_s):
    """Request 0, n, 2n, ... slowed by delay_s; all 200."""
    return Plan(lambda k: (delay_s if k % n == 0 else 0.0, 200))


def errors(pattern, period):
    return Plan(lambda k: (0.0, 500 if k % period in pattern else 200))


FAST = Plan(lambda k: (0.0, 200))


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):  # noqa: N802 - http.server's name
        srv = self.server.owner
        delay, status = srv.arrived(self.path)
        if delay:
            srv.stop.wait(delay)
        body = b"ok\n" if status == 200 else b"failing\n"
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass        # lbagent gave up (its timeout)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class PlannedServer:
    """A threaded HTTP server on 127.0.0.1 whose latency and status per
    path follow the Plan the test sets; it records every request as
    (path, k, arrival time.monotonic(), delay, status)."""

    def __init__(self):
        self.port = h.free_port()
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._plans = {}
        self._count = {}
        self.log = []
        self._srv = _Server(("127.0.0.1", self.port), _Handler)
        self._srv.owner = self
        self._thread = threading.Thread(target=self._srv.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        h.env().register(self)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def set_plan(self, path, plan):
        """From the next request to path on, plan decides; returns the
        time just before the change (nothing can react to it sooner)."""
        t = time.monotonic()
        with self._lock:
            plan.base = self._count.get(path, 0)
            self._plans[path] = plan
        return t

    def arrived(self, path):
        with self._lock:
            n = self._count.get(path, 0)
            self._count[path] = n + 1
            plan = self._plans.get(path, FAST)
            k = n - (plan.base or 0)
            delay, status = plan.fn(k)
            self.log.append((path, k, time.monotonic(), delay, status))
            return delay, status

    def count(self, path):
        with self._lock:
            return self._count.get(path, 0)

    def requests(self, path):
        with self._lock:
            return [r for r in self.log if r[0] == path]

    def close(self):
        self.stop.set()
        self._srv.shutdown()
        self._srv.server_close()
        self._thread.join(timeout=5)

    def diagnostics(self):
        with self._lock:
            last = self.log[-12:]
            counts = dict(self._count)
        return (f"== planned HTTP server :{self.port}: requests {counts}, last:\n" +
                "\n".join(f"  {p} k={k} delay={d} status={s}" for p, k, _, d, s in last))

    def __repr__(self):
        return f"<PlannedServer :{self.port}>"


# ------------------------------------------------------------ helpers

def duration_ms(text):
    """'312ms', '1.8s', '2s', '1m' in milliseconds."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m)", text)
    if m is None:
        raise h.TestFailure(f"not a duration: {text!r}")
    return float(m.group(1)) * {"ms": 1, "s": 1000, "m": 60000}[m.group(2)]


def error_bounds(n):
    """(least, most) errors n consecutive requests of ERR_PATTERN hold."""
    counts = [sum((o + i) % ERR_PERIOD in ERR_PATTERN for i in range(n))
              for o in range(ERR_PERIOD)]
    return min(counts), max(counts)


def parse_metrics(text):
    """[(name, {label: value}, value)] of every sample line."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)', line)
        if m is None:
            raise h.TestFailure(f"not a sample line: {line!r}")
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                 m.group(2) or ""))
        out.append((m.group(1), labels, float(m.group(3))))
    return out


def probe_keys(p, path, srv):
    keys = {"type": "http", "url": srv.url(path), "interval": f"{p['interval_ms']}ms",
            "timeout": f"{p['timeout_ms']}ms", "window": f"{p['window_s']}s",
            "samples_per_run": p["spr"], "min_samples": p["min_samples"]}
    if "warn_p99_ms" in p:
        keys["warn_p99"] = f"{p['warn_p99_ms']}ms"
    if "crit_pct" in p:
        keys["crit_error_rate"] = f"{p['crit_pct']}%"
    return keys


def main():
    h.require_kinds("http")
    h.require_haproxy()
    promtool = shutil.which("promtool")
    if promtool is None:
        raise h.TestFailure("promtool not found: scripts/deps test installs prometheus")
    srv = PlannedServer()
    srv.set_plan("/young", Plan(lambda k: (SLOW_S, 200)))
    sock = "unix:" + h.env().path("api.sock")
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "down_after": f"{DOWN_AFTER_S:g}s",
                  "up_after": f"{DOWN_AFTER_S:g}s", "ramp": "0",
                  "degrade_after": f"{DEGRADE_AFTER_S:g}s",
                  "restore_after": f"{RESTORE_AFTER_S:g}s", "flap_limit": "0"},
        "http": {"listen": sock},
        "probe lat": {**probe_keys(LAT, "/lat", srv), "on_warn": "50%"},
        "probe err": {**probe_keys(ERR, "/err", srv), "on_crit": "down", "fall": 2},
        "probe young": probe_keys(YOUNG, "/young", srv),
        "probe plain": {"type": "http", "url": srv.url("/plain"), "interval": "1s",
                        "timeout": "450ms"},
        "service lat": {"probes": "lat"},
        "service err": {"probes": "err"},
    })

    def status():
        return h.http_json(sock, "/status")[1]

    def probe(st, service, name):
        for s in st["services"]:
            if s["name"] == service:
                for p in s["probes"]:
                    if p["name"] == name:
                        return p
        raise h.TestFailure(f"no probe {name} in service {service!r} in /status")

    def window(service, name, st=None):
        p = probe(st or status(), service, name)
        return p["counted"], p["window"]

    def consistent(w):
        """What every window figure must say, whatever its samples."""
        n = w["samples"]
        if n == 0:
            nulls = [k for k in ("error_rate", "p50_ms", "p95_ms", "p99_ms", "since")
                     if w[k] is not None]
            h.expect(not nulls, f"no samples, yet {nulls} not null: {w}")
        else:
            h.expect(w["p50_ms"] <= w["p95_ms"] <= w["p99_ms"], f"p50 <= p95 <= p99: {w}")
            h.expect(abs(w["error_rate"] - 100.0 * w["errors"] / n) <= 0.5,
                     f"error_rate is errors / samples in percent: {w}")
            h.expect(w["since"] is not None, f"since with samples: {w}")
        h.expect_equal(w["judging"], n >= w["min_samples"], f"judging with {n} samples ({w})")
        if not w["judging"]:
            h.expect_equal(w["result"], "ok", f"a window that does not judge says ok ({w})")
        return w

    h.section("before min_samples the window does not judge, even with slow samples")
    seen = []

    def young():
        counted, w = window("", "young")
        seen.append((counted, consistent(w)))
        return counted, w

    h.expect_equal(young()[1]["min_samples"], YOUNG["min_samples"], "young's min_samples")
    h.expect_equal(young()[1]["window_ms"], YOUNG["window_s"] * 1000, "young's window_ms")
    h.wait_until(young, samples_bound_s(YOUNG, YOUNG["min_samples"]),
                 "young's window judging", ok=lambda v: v[1]["judging"],
                 describe=repr)
    early = [(c, w) for c, w in seen if w["samples"] < YOUNG["min_samples"]]
    slow_early = [w for _, w in early if w["samples"] > 0]
    h.expect(slow_early, f"a look at young's window with 1 to 5 samples: {seen[:3]}")
    for counted, w in early:
        h.expect(counted == "ok" and w["result"] == "ok" and not w["judging"],
                 f"young before min_samples: counted {counted}, window {w}")
        h.expect_equal(w["reason"], f"{w['samples']} of {YOUNG['min_samples']} samples over "
                       f"10s: not judged yet", "young's reason before min_samples")
    for w in slow_early:
        h.expect(SLOW_S * 1000 <= w["p99_ms"] <= YOUNG["timeout_ms"],
                 f"young's p99 shows its slow samples before it judges: {w}")
    counted, w = h.wait_until(young, h.probe_bound_s(YOUNG["interval_ms"]),
                              "young judging: warn", ok=lambda v: v[0] == "warn")
    h.expect_equal(w["result"], "warn", f"young's window result ({w})")
    h.expect(re.fullmatch(r"p99 \S+ over 10s \(warn 300ms\)", w["reason"] or ""),
             f"young's reason: {w['reason']!r}")
    h.expect_equal(window("", "plain")[1], None, "a probe without a window: window null")

    h.section("lat and err judging, ok, and HAProxy at weight 100")
    for name, p in (("lat", LAT), ("err", ERR)):
        h.wait_until(lambda: window(name, name), samples_bound_s(p, p["min_samples"]),
                     f"{name}'s window judging, ok",
                     ok=lambda v: consistent(v[1])["judging"] and v[1]["result"] == "ok"
                     and v[0] == "ok")
    hap = h.Haproxy(backends={"be": [h.Server("lat", lb, agent_send="lat"),
                                     h.Server("err", lb, agent_send="err")]})
    for name in ("lat", "err"):
        hap.wait_status("be", name, "UP", h.startup_bound_s(), f"{name} UP at 100",
                        ok=lambda st: st["weight"] == "100")

    def both():
        rows = hap.stat_many([("be", "lat"), ("be", "err")])
        return rows[("be", "lat")], rows[("be", "err")]

    h.section("lat slow every 10th request, err failing 3 in 10")
    t0 = srv.set_plan("/lat", every(SLOW_EVERY, SLOW_S))
    t0_err = srv.set_plan("/err", errors(ERR_PATTERN, ERR_PERIOD))
    n0_err = srv.count("/err")
    n = h.hold_until(both, t0 + min(DEGRADE_AFTER_S, DOWN_AFTER_S),
                     "lat at weight 100 and err UP within degrade_after and down_after "
                     "of the change",
                     ok=lambda v: v[0]["weight"] == "100" and v[1]["status"] == "UP",
                     describe=lambda v: f"lat {h.describe_stat(v[0])}, "
                                        f"err {h.describe_stat(v[1])}")
    h.expect(n > 0, "HAProxy seen within degrade_after of the change")
    hap.wait_status("be", "lat", "UP", samples_bound_s(LAT, 1) + DEGRADE_AFTER_S +
                    h.agent_checks_bound_s(2), "lat at weight 50 after degrade_after",
                    ok=lambda st: st["weight"] == "50")
    took = time.monotonic() - t0
    h.expect(took >= DEGRADE_AFTER_S, "weight 50 after degrade_after")
    reply = h.wait_reply(lb, re.compile(rb"up 50% #lat: p99 \S+ over 10s \(warn 300ms\)\n"),
                         "lat's reply with the window's reason", send=b"lat\n")
    counted, w = window("lat", "lat")
    consistent(w)
    h.expect_equal((counted, w["result"], w["judging"]), ("warn", "warn", True),
                   f"lat counted warn by its window ({w})")
    h.expect(SLOW_S * 1000 <= w["p99_ms"] <= LAT["timeout_ms"],
             f"lat's p99 between the slow latency and the timeout: {w}")
    h.expect(w["p50_ms"] < LAT["warn_p99_ms"], f"lat's p50 is a fast sample's: {w}")
    h.expect_equal((w["errors"], w["error_rate"]), (0, 0), f"lat has no errors ({w})")
    h.expect(w["samples"] >= LAT["min_samples"], f"lat's samples ({w})")
    print(f"   lat at 50 {took:.2f} s after the change: {reply!r}, window {w}", flush=True)
    got = duration_ms(re.search(rb"p99 (\S+) over", reply).group(1).decode())
    h.expect(SLOW_S * 1000 <= got <= LAT["timeout_ms"], f"the reply's p99: {reply!r}")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "status", "lat")
    flat = " ".join(out.split())
    m = re.search(r"window 10s:[^;]*?p99 ([0-9]+)ms[^;]*error rate 0\.0%", flat)
    h.expect(rc == 0 and m and SLOW_S * 1000 <= int(m.group(1)) <= LAT["timeout_ms"],
             f"lbagentctl status lat shows the window (exit {rc}):\n{out}{err}")

    hap.wait_status("be", "err", "DOWN (agent)",
                    samples_bound_s(ERR, window_samples(ERR)) + DOWN_AFTER_S +
                    h.agent_checks_bound_s(2), "err DOWN (agent) by its error rate")
    took = time.monotonic() - t0_err
    h.expect(took >= DOWN_AFTER_S, "err DOWN after down_after")
    print(f"   err DOWN {took:.2f} s after the change", flush=True)
    reply = h.wait_reply(
        lb, re.compile(rb"down #err: error rate [0-9]+% over 8s \(crit 20%\)\n"),
        "err's reply with the window's reason", send=b"err\n")
    # Only samples from after the change: a window's worth of requests more
    # and two runs beyond (runs come up to 10% late).
    need = n0_err + window_samples(ERR) + 2 * ERR["spr"]
    h.wait_until(lambda: srv.count("/err"), samples_bound_s(ERR, need - n0_err),
                 f"{need - n0_err} requests to /err since the change", ok=lambda c: c >= need)
    counted, w = window("err", "err")
    consistent(w)
    h.expect_equal((counted, w["result"], w["judging"]), ("crit", "crit", True),
                   f"err counted crit by its window ({w})")
    lo, hi = error_bounds(w["samples"])
    print(f"   err: {reply!r}, window {w}", flush=True)
    h.expect(lo <= w["errors"] <= hi,
             f"{w['samples']} consecutive requests of the pattern hold {lo} to {hi} "
             f"errors: {w}")
    h.expect(w["error_rate"] >= ERR["crit_pct"], f"err's rate at or above crit: {w}")
    m = re.fullmatch(r"error rate ([0-9]+)% over 8s \(crit 20%\)", w["reason"] or "")
    h.expect(m and abs(int(m.group(1)) - w["error_rate"]) <= 0.5,
             f"err's reason names its rate: {w}")

    h.section("/metrics: promtool, the summary and the error ratio")

    def metrics_between():
        """Status, metrics, status: the metrics when both statuses agree
        on every windowed probe's figures (no sample came in between)."""
        def figures(st):
            return {(s, n): {k: v for k, v in probe(st, s, n)["window"].items()
                             if k in ("samples", "errors", "p50_ms", "p95_ms", "p99_ms")}
                    for s, n in (("lat", "lat"), ("err", "err"), ("", "young"))}
        a = figures(status())
        code, _, body = h.http_request(sock, "/metrics")
        h.expect_equal(code, 200, "/metrics")
        b = figures(status())
        return (a, body.decode()) if a == b else None

    figs, text = h.wait_until(metrics_between, 10, "a /metrics between two equal statuses")
    r = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    h.expect(r.returncode == 0 and r.stdout.strip() == b"",
             f"promtool (exit {r.returncode}):\n{r.stdout.decode()}\n--- metrics ---\n{text}")
    h.expect(re.search(r"^# TYPE lbagent_probe_latency_seconds summary$", text, re.M),
             "lbagent_probe_latency_seconds is a summary")
    h.expect(re.search(r"^# TYPE lbagent_probe_error_ratio gauge$", text, re.M),
             "lbagent_probe_error_ratio is a gauge")
    samples = parse_metrics(text)

    def one(name, **labels):
        got = [v for n, ls, v in samples if n == name and ls == labels]
        if len(got) != 1:
            raise h.TestFailure(f"{len(got)} samples of {name}{labels}, not 1:\n{text}")
        return got[0]

    for (svc, name), f in figs.items():
        svc = svc or "default"
        for q, key in (("0.5", "p50_ms"), ("0.95", "p95_ms"), ("0.99", "p99_ms")):
            v = one("lbagent_probe_latency_seconds", probe=name, service=svc, quantile=q)
            h.expect(abs(v - f[key] / 1000.0) < 1e-6,
                     f"{name}'s quantile {q}: {v}, status says {f[key]} ms")
        count = one("lbagent_probe_latency_seconds_count", probe=name, service=svc)
        h.expect(count >= f["samples"], f"{name}'s _count {count} >= the window's "
                 f"{f['samples']} samples")
        ratio = one("lbagent_probe_error_ratio", probe=name, service=svc)
        h.expect(abs(ratio - f["errors"] / f["samples"]) < 1e-6,
                 f"{name}'s error ratio {ratio}, status {f['errors']}/{f['samples']}")
    count = one("lbagent_probe_latency_seconds_count", probe="young", service="default")
    total = one("lbagent_probe_latency_seconds_sum", probe="young", service="default")
    h.expect(count * SLOW_S <= total <= count * YOUNG["timeout_ms"] / 1000.0,
             f"young: every sample took {SLOW_S} s to the timeout: sum {total}, "
             f"count {count}")
    h.expect(not any(ls.get("probe") == "plain" for n, ls, _ in samples
                     if n.startswith(("lbagent_probe_latency_seconds",
                                      "lbagent_probe_error_ratio"))),
             "no window metrics for a probe without a window")

    h.section("lat fast again: weight 50 until the slow samples leave, then 100")
    t1 = srv.set_plan("/lat", FAST)
    slow = [r[2] for r in srv.requests("/lat") if r[3] > 0]
    last_slow = slow[-1]
    n = h.hold_until(lambda: hap.stat("be", "lat"),
                     last_slow + LAT["window_s"] + RESTORE_AFTER_S * 0.9,
                     "lat at 50 while a slow sample is in its window and for restore_after",
                     ok=lambda st: st["weight"] == "50", describe=h.describe_stat)
    h.expect(n > 0, "HAProxy seen while the last slow sample was in the window")
    hap.wait_status("be", "lat", "UP",
                    last_slow - time.monotonic() + LAT["window_s"] + RESTORE_AFTER_S +
                    h.probe_bound_s(LAT["interval_ms"]) + h.agent_checks_bound_s(2),
                    "lat back at weight 100 after restore_after",
                    ok=lambda st: st["weight"] == "100")
    print(f"   lat back at 100 {time.monotonic() - last_slow:.2f} s after the last slow "
          f"request arrived", flush=True)
    counted, w = window("lat", "lat")
    consistent(w)
    h.expect_equal((counted, w["result"]), ("ok", "ok"), f"lat ok again ({w})")
    h.expect(w["p99_ms"] < LAT["warn_p99_ms"], f"only fast samples in lat's window: {w}")
    h.expect(t1 - last_slow < LAT["window_s"], "the last slow one was in the window at t1")
    h.wait_reply(lb, b"up\n", "lat's reply back to up", send=b"lat\n")
    h.expect(lb.alive(), "lbagent died")
    lb.stop()       # exit 0: under ASan, nothing of the windows leaked


if __name__ == "__main__":
    h.run(main)
