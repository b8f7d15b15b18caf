"""lbagentctl end to end, against the real daemon and the real HAProxy.

- -h, -V, usage errors (exit 2); `check` prints exactly what `lbagent -c`
  prints for a good and a broken file, with the same exit status;
- `status` finds the daemon through the config's [http] listen (the unix
  socket first: the detail), fits 80 columns, names every service, probe,
  marker and load balancer; `status SERVICE`, `status -`, an unknown
  service (exit 1); `--json` is the API's document; over TCP with the
  config's token (the detail) and with a wrong one (the public part, a
  401 said on stderr); the token never appears in any output;
- `drain on --reason`, `drain off`, `maint on|off --service web`, `mode
  off|auto`: the exact marker files (content, mode), HAProxy's `show stat`
  going DRAIN / MAINT and back to UP, and /status already showing the
  change the moment lbagentctl returns (it waited for it), a new reason
  over a maint already on too; what each load balancer gets printed
  (`ready up` for the ones that saw the drain);
- a marker the daemon does not reflect (a service only lbagentctl's
  config has): exit 1 after -t, saying the marker was written;
- a configuration with errors: status and markers still work (its
  state_dir and [http] as written), with a warning;
- `mode auto` under LBAGENT_MODE=off: the marker goes, automation stays
  off, and lbagentctl says why;
- lbagent stopped: `status` and `reload` exit 1 with "lbagent is not
  running (no answer on ...)"; `drain on` writes the marker, says lbagent
  was not there, and HAProxy drains once lbagent starts;
- `reload` without the detail (TCP, no token) refuses, exit 1.
The outcome of a reload itself is in test_44_lbagentctl_reload."""

import json
import os
import re
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

TOKEN = "ctl-t0ken-never-shown"
BOUND_S = h.marker_bound_s()
CTL_TIMEOUT_S = 10          # lbagentctl's own -t, the default
# A restore word goes for twice the longest gap between a key's checks:
# a few of HAProxy's checks see it through.
LBKEY_WINDOW_CHECKS = 4


def ctl_exe():
    return h.lbagentctl_exe()


class Ctl:
    """Runs lbagentctl; remembers every output to check that the token
    never shows."""

    def __init__(self, config):
        self.config = config
        self.outputs = []

    def __call__(self, *args, config=None, env=None, timeout_s=60):
        argv = [ctl_exe()]
        if config is not False:
            argv += ["-f", config or self.config]
        argv += list(args)
        vars_ = dict(os.environ)
        vars_.update(env or {})
        start = time.monotonic()
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=vars_, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise h.TestFailure(f"`{' '.join(argv)}` did not finish within "
                                f"{timeout_s} s") from None
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        self.outputs.append((argv, out, err))
        return r.returncode, out, err, time.monotonic() - start

    def ok(self, *args, **kw):
        rc, out, err, _ = self(*args, **kw)
        h.expect(rc == 0, f"lbagentctl {' '.join(args)}: exit {rc}, expected 0\n"
                          f"  stdout: {out!r}\n  stderr: {err!r}")
        return out, err

    def fails(self, rc_expected, *args, **kw):
        rc, out, err, took = self(*args, **kw)
        h.expect(rc == rc_expected, f"lbagentctl {' '.join(args)}: exit {rc}, expected "
                                    f"{rc_expected}\n  stdout: {out!r}\n  stderr: {err!r}")
        return out, err, took


def status_of(where, name):
    """The service `name` in /status (on the unix socket: the detail)."""
    _, doc = h.http_json(where, "/status")
    for s in doc["services"]:
        if s["name"] == name:
            return s
    raise h.TestFailure(f"no service {name!r} in /status: {doc['services']!r}")


def expect_lines_fit(text, what):
    for line in text.splitlines():
        h.expect(len(line) <= 80, f"{what}: a line of {len(line)} columns: {line!r}")


def main():
    d = h.tmpdir()
    dep = os.path.join(d, "dep.ok")
    h.write_atomic(dep, "ok\n")
    token_file = os.path.join(d, "token")
    h.write_atomic(token_file, TOKEN + "\n", mode=0o600)
    sock = os.path.join(d, "http.sock")
    port = h.free_port()
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "node_id": "node-ctl", "request_timeout": "300ms",
                  **h.IMMEDIATE},
        "http": {"listen": f"127.0.0.1:{port}, unix:{sock}", "token_file": token_file},
        "probe dep": {"type": "file", "path": dep, "interval": "200ms",
                      "timeout": "100ms"},
        "service web": {"probes": "dep"},
    })
    unix = f"unix:{sock}"
    ctl = Ctl(lb.config_path)
    hap = h.Haproxy(backends={
        "be": [h.Server("s1", lb, agent_send=None)],
        "bweb": [h.Server("s1", lb, agent_send="web")],
    })
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "UP", h.startup_bound_s(), f"{be}/s1 UP at start",
                        ok=lambda st: h.agent_result(st) == "L7OK")
    h.wait_until(lambda: status_of(unix, "web")["probes"][0]["settled"],
                 h.probe_bound_s(200, 100), "the probe's first verdict")

    h.section("-h, -V, usage errors")
    out, _ = ctl.ok("-h", config=False)
    h.expect("usage: lbagentctl" in out and "maint" in out and "reload" in out,
             f"-h: {out!r}")
    expect_lines_fit(out, "-h")
    out, _ = ctl.ok("-V", config=False)
    h.expect(out.startswith("lbagentctl "), f"-V: {out!r}")
    for args in (["maint"], ["maint", "maybe"], ["frobnicate"], ["drain", "off", "--reason", "x"],
                 ["status", "--service", "web"], []):
        # The error and a hint, no usage dump after it (issue 32).
        _, err, _ = ctl.fails(2, *args)
        lines = err.splitlines()
        h.expect(len(lines) == 2 and lines[0].startswith("lbagentctl: ") and
                 lines[1] == "try 'lbagentctl --help'",
                 f"lbagentctl {args}: not the error and the hint: {err!r}")

    h.section("check: what lbagent -c prints, with its exit status")
    for text in (lb.config_text,
                 lb.config_text + "\n[probe bad]\ntype = nosuchkind\n\n[bogus]\nx = 1\n"):
        path = os.path.join(d, "check.conf")
        with open(path, "w") as f:
            f.write(text)
        want = subprocess.run([h.lbagent_exe(), "-c", "-f", path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        rc, out, err, _ = ctl("check", "-f", path, config=False)
        h.expect_equal((rc, out, err), (want.returncode, want.stdout.decode(),
                                        want.stderr.decode()),
                       "lbagentctl check vs lbagent -c (exit, stdout, stderr)")
    h.expect_equal(want.returncode, 1, "exit status for the broken file")
    h.expect(f"{path}:" in out, f"errors as FILE:LINE: message: {out!r}")
    out, _, _ = ctl.fails(1, "check", "-f", os.path.join(d, "missing.conf"), config=False)

    h.section("status: the unix socket's detail, 80 columns")
    lb.ask(source="127.0.0.9", send=b"web\n")
    out, _ = ctl.ok("status")
    expect_lines_fit(out, "status")
    for needle in ("node node-ctl", f"pid {lb.pid}", "service (default): up, serving",
                   "service web: up, serving", "  reply       up\n", "  automation  auto\n",
                   "    dep ", "  markers     none\n", '127.0.0.9 "web": asked',
                   "transitions, newest last", "SERVICE", "(default)"):
        h.expect(needle in out, f"status lacks {needle!r}:\n{out}")
    out, _ = ctl.ok("status", "web")
    h.expect("service web:" in out and "service (default)" not in out,
             f"status web shows web only:\n{out}")
    out, _ = ctl.ok("status", "-")
    h.expect("service (default):" in out and "service web" not in out,
             f"status - shows the default service only:\n{out}")
    _, err, _ = ctl.fails(1, "status", "nosuch")
    h.expect("no service 'nosuch'" in err, f"unknown service: {err!r}")

    h.section("status --json: the API's document")
    out, _ = ctl.ok("status", "--json")
    doc = json.loads(out)
    _, api = h.http_json(unix, "/status")
    h.expect_equal(sorted(doc), sorted(api), "top-level keys of --json and /status")
    h.expect_equal((doc["detail"], doc["pid"], doc["node_id"], doc["incarnation"]),
                   (True, api["pid"], api["node_id"], api["incarnation"]), "--json values")
    h.expect_equal([sorted(s) for s in doc["services"]], [sorted(s) for s in api["services"]],
                   "service keys of --json and /status")
    out, _ = ctl.ok("status", "--json", "web")
    h.expect_equal(json.loads(out)["name"], "web", "status --json web")

    h.section("status over TCP: the config's token gives the detail; a wrong one, the public part")
    out, err = ctl.ok("-s", f"127.0.0.1:{port}", "status")
    h.expect("service web: up" in out and "public view" not in out,
             f"TCP with the token: the detail:\n{out}\n{err}")
    wrong = os.path.join(d, "wrong.conf")
    with open(wrong, "w") as f:
        f.write(lb.config_text.replace(f"127.0.0.1:{port}, unix:{sock}",
                                       f"127.0.0.1:{port}").replace(token_file, dep))
    out, err = ctl.ok("status", config=wrong)
    h.expect("public view" in out and "HTTP 401" in err,
             f"a wrong token: the public part, 401 on stderr:\n{out}\n{err}")

    h.section("drain on --reason: the marker, HAProxy DRAIN, /status already drain")
    out, _ = ctl.ok("drain", "on", "--reason", "kernel upgrade (alice)")
    for name in ("", "web"):
        h.expect_equal(status_of(unix, name)["state"], "drain",
                       f"/status of {name or '(default)'} right after lbagentctl returned")
    marker = lb.marker_path("drain")
    with open(marker) as f:
        h.expect_equal(f.read(), "kernel upgrade (alice)\n", "the drain marker's content")
    h.expect_equal(stat.S_IMODE(os.stat(marker).st_mode), 0o666 & ~current_umask(),
                   "the marker's mode (as touch makes it)")
    h.expect_equal([n for n in os.listdir(lb.state_dir) if n.startswith(".")], [],
                   "no temporary file left")
    h.expect(f"wrote {marker}" in out and 'replies "drain up #kernel upgrade (alice)"' in out,
             f"drain on output: {out!r}")
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "DRAIN (agent)", BOUND_S, f"{be}/s1 DRAIN after drain on")
    h.expect_equal(lb.ask(), b"drain up #kernel upgrade (alice)\n", "raw reply")
    # Drained is not serving: status says so in its exit status too.
    out, _, _ = ctl.fails(3, "status")
    h.expect("drain (node-wide): kernel upgrade (alice)" in out,
             f"status shows the marker:\n{out}")

    h.section("drain off: the marker gone, HAProxy UP")
    out, _ = ctl.ok("drain", "off")
    h.expect(not os.path.exists(marker), "the drain marker is gone")
    # What the load balancers get: `ready` for the ones that saw the drain
    # (HAProxy's checks, the raw ask above), the plain line for a key that
    # asked before it.
    for line in (r'^\(default\)    replies "ready up" to all 2 load balancers that ask$',
                 r'^web          replies "ready up" to [0-9.]+ "web"$',
                 r'^             replies "up" to 127\.0\.0\.9 "web"$'):
        h.expect(re.search(line, out, re.M), f"drain off says what the load balancers "
                                             f"get, {line!r}: {out!r}")
    h.expect_equal(status_of(unix, "")["state"], "up", "/status right after drain off")
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "UP", BOUND_S, f"{be}/s1 UP after drain off")
    # Once HAProxy's restore window has passed, its next line is the plain one.
    h.wait_until(lambda: {x["next_reply"] for x in status_of(unix, "web")["load_balancers"]},
                 h.agent_checks_bound_s(LBKEY_WINDOW_CHECKS), "web's load balancers "
                 "next get plain \"up\"", ok=lambda s: s == {"up"})
    out, _ = ctl.ok("drain", "off")     # again: nothing to remove is fine
    h.expect('web          replies "up" to all 2 load balancers that ask\n' in out,
             f"drain off again, the ready delivered: {out!r}")

    h.section("maint on --service web: only web, HAProxy MAINT")
    ctl.ok("maint", "on", "--service", "web")
    wm = os.path.join(lb.state_dir, "web", "maint")
    with open(wm) as f:
        h.expect_equal(f.read(), "", "an empty marker without --reason")
    h.expect_equal(status_of(unix, "web")["state"], "maint", "/status of web")
    h.expect_equal(status_of(unix, "")["state"], "up", "/status of the default service")
    hap.wait_status("bweb", "s1", "MAINT", BOUND_S, "bweb/s1 MAINT after maint on")
    hap.hold_status("be", "s1", "UP", 1.0, "be/s1 stays UP")
    # Over a maint already on, it waits for the new reason, not the word.
    for reason in ("again", "third reason"):
        out, _ = ctl.ok("maint", "on", "--service", "web", "--reason", reason)
        h.expect_equal(status_of(unix, "web")["reason"], reason,
                       "/status of web right after maint on --reason")
        h.expect(f'replies "maint up #{reason}" to all 2 load balancers' in out,
                 f"maint on --reason {reason!r}: {out!r}")
    ctl.ok("maint", "off", "--service", "web")
    h.expect(not os.path.exists(wm), "the web maint marker is gone")
    hap.wait_status("bweb", "s1", "UP", BOUND_S, "bweb/s1 UP after maint off")

    h.section("maint on (node) over drain on --service web: maint wins, drain noted after")
    ctl.ok("drain", "on", "--service", "web")
    out, _ = ctl.ok("maint", "on")
    h.expect_equal(status_of(unix, "web")["state"], "maint", "maint wins over drain")
    hap.wait_status("bweb", "s1", "MAINT", BOUND_S, "bweb/s1 MAINT")
    out, err = ctl.ok("maint", "off")
    h.expect_equal(status_of(unix, "web")["state"], "drain", "web back to its own drain")
    h.expect(os.path.join(lb.state_dir, "web", "drain") in err and "still there" in err,
             f"maint off says web's drain marker remains: {err!r}")
    ctl.ok("drain", "off", "--service", "web")
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "UP", BOUND_S, f"{be}/s1 UP again")

    h.section("mode off / auto")
    out, _ = ctl.ok("mode", "off")
    h.expect(os.path.exists(lb.marker_path("off")), "the off marker")
    for name in ("", "web"):
        h.expect_equal(status_of(unix, name)["automation"], "off", "automation off")
    # A `ready` may still be owed to this raw key from the drain above.
    r = lb.ask()
    h.expect(r.endswith(h.OFF_REPLY) and h.well_formed(r), f"reply with automation off: {r!r}")
    ctl.ok("mode", "auto")
    h.expect(not os.path.exists(lb.marker_path("off")), "the off marker is gone")
    for name in ("", "web"):
        h.expect_equal(status_of(unix, name)["automation"], "auto", "automation back on")
    ctl.ok("mode", "off", "--service", "web")
    h.expect(os.path.exists(os.path.join(lb.state_dir, "web", "off")), "web's off marker")
    h.expect_equal(status_of(unix, "")["automation"], "auto", "the default service unchanged")
    ctl.ok("mode", "auto", "--service", "web")
    h.expect_equal(status_of(unix, "web")["automation"], "auto", "web back on")

    h.section("a marker the daemon does not reflect: exit 1 after -t")
    ghost = os.path.join(d, "ghost.conf")
    with open(ghost, "w") as f:
        f.write(lb.config_text + "\n[service ghost]\nprobes = dep\n")
    _, err, took = ctl.fails(1, "-t", "1", "drain", "on", "--service", "ghost", config=ghost)
    gm = os.path.join(lb.state_dir, "ghost", "drain")
    h.expect(os.path.exists(gm), "the marker was written all the same")
    h.expect(f"wrote {gm}, but lbagent did not reflect it within 1s" in err,
             f"timeout message: {err!r}")
    h.expect(1.0 <= took < 8.0 * h._time_scale(), f"-t 1 took {took:.1f} s")
    ctl.fails(1, "-t", "0.5", "drain", "off", "--service", "ghost", config=ghost)
    h.expect(not os.path.exists(gm), "removed all the same")
    _, err, _ = ctl.fails(1, "drain", "on", "--service", "nosuch")
    h.expect("no [service nosuch]" in err, f"a service the config lacks: {err!r}")

    h.section("a configuration with errors (an edit under way): status and markers still work")
    broken = os.path.join(d, "broken.conf")
    with open(broken, "w") as f:
        f.write(lb.config_text + "\n[probe bad]\ntype = nosuchkind\n")
    out, err = ctl.ok("status", config=broken)
    h.expect("service web: up" in out and f"warning: {broken} has 1 error" in err,
             f"status with a broken file: the detail and a warning:\n{out}\n{err}")
    ctl.ok("drain", "on", "--service", "web", config=broken)
    hap.wait_status("bweb", "s1", "DRAIN (agent)", BOUND_S, "bweb/s1 DRAIN")
    ctl.ok("drain", "off", "--service", "web", config=broken)
    hap.wait_status("bweb", "s1", "UP", BOUND_S, "bweb/s1 UP")

    h.section("reload without the detail: refused")
    _, err, _ = ctl.fails(1, "-s", f"127.0.0.1:{port}", "reload", config=wrong)
    h.expect("needs lbagent's detailed status" in err, f"reload without detail: {err!r}")
    _, err, _ = ctl.fails(1, "-s", f"127.0.0.1:{port}", "why", config=wrong)
    h.expect("why needs lbagent's detailed status" in err, f"why without detail: {err!r}")
    _, err, _ = ctl.fails(1, "-s", f"127.0.0.1:{port}", "fleet", config=wrong)
    h.expect("fleet needs lbagent's detailed status (its peers)" in err,
             f"fleet without detail: {err!r}")
    # The public part still says whether it serves: --short, and the exit status.
    out, _ = ctl.ok("-s", f"127.0.0.1:{port}", "status", "--short", config=wrong)
    h.expect(re.search(r"^web +up +- +-$", out, re.M), f"status --short, public: {out!r}")

    h.section("mode auto under LBAGENT_MODE=off: the marker goes, automation stays off")
    lb.stop()
    lb.set_env("LBAGENT_MODE", "off")
    lb.start()
    h.wait_until(lambda: status_of(unix, "")["automation"], h.startup_bound_s(),
                 "the API after the restart", ok=lambda a: a == "off")
    ctl.ok("mode", "off")
    out, err = ctl.ok("mode", "auto")
    h.expect(not os.path.exists(lb.marker_path("off")), "the off marker is gone")
    h.expect("automation stays off: LBAGENT_MODE=off" in err, f"mode auto says why: {err!r}")
    lb.stop()
    lb.set_env("LBAGENT_MODE", None)

    h.section("lbagent not running")
    _, err, _ = ctl.fails(1, "status")
    h.expect(f"lbagent is not running (no answer on unix:{sock}, 127.0.0.1:{port})" in err,
             f"status without the daemon: {err!r}")
    _, err, _ = ctl.fails(1, "-s", f"127.0.0.1:{port}", "status")
    h.expect(f"lbagent is not running (no answer on 127.0.0.1:{port})" in err, repr(err))
    _, err, _ = ctl.fails(1, "reload")
    h.expect("lbagent is not running" in err, f"reload without the daemon: {err!r}")
    _, err, took = ctl.fails(1, "drain", "on", "--reason", "while stopped")
    h.expect(os.path.exists(marker) and "lbagent was not there to confirm it" in err,
             f"drain on without the daemon: {err!r}")
    h.expect(took < 5.0 * h._time_scale(), f"no waiting for a daemon that is not there: "
                                           f"{took:.1f} s")
    lb.start()
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "DRAIN (agent)", h.startup_bound_s() + BOUND_S,
                        f"{be}/s1 DRAIN once lbagent started")
    ctl.ok("drain", "off")
    for be in ("be", "bweb"):
        hap.wait_status(be, "s1", "UP", BOUND_S, f"{be}/s1 UP at the end")

    h.section("the token never shows")
    for argv, out, err in ctl.outputs:
        h.expect(TOKEN not in out and TOKEN not in err,
                 f"the token appears in the output of {argv}")
    h.expect(TOKEN not in lb.log(), "the token appears in lbagent's log")


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


h.run(main)
