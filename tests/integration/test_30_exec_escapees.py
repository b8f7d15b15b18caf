"""Exec probes whose programs leave processes running outside their process
group (setsid, a double fork) do not leave them behind.

- `left`: a script that starts `setsid sleep 3001 &` and `sh -c 'setsid sh
  -c "sleep 3002 & wait" &'` (a double fork into a new session, two deep)
  and exits 0, every 300 ms;
- `hung`: a script that starts `setsid sh -c "trap '' TERM; exec sleep
  3003"` (ignoring SIGTERM) and then hangs until its 200 ms timeout, every
  1.5 s (a timed-out run's group gets SIGKILL a second after SIGTERM).

Over a dozen runs of `left` and five of `hung`, at most one of each marker
process is alive at any time (the current run's), and each one seen is
gone within a run:
lbagent kills what its runs leave behind, SIGKILL, so SIGTERM being ignored
does not matter. lbagent collects them (no zombie children pile up). After
lbagent stops, none remains."""

import json
import os
import socket
import sys
import http.client

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

MARKERS = ("sleep 3001", "sleep 3002", "sleep 3003")
RUNS = {"left": 12, "hung": 5}


def alive(pid):
    """True unless pid is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def marker_pids(m):
    """Processes whose command line is exactly the marker (not the shells
    that start them)."""
    return [p for p, cmd in h.pgrep_f(m) if cmd == m]


def markers():
    """{marker: [pid, ...]} of the live marker processes."""
    return {m: [p for p in marker_pids(m) if alive(p)] for m in MARKERS}


def runs(sock):
    conn = http.client.HTTPConnection("localhost", timeout=5)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock)
    conn.sock = s
    try:
        conn.request("GET", "/status")
        doc = json.loads(conn.getresponse().read())
    finally:
        conn.close()
    return {p["name"]: sum(p["runs"].values()) for p in doc["services"][0]["probes"]}


def kill_markers():
    """What a failing run leaves must not outlive the test."""
    for m in MARKERS:
        for pid in marker_pids(m):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


started = []


def main():
    try:
        scenario()
    finally:
        # A daemon still running would go on leaving them.
        for lb in started:
            if lb.alive():
                lb.kill()
        kill_markers()


def scenario():
    h.require_kinds("exec")
    if not os.access("/usr/bin/setsid", os.X_OK):
        raise h.TestFailure("/usr/bin/setsid (util-linux) is needed")
    h.expect(not any(markers().values()), f"marker processes before the test: {markers()}")
    d = h.tmpdir()
    left = h.write_script(os.path.join(d, "left"), """
/usr/bin/setsid sleep 3001 &
sh -c '/usr/bin/setsid sh -c "sleep 3002 & wait" &'
sleep 0.1
echo left two behind
""")
    hung = h.write_script(os.path.join(d, "hung"), """
/usr/bin/setsid sh -c "trap '' TERM; exec sleep 3003" &
exec sleep 60
""")
    sock = os.path.join(d, "http.sock")
    lb = h.Lbagent({
        "agent": {"down_after": "0", "up_after": "0", "ramp": "0",
                  "degrade_after": "0", "restore_after": "0"},
        "http": {"listen": f"unix:{sock}"},
        "probe left": {"type": "exec", "command": left, "interval": "400ms",
                       "timeout": "300ms", "on_crit": "ignore"},
        "probe hung": {"type": "exec", "command": hung, "interval": "1500ms",
                       "timeout": "200ms", "on_crit": "ignore"},
    })
    started.append(lb)

    h.section(f"runs {RUNS}: at most the current run's marker processes alive")
    seen = {m: set() for m in MARKERS}

    def at_most_one():
        now = markers()
        for m, pids in now.items():
            seen[m].update(pids)
        return now

    h.hold_for(at_most_one, 1.0, "at most one live process per marker",
               ok=lambda now: all(len(p) <= 1 for p in now.values()),
               until=lambda: all(n >= RUNS[p] for p, n in runs(sock).items()),
               until_what=f"runs {RUNS}", until_timeout_s=30)
    for m in MARKERS:
        h.expect(len(seen[m]) >= 2, f"{m}: the runs left processes to kill: {seen[m]}")

    h.section("every one seen is gone within a run; no zombies pile up")
    bound = h.probe_bound_s(1500, 1200)
    for m in MARKERS:
        for pid in sorted(seen[m]):
            h.wait_until(lambda: not alive(pid), bound, f"{m} (pid {pid}) to be killed",
                         ok=lambda gone: gone)
    h.wait_until(lambda: [c for c in h.proc_children(lb.pid) if c[1] == "Z"],
                 bound, "lbagent to reap what it killed", ok=lambda z: len(z) == 0)
    log = lb.log()
    h.expect("left running outside" in log,
             "the log says what was killed")
    h.expect(log.count("left running outside") == 1,
             "the kills are logged once a minute at most, with a count")

    h.section("lbagent stopped: none remains")
    lb.stop(expect_rc=0)
    left_over = markers()
    h.expect(not any(left_over.values()), f"marker processes after lbagent stopped: {left_over}")


h.run(main)
