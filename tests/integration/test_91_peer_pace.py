"""Ask only as often as a decision needs (issue 34): one node judged from
a real HAProxy alone ([haproxy] sources, no [peers] agents), read over its
TCP Runtime API through a tap (a second HAProxy, one TCP `listen`), whose
frontend counts every connection: one question each, counted outside
lbagent. [peers] interval 200ms (fast), steady_interval 1s. Nothing reads
the node's detail while questions are counted (a read gets a round of its
own); /metrics is not a reader.

1. in and healthy: no question over the window;
2. held out by a maint marker (nothing waits on the view): questions at
   the steady pace, between half of window/steady_interval and
   window/(0.8 * steady_interval) + 2 (each wait is up to 20% shorter,
   never longer), far fewer than the fast pace would ask;
3. its dependency failing with no other server in the backend: going out
   is due, the guard holds it in (a decision waits on the view):
   questions at the fast pace, more than the steady pace's bound allows.

The bounds count questions over a known window, from the configured
intervals: no timing of any one of them."""

import os
import re
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

FAST_MS = 200
STEADY_MS = 1000
WINDOW_S = 6.0
# A round in flight when a window opens or closes, and the first one of a
# new pace, are one question more or less at either end.
STEADY_MAX = int(WINDOW_S * 1000 / (0.8 * STEADY_MS)) + 2
STEADY_MIN = int(WINDOW_S * 1000 / STEADY_MS) // 2
# The dependency's probe never nears its timeout while it passes, however
# busy the machine: a timed-out run is a failure that asks the guard.
PROBE_INTERVAL_MS = 500
PROBE_TIMEOUT_MS = 450


def questions(tap):
    for r in tap.stats():
        if r["pxname"] == "tap" and r["svname"] == "FRONTEND":
            return int(r["stot"])
    raise h.TestFailure("no tap FRONTEND in the tap's show stat")


def over(tap, seconds):
    q0 = questions(tap)
    time.sleep(seconds)
    return questions(tap) - q0


def guard_state(lb):
    status, _, body = h.http_request(lb.http_port, "/metrics")
    h.expect_equal(status, 200, "/metrics code")
    m = re.search(r'^lbagent_peer_guard\{service="[^"]*",state="(\w+)"\} 1$',
                  body.decode(), re.M)
    return m.group(1) if m else None


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    dep = os.path.join(d, "dep")
    h.write_atomic(dep, "ok\n")
    tap_port = h.free_port()
    http_port = h.free_port()
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE},
        "http": {"listen": f"127.0.0.1:{http_port}"},
        "peers": {"interval": f"{FAST_MS}ms", "steady_interval": f"{STEADY_MS}ms",
                  "timeout": "2s"},
        "haproxy": {"sources": f"tcp:127.0.0.1:{tap_port}", "backend": "be",
                    "server": "s1"},
        "probe dep": {"type": "file", "path": dep, "interval": f"{PROBE_INTERVAL_MS}ms",
                      "timeout": f"{PROBE_TIMEOUT_MS}ms", "on_crit": "down"},
    })
    lb.http_port = http_port
    hap = h.Haproxy([h.Server("s1", lb)], stats_tcp=True)
    tap = h.Haproxy(backends={"tap": []}, name="tap", config_text="\n".join([
        "global", "    stats socket {socket} level admin", "",
        "defaults", "    mode tcp", "    timeout connect 1s",
        "    timeout client 5s", "    timeout server 5s", "",
        "listen tap", f"    bind 127.0.0.1:{tap_port}",
        f"    server lb {hap.stats_tcp_address()}", ""]))
    h.wait_all_status([hap], "UP", h.startup_bound_s(), "s1 UP")
    # Start-up's own round, and any round in flight, are over by then.
    time.sleep(2.0)

    h.section("in and healthy: nobody is asked")
    n = over(tap, WINDOW_S)
    h.expect_equal(n, 0, f"questions over {WINDOW_S:g}s while in and healthy")

    h.section("held out by a marker: the steady pace")
    lb.set_marker("maint", "patching")
    h.wait_reply(lb, lambda r: r.startswith(b"maint "), "the maint marker replied")
    # The marker's own round (it asks once the marker took effect) is over.
    time.sleep(2.0)
    n = over(tap, WINDOW_S)
    h.expect(STEADY_MIN <= n <= STEADY_MAX,
             f"held out: {n} questions over {WINDOW_S:g}s, expected {STEADY_MIN} to "
             f"{STEADY_MAX} (steady_interval {STEADY_MS} ms; the fast pace would "
             f"ask about {int(WINDOW_S * 1000 / FAST_MS)})")
    steady = n
    lb.clear_marker("maint")
    h.wait_reply(lb, b"up\n", "up again without the marker")

    h.section("going out due, held in by the guard: the fast pace")
    os.unlink(dep)
    h.wait_until(lambda: guard_state(lb), h.probe_bound_s(PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS) + 5.0,
                 "the guard holds the node in (no other server serves)",
                 ok=lambda st: st == "holding")
    n = over(tap, WINDOW_S)
    h.expect(n > STEADY_MAX,
             f"held in by the guard: {n} questions over {WINDOW_S:g}s, more than the "
             f"steady pace's {STEADY_MAX} (steady gave {steady}; interval {FAST_MS} ms)")
    h.expect_equal(guard_state(lb), "holding", "still held in")
    print(f"  steady: {steady} questions, fast: {n}, over {WINDOW_S:g} s")


if __name__ == "__main__":
    h.run(main)
