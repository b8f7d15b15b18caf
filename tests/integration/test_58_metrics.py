"""/metrics as Prometheus users expect it, against the real daemon with
real probes (disk, file, tcp, exec), two named services sharing a probe,
marker files and reloads:

- `promtool check metrics` (Prometheus' own linter) finds nothing;
- the default service is `service="default"`; no sample has `service=""`;
- the weight is `lbagent_weight_ratio` (0 to 1: a probe at 50% gives
  0.5), and `lbagent_weight_percent` is gone;
- every per-probe family labels every sample with `probe` and `service`;
  a probe two services list has a series for each;
- `lbagent_flap_damping_factor{service}` is 1 (no damping) for every
  service;
- `lbagent_start_time_seconds` is when it started (unix time);
  `lbagent_config_last_reload_successful` and
  `lbagent_config_last_reload_success_timestamp_seconds`: 1 and the start
  time at first (the start is a successful load), 0 and unchanged after a
  broken configuration, 1 and the reload's time after a good one;
- `lbagent_marker{service,marker}` for every marker kind: 0, then 1 for a
  service's own drain (that service alone) and for the node's maint
  (every service);
- `lbagent_probe_value{probe,service}` in base units, equal to the status
  document's value: disk's percent as a ratio, tcp's milliseconds as
  seconds, file's age in seconds; no sample for exec, which measures none;
- a family with no samples is left out: no peers, no
  `lbagent_other_nodes_serving` at all (not even its HELP and TYPE), and
  every TYPE is followed by a sample of its own."""

import math
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 200
BOUND_S = h.probe_bound_s(INTERVAL_MS, 150) + 2.0
MARKER_S = h.marker_bound_s()
PER_PROBE = ("lbagent_probe_status", "lbagent_probe_duration_seconds",
             "lbagent_probe_last_result", "lbagent_probe_runs_total",
             "lbagent_probe_value")


def parse(text):
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


def main():
    h.require_kinds("file", "disk", "tcp", "exec")
    promtool = shutil.which("promtool")
    if promtool is None:
        raise h.TestFailure("promtool not found: scripts/deps test installs prometheus")
    d = h.tmpdir()
    fresh, half = os.path.join(d, "fresh"), os.path.join(d, "half.ok")
    h.write_atomic(fresh, "ok\n")
    h.write_atomic(half, "ok\n")
    plugin = os.path.join(d, "plugin")
    h.write_atomic(plugin, "#!/bin/sh\necho 'OK - fine|t=250ms;;; used=2KB big=1.5GB'\n")
    os.chmod(plugin, 0o755)
    os.utime(fresh, (time.time() - 3600, time.time() - 3600))
    stub = h.backend_stub()
    port = h.free_port()
    slow = {"interval": "1h", "timeout": "2s"}     # one run: a value that stays

    sock = "unix:" + os.path.join(d, "api.sock")

    def config():
        return h.ini_text({
            "agent": {"listen": "127.0.0.1:{port}", "state_dir": "{state_dir}",
                      **h.IMMEDIATE},
            "http": {"listen": f"127.0.0.1:{port}, {sock}"},
            "probe room": {"type": "disk", "path": d, "warn": "100%", **slow},
            "probe age": {"type": "file", "path": fresh, "max_age": "100h", **slow},
            "probe conn": {"type": "tcp", "address": f"127.0.0.1:{stub.port}", **slow},
            "probe plugin": {"type": "exec", "command": plugin, **slow},
            "probe runs": {"type": "exec", "command": "/bin/true",
                           "interval": f"{INTERVAL_MS}ms", "timeout": "150ms"},
            "probe half": {"type": "file", "path": half, "on_crit": "50%",
                           "interval": f"{INTERVAL_MS}ms", "timeout": "150ms"},
            "service web": {"probes": "runs, half"},
            "service api": {"probes": "runs"},
        })

    before_start = time.time()
    lb = h.Lbagent(config())
    after_start = time.time()
    good = lb.config_text

    def status():
        """The detail: on the unix socket."""
        return h.http_json(sock, "/status")[1]

    def metrics():
        code, hdrs, body = h.http_request(port, "/metrics")
        h.expect_equal(code, 200, "/metrics")
        return body.decode()

    def sample(samples, name, **labels):
        got = [v for n, ls, v in samples if n == name and
               all(ls.get(k) == w for k, w in labels.items())]
        if len(got) != 1:
            raise h.TestFailure(f"{len(got)} samples of {name}{labels}, not 1")
        return got[0]

    def all_ran():
        text = metrics()
        ran = {ls.get("probe") for n, ls, _ in parse(text)
               if n == "lbagent_probe_duration_seconds"}
        return text if ran >= {"room", "age", "conn", "runs", "half", "plugin"} else None

    h.section("every probe has run once")
    text = h.wait_until(all_ran, BOUND_S, "a duration for every probe", ok=bool,
                        describe=lambda t: t and t[-400:])
    samples = parse(text)

    h.section("promtool check metrics finds nothing")
    r = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    h.expect(r.returncode == 0 and r.stdout.strip() == b"",
             f"promtool (exit {r.returncode}):\n{r.stdout.decode()}\n--- metrics ---\n{text}")

    h.section("the default service is service=\"default\"")
    h.expect(all(ls.get("service") != "" for _, ls, _ in samples),
             "a sample with service=\"\":\n" +
             "\n".join(l for l in text.splitlines() if 'service=""' in l))
    h.expect_equal(sample(samples, "lbagent_state", service="default", state="up"), 1.0,
                   "the default service up")
    h.expect(sample(samples, "lbagent_replies_total", service="default") >= 1,
             "the harness's checks at start, answered by the default")

    h.section("lbagent_flap_damping_factor: 1 without damping")
    for svc in ("default", "web", "api"):
        h.expect_equal(sample(samples, "lbagent_flap_damping_factor", service=svc), 1.0,
                       f"{svc} not damped")

    h.section("lbagent_weight_ratio: 0 to 1")
    h.expect("lbagent_weight_percent" not in text, "lbagent_weight_percent is gone")
    h.expect_equal(sample(samples, "lbagent_weight_ratio", service="default"), 1.0,
                   "default at full weight")
    os.unlink(half)
    h.wait_until(lambda: parse(metrics()), BOUND_S, "web at half weight",
                 ok=lambda s: sample(s, "lbagent_weight_ratio", service="web") == 0.5,
                 describe=lambda s: [x for x in s if x[0] == "lbagent_weight_ratio"])
    h.write_atomic(half, "ok\n")

    h.section("every per-probe sample has probe and service")
    for name, ls, _ in samples:
        if name in PER_PROBE:
            h.expect(ls.get("probe") and ls.get("service"), f"{name}{ls}: probe and service")
    for fam in ("lbagent_probe_duration_seconds", "lbagent_probe_last_result",
                "lbagent_probe_status"):
        for svc in ("web", "api"):
            sample(samples, fam, probe="runs", service=svc)
        sample(samples, fam, probe="room", service="default")
    for res in ("ok", "warn", "crit", "unknown"):
        for svc in ("web", "api"):
            sample(samples, "lbagent_probe_runs_total", probe="runs", service=svc,
                   result=res)

    h.section("lbagent_probe_value in base units, as the status document says")
    probes = {p["name"]: p for p in status()["services"][0]["probes"]}
    for name, scale in (("room", 0.01), ("conn", 0.001), ("age", 1.0)):
        want = probes[name]["last"]["value"] * scale
        got = sample(samples, "lbagent_probe_value", probe=name, service="default")
        # The status document shows 6 significant digits: the two agree to
        # half a unit of the sixth (rounding both ways from a tie can differ,
        # so no exact compare of the formatted text).
        shown = probes[name]["last"]["value"]
        half = 0.5 * 10 ** (math.floor(math.log10(abs(shown))) - 5) if shown else 0
        h.expect(abs(got / scale - shown) <= half * (1 + 1e-9),
                 f"lbagent_probe_value of {name}: {got}, want {want} "
                 f"(to 6 significant digits)")
    # A plugin's first performance value, scaled by its unit.
    h.expect_equal(probes["plugin"]["last"]["unit"], "ms", "the plugin's unit")
    h.expect_equal(sample(samples, "lbagent_probe_value", probe="plugin",
                          service="default"), 0.25, "250ms in seconds")
    h.expect(0 < sample(samples, "lbagent_probe_value", probe="room",
                        service="default") <= 1, "disk's ratio within 0..1")
    h.expect(sample(samples, "lbagent_probe_value", probe="age", service="default") >= 3600,
             "the file is an hour old")
    h.expect(not any(n == "lbagent_probe_value" and ls["probe"] == "runs"
                     for n, ls, _ in samples), "exec measures nothing: no value")

    h.section("families with no samples are left out")
    h.expect("lbagent_other_nodes_serving" not in text,
             "without peers, no lbagent_other_nodes_serving at all")
    names = {n for n, _, _ in samples}
    for m in re.finditer(r"^# TYPE (\S+) (\S+)$", text, re.M):
        fam, typ = m.group(1), m.group(2)
        h.expect(fam in names or (typ == "counter" and fam + "_total" in names),
                 f"# TYPE {fam} with no sample")

    h.section("start time and the configuration's last load")
    start = sample(samples, "lbagent_start_time_seconds")
    h.expect(before_start - 1 <= start <= after_start + 1,
             f"start time {start} between {before_start} and {after_start}")
    h.expect_equal(sample(samples, "lbagent_config_last_reload_successful"), 1.0,
                   "the start is a successful load")
    h.expect_equal(sample(samples, "lbagent_config_last_reload_success_timestamp_seconds"),
                   start, "the last successful load is the start")

    with open(lb.config_path, "w") as f:
        f.write(good + "\n[probe broken]\ntype = nosuch\n")
    mark = lb.log_mark()
    os.kill(lb.pid, 1)
    h.wait_until(lambda: lb.log_since(mark), 5, "the failed reload in the log",
                 ok=lambda t: "reload failed" in t)
    s = parse(metrics())
    h.expect_equal(sample(s, "lbagent_config_last_reload_successful"), 0.0,
                   "a failed reload")
    h.expect_equal(sample(s, "lbagent_config_last_reload_success_timestamp_seconds"), start,
                   "the last successful load is still the start")

    with open(lb.config_path, "w") as f:
        f.write(good)
    before_reload = time.time()
    mark = lb.log_mark()
    os.kill(lb.pid, 1)
    h.wait_until(lambda: lb.log_since(mark), 5, "reloaded", ok=lambda t: "reloaded" in t)
    after_reload = time.time()
    s = parse(metrics())
    h.expect_equal(sample(s, "lbagent_config_last_reload_successful"), 1.0,
                   "a good reload")
    at = sample(s, "lbagent_config_last_reload_success_timestamp_seconds")
    h.expect(before_reload - 1 <= at <= after_reload + 1,
             f"the good reload's time {at} between {before_reload} and {after_reload}")
    h.expect_equal(sample(s, "lbagent_start_time_seconds"), start,
                   "a reload is not a start")

    h.section("lbagent_marker{service,marker}")
    kinds = ("maint", "drain", "off", "shadow")
    for svc in ("default", "web", "api"):
        for k in kinds:
            h.expect_equal(sample(s, "lbagent_marker", service=svc, marker=k), 0.0,
                           f"{svc} {k} absent")
    os.makedirs(os.path.join(lb.state_dir, "web"), exist_ok=True)
    h.write_atomic(os.path.join(lb.state_dir, "web", "drain"), "deploy\n")

    def markers():
        return {(ls["service"], ls["marker"]): v for n, ls, v in parse(metrics())
                if n == "lbagent_marker"}
    want = {(svc, k): 0.0 for svc in ("default", "web", "api") for k in kinds}
    want[("web", "drain")] = 1.0
    h.wait_until(markers, MARKER_S, "web's own drain, web alone", ok=lambda m: m == want)
    os.unlink(os.path.join(lb.state_dir, "web", "drain"))
    lb.set_marker("maint", "kernel\n")
    want = {(svc, k): float(k == "maint") for svc in ("default", "web", "api")
            for k in kinds}
    h.wait_until(markers, MARKER_S, "the node's maint, every service",
                 ok=lambda m: m == want)
    lb.clear_marker("maint")


if __name__ == "__main__":
    h.run(main)
