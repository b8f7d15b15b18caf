"""lbagentctl why and status --short against real daemons, in the states an
operator meets: real http probes against a local server the test flips, a
file probe that lowers the weight, markers, automation off, a restart.

Three daemons, each with windows that keep one state in place while it is
looked at (an hour where the test must not race the clock):
- `slow` (down_after 1h): failing, still up: why says the probe, how long
  it has failed and when it goes down; exit 0;
- `quick` (down_after 0, up_after 1h): all passing (exit 0); a weight by
  the rules (which probe); down (exit 3): the probe, and that it comes back
  after 1h of passing; passing again: "1h of passing; Ns so far"; held
  from before a restart; the drain marker (its reason, the command that
  ends it, what the probes say underneath); automation off by the marker;
- `ramp` (ramp 1h): recovering, x% now, full weight by HH:MM:SS;
- status --short: one line per service, its reply, why, since; status's
  exit status 0 / 3 / 1 (no daemon), the same for `status SERVICE` and
  `why`."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 200
TIMEOUT_MS = 150
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
CLOCK = r"\d\d:\d\d:\d\d"


def ctl(lb, *args):
    return h.lbagentctl("-f", lb.config_path, *args)


def expect_rc(lb, rc, *args):
    got, out, err = ctl(lb, *args)
    h.expect(got == rc, f"lbagentctl {' '.join(args)}: exit {got}, expected {rc}\n"
                        f"  stdout: {out!r}\n  stderr: {err!r}")
    for line in out.splitlines():
        h.expect(len(line) <= 80, f"lbagentctl {' '.join(args)}: a line of "
                                  f"{len(line)} columns: {line!r}")
    # The outputs in the test's log, for whoever reads a failure.
    print(f"$ lbagentctl {' '.join(args)}  [exit {got}]\n{out}", file=sys.stderr)
    return out


def expect_lines(out, *patterns):
    # why's wrapped lines go on under four spaces: one line each here.
    text = out.replace("\n    ", " ")
    for p in patterns:
        h.expect(re.search(p, text, re.M) is not None,
                 f"no line matching {p!r} in:\n{out}")


def daemon(srv, name, agent, half=None):
    d = h.tmpdir()
    sock = os.path.join(d, f"{name}.sock")
    sections = {
        "agent": {"reply_reasons": "yes", "node_id": name, "restore_after": "0",
                  "ramp": "0", "flap_limit": "0", **agent},
        "http": {"listen": f"unix:{sock}"},
        "probe client-api": {"type": "http", "url": srv.url(f"/{name}"),
                             "interval": f"{INTERVAL_MS}ms", "timeout": f"{TIMEOUT_MS}ms"},
        "service web": {"probes": "client-api" + (", half" if half else "")},
    }
    if half:
        sections["probe half"] = {"type": "file", "path": half, "on_crit": "50%",
                                  "interval": f"{INTERVAL_MS}ms",
                                  "timeout": f"{TIMEOUT_MS}ms"}
    lb = h.Lbagent(sections, name=name)
    lb.sock = f"unix:{sock}"
    return lb


def web(lb):
    _, doc = h.http_json(lb.sock, "/status")
    for s in doc["services"]:
        if s["name"] == "web":
            return s
    raise h.TestFailure(f"no service web in /status of {lb.name}")


def main():
    h.require_kinds("http", "file")
    srv = h.HttpStub()
    for name in ("slow", "quick", "ramp"):
        srv.set(f"/{name}", 200, "ok\n")
    half = os.path.join(h.tmpdir(), "half.ok")
    h.write_atomic(half, "ok\n")
    slow = daemon(srv, "slow", {"down_after": "1h", "up_after": "1h"})
    quick = daemon(srv, "quick", {"down_after": "0", "degrade_after": "0",
                                  "up_after": "1h"}, half=half)
    ramp = daemon(srv, "ramp", {"down_after": "0", "up_after": "0", "ramp": "1h",
                                "ramp_start": "25%"})
    for lb in (slow, quick, ramp):
        h.wait_until(lambda: all(p["settled"] for p in web(lb)["probes"]),
                     h.startup_bound_s() + BOUND_S, f"{lb.name}: every probe's verdict")

    h.section("all passing: exit 0, why says so")
    out = expect_rc(quick, 0, "why", "web")
    expect_lines(out, rf"^web: up since {CLOCK} \(.* ago\), serving$",
                 r"^  every probe passing$", r"^  goes out when a probe fails")
    out = expect_rc(quick, 0, "status", "--short")
    expect_lines(out, r"^SERVICE +REPLY +WHY +SINCE$",
                 rf"^web +up +all probes passing +{CLOCK}$",
                 rf"^\(default\) +up +no probes: up unless a marker says otherwise +{CLOCK}$")
    expect_rc(quick, 0, "status")
    expect_rc(quick, 0, "status", "web")

    h.section("a weight by the rules: which probe; still serving")
    os.unlink(half)
    h.wait_until(lambda: web(quick)["weight"], BOUND_S, "quick: web at 50%",
                 ok=lambda w: w == 50)
    out = expect_rc(quick, 0, "why", "web")
    expect_lines(out, rf"^web: up 50% since {CLOCK}", r"^  because half: does not exist$")
    out = expect_rc(quick, 0, "status", "--short", "web")
    expect_lines(out, rf"^web +up 50% +half: does not exist +{CLOCK}$")
    h.write_atomic(half, "ok\n")
    h.wait_until(lambda: web(quick)["weight"], BOUND_S, "quick: web back at 100%",
                 ok=lambda w: w == 100)

    h.section("failing, not down yet: how long, and when it goes down")
    srv.set("/slow", 503, "no\n")
    h.wait_until(lambda: (web(slow)["transition"]["pending"] or {}).get("for_s"),
                 BOUND_S, "slow: failing, pending down", ok=lambda s: s is not None)
    out = expect_rc(slow, 0, "why", "web")
    expect_lines(out, rf"^web: up since {CLOCK} \(.* ago\), serving$",
                 r"^  the probes say down: client-api: HTTP 503",
                 r"^  goes down after 1h of failing; \S+ so far$")
    out = expect_rc(slow, 0, "status", "--short", "web")
    expect_lines(out, r"^web +up +client-api: HTTP 503")

    h.section("down by the rules: exit 3, the probe, what brings it back")
    srv.set("/quick", 503, "no\n")
    h.wait_until(lambda: web(quick)["state"], BOUND_S, "quick: web down",
                 ok=lambda s: s == "down")
    out = expect_rc(quick, 3, "why", "web")
    expect_lines(out, rf"^web: down since {CLOCK} \(.* ago\), not serving$",
                 r"^  because client-api: HTTP 503",
                 r"^  comes back after 1h of passing, once the probes pass$")
    expect_rc(quick, 3, "status")
    expect_rc(quick, 3, "status", "web")
    out = expect_rc(quick, 3, "status", "--short")
    expect_lines(out, rf"^web +down +client-api: HTTP 503.* {CLOCK}$")
    srv.set("/quick", 200, "ok\n")
    h.wait_until(lambda: (web(quick)["transition"]["pending"] or {}).get("towards"),
                 BOUND_S, "quick: passing, pending up", ok=lambda t: t == "up")
    out = expect_rc(quick, 3, "why", "web")
    expect_lines(out, r"^  comes back after 1h of passing; \S+ so far$")

    h.section("held from before a restart")
    quick.stop()
    quick.start()
    h.wait_until(lambda: web(quick)["state"], h.startup_bound_s(), "quick: back, down",
                 ok=lambda s: s == "down")
    out = expect_rc(quick, 3, "why", "web")
    expect_lines(out, rf"^  held from before lbagent started at {CLOCK}")

    h.section("a marker: which, its reason, what ends it")
    expect_rc(quick, 0, "drain", "on", "--reason", "kernel upgrade (alice)")
    out = expect_rc(quick, 3, "why", "web")
    expect_lines(out, rf"^web: drain since {CLOCK} \(.* ago\), not serving$",
                 r"^  because of the drain marker \(node-wide\): kernel upgrade \(alice\)$",
                 r"^  ends with `lbagentctl drain off`$",
                 r"^  underneath, the probes say up$")
    out = expect_rc(quick, 3, "status", "--short", "web")
    expect_lines(out, rf"^web +drain down +drain marker: kernel upgrade \(alice\) +{CLOCK}$")
    expect_rc(quick, 0, "drain", "off")

    h.section("automation off by the marker")
    expect_rc(quick, 0, "mode", "off", "--service", "web")
    out = expect_rc(quick, 3, "why", "web")
    expect_lines(out, r"^  automation is off \(marker .*web/off\)",
                 r"^  ends with `lbagentctl mode auto --service web`$")
    expect_rc(quick, 0, "mode", "auto", "--service", "web")

    h.section("the ramp: x% now, full weight by when")
    srv.set("/ramp", 503, "no\n")
    h.wait_until(lambda: web(ramp)["state"], BOUND_S, "ramp: down", ok=lambda s: s == "down")
    srv.set("/ramp", 200, "ok\n")
    h.wait_until(lambda: web(ramp)["transition"]["ramp"], BOUND_S, "ramp: recovering",
                 ok=lambda r: r is not None)
    out = expect_rc(ramp, 0, "why", "web")
    expect_lines(out, rf"^web: up \d+% since {CLOCK}",
                 rf"^  recovering: \d+% now, 100% by {CLOCK} \(in \S+\)$")

    h.section("no daemon: exit 1")
    slow.stop()
    got, out, err = ctl(slow, "status")
    h.expect(got == 1 and "lbagent is not running" in err, f"status: {got} {err!r}")
    got, out, err = ctl(slow, "why")
    h.expect(got == 1 and "lbagent is not running" in err, f"why: {got} {err!r}")
    got, out, err = ctl(slow, "status", "--short")
    h.expect(got == 1, f"status --short: {got} {err!r}")


h.run(main)
