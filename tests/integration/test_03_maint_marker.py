"""The maint marker: present -> HAProxy MAINT and the reply carries the
reason; removed -> `ready` restores UP. Maint wins over drain: with both
markers the reply is maint; removing maint leaves the drain in force."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()   # 1 s pickup + 2 agent-inters + 2 s margin


def expect_admin(hap, bits, what):
    ss = hap.server_state("be", "s1")
    h.expect((ss["srv_admin_state"] & 9) == bits,
             f"{what}: expected srv_admin_state forced bits {bits} "
             f"(1 MAINT, 8 DRAIN), saw {ss}")


def back_up(lb, hap, what):
    hap.wait_status("be", "s1", "UP", BOUND_S, f"s1 UP after {what}")
    h.wait_until(lambda: hap.server_state("be", "s1"), 2, "srv_admin_state back to 0",
                 ok=lambda ss: ss["srv_admin_state"] == 0 and ss["srv_op_state"] == 2)
    h.wait_until(lb.ask, 10, "plain raw 'up' once the restore window has passed",
                 ok=lambda r: r == b"up\n")


def main():
    lb = h.Lbagent({"reply_reasons": "yes"})
    hap = h.Haproxy([lb])
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start",
                    ok=lambda st: h.agent_result(st) == "L7OK")

    h.section("maint marker with a reason")
    lb.set_marker("maint", "disk replacement\n")
    hap.wait_status("be", "s1", "MAINT", BOUND_S, "s1 MAINT after the marker")
    expect_admin(hap, 1, "maint marker")
    h.expect_equal(lb.ask(), b"maint up #disk replacement\n", "raw reply in maint")

    h.section("maint marker removed")
    lb.clear_marker("maint")
    back_up(lb, hap, "the maint marker was removed")

    h.section("empty maint marker")
    lb.set_marker("maint")
    hap.wait_status("be", "s1", "MAINT", BOUND_S, "s1 MAINT after an empty marker")
    h.expect_equal(lb.ask(), b"maint up #maint marker\n", "raw reply for an empty maint marker")
    lb.clear_marker("maint")
    back_up(lb, hap, "the empty maint marker was removed")

    h.section("maint and drain together: maint wins")
    lb.set_marker("drain", "rebalancing\n")
    lb.set_marker("maint", "disk replacement\n")
    hap.wait_status("be", "s1", "MAINT", BOUND_S, "s1 MAINT with both markers")
    h.expect_equal(lb.ask(), b"maint up #disk replacement\n", "raw reply with both markers")
    hap.hold_status("be", "s1", "MAINT", 10 * h.AGENT_INTER_MS / 1000,
                    "s1 staying MAINT with both markers")

    h.section("maint removed, drain still there")
    lb.clear_marker("maint")
    # HAProxy's `drain` clears its forced MAINT and sets DRAIN.
    hap.wait_status("be", "s1", "DRAIN (agent)", BOUND_S,
                    "s1 DRAIN (agent) once only the drain marker is left")
    expect_admin(hap, 8, "only the drain marker left")
    h.expect_equal(lb.ask(), b"drain up #rebalancing\n", "raw reply with only the drain marker")

    h.section("drain removed too")
    lb.clear_marker("drain")
    back_up(lb, hap, "both markers were removed")


h.run(main)
