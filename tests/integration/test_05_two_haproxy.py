"""Every load balancer gets the restore word: two HAProxy instances (sources
127.0.0.2 and 127.0.0.3) checking one lbagent both drain and both come back
UP. Variant: one HAProxy with two backends naming the same lbagent, without
agent-send, so both checks share one key (same source, same empty text):
both backends drain and both come back UP."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()   # 1 s pickup + 2 agent-inters + 2 s margin
HOLD_S = 10 * h.AGENT_INTER_MS / 1000


def drain_and_release(lb, haps, label):
    h.wait_all_status(haps, "UP", h.startup_bound_s(), f"{label}: every server UP at start")
    h.section(f"{label}: drain marker")
    lb.set_marker("drain", "maintenance window\n")
    h.wait_all_status(haps, "DRAIN (agent)", BOUND_S, f"{label}: every server DRAIN (agent)")

    h.section(f"{label}: drain marker removed")
    lb.clear_marker("drain")
    h.wait_all_status(haps, "UP", BOUND_S, f"{label}: every server UP after removal")
    for hap in haps:
        for be, srv in hap.server_names():
            ss = hap.server_state(be, srv)
            h.expect(ss["srv_admin_state"] == 0,
                     f"{hap.name} {be}/{srv}: expected srv_admin_state 0 after the drain "
                     f"was released, saw {ss}")
    # UP must last: a server left with a forced flag would not be UP at all,
    # but a late `drain` would bring it back to DRAIN.
    h.hold_all_status(haps, "UP", HOLD_S, f"{label}: every server staying UP")


def main():
    h.section("two HAProxy instances, one lbagent")
    lb = h.Lbagent({"reply_reasons": "yes"})
    hap1 = h.Haproxy([lb], source="127.0.0.2")
    hap2 = h.Haproxy([lb], source="127.0.0.3")
    drain_and_release(lb, [hap1, hap2], "two instances")
    hap1.stop()
    hap2.stop()
    lb.stop()

    h.section("one HAProxy, two backends naming the same lbagent, no agent-send")
    lb = h.Lbagent({"reply_reasons": "yes"})
    hap = h.Haproxy(backends={"be1": [lb], "be2": [lb]}, source="127.0.0.4")
    drain_and_release(lb, [hap], "two backends, one key")


h.run(main)
