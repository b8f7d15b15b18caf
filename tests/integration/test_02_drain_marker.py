"""The drain marker: present -> HAProxy DRAIN (agent) and the reply carries
the marker's reason; removed -> `ready` restores UP with no admin flag left.
Then the same with an empty marker, whose reason is "drain marker"."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()   # 1 s pickup + 2 agent-inters + 2 s margin


def released(lb):
    """After the marker is gone: polls raw checks from 127.0.0.1 (a key that
    saw the drain through earlier raw checks). The first reply that is no
    longer a drain must carry `ready` (owed at least once), and plain `up`
    must follow once the window has passed."""
    seen = []

    def not_drain():
        r = lb.ask()
        seen.append(r)
        return r

    first = h.wait_until(not_drain, BOUND_S, "a raw reply other than drain after removal",
                         ok=lambda r: not r.startswith(b"drain"))
    h.expect(first.startswith(b"ready up") and first.endswith(b"\n") and first.count(b"\n") == 1,
             f"first raw reply to a key that saw the drain, after the marker was removed: "
             f"expected one line starting 'ready up', saw {first!r} (replies so far: {seen[-5:]!r})")
    h.wait_until(lb.ask, 10, "plain 'up' once the restore window has passed",
                 ok=lambda r: r == b"up\n")


def cycle(lb, hap, text, reason):
    h.section(f"drain marker with content {text!r}")
    lb.set_marker("drain", text)
    hap.wait_status("be", "s1", "DRAIN (agent)", BOUND_S, "s1 DRAIN (agent) after the marker")
    ss = hap.server_state("be", "s1")
    h.expect(ss["srv_admin_state"] & 8 and not ss["srv_admin_state"] & 1,
             f"expected the forced-DRAIN bit (8) and no MAINT bit in srv_admin_state, saw {ss}")
    # HAProxy already applied the drain, so the daemon has the marker: no wait.
    h.expect_equal(lb.ask(), b"drain up #" + reason + b"\n", "raw reply while draining")
    h.expect_equal(lb.ask(send=b"web\n"), b"drain up #" + reason + b"\n",
                   "raw reply while draining, sending 'web\\n'")

    h.section("marker removed")
    lb.clear_marker("drain")
    hap.wait_status("be", "s1", "UP", BOUND_S, "s1 UP after the marker was removed")
    ss = h.wait_until(lambda: hap.server_state("be", "s1"), 2, "srv_admin_state back to 0",
                      ok=lambda ss: ss["srv_admin_state"] == 0 and ss["srv_op_state"] == 2)
    h.expect_equal(hap.stat("be", "s1")["weight"], "100", "weight after the drain")
    released(lb)


def main():
    lb = h.Lbagent({"reply_reasons": "yes"})
    hap = h.Haproxy([lb])
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start",
                    ok=lambda st: h.agent_result(st) == "L7OK")
    cycle(lb, hap, "kernel upgrade\nsecond line is not the reason\n", b"kernel upgrade")
    cycle(lb, hap, "", b"drain marker")
    hap.hold_status("be", "s1", "UP", 10 * h.AGENT_INTER_MS / 1000,
                    "s1 staying UP after the drain was released")


h.run(main)
