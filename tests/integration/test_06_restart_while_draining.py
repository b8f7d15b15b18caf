"""What lbagent owes survives a restart: two HAProxy instances drain; lbagent
stops; the marker is removed while it is down; once started again (same
state_dir) it still sends `ready` to both, and both come back UP.

Run twice with fresh processes: stopped with SIGTERM (clean exit, status 0),
and killed with SIGKILL right after both load balancers showed the drain, so
what each saw must already be on disk by then."""

import os
import signal
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()   # 1 s pickup + 2 agent-inters + 2 s margin
HOLD_S = 10 * h.AGENT_INTER_MS / 1000


def scenario(how):
    label = f"stopped by {how.name}"
    h.section(f"{label}: two HAProxy instances drain")
    lb = h.Lbagent({"reply_reasons": "yes"})
    haps = [h.Haproxy([lb]), h.Haproxy([lb])]
    h.wait_all_status(haps, "UP", h.startup_bound_s(), f"{label}: both UP at start")
    lb.set_marker("drain", "kernel upgrade\n")
    h.wait_all_status(haps, "DRAIN (agent)", BOUND_S, f"{label}: both DRAIN (agent)")

    h.section(f"{label}: lbagent stops, marker removed while it is down")
    if how == signal.SIGTERM:
        lb.stop(expect_rc=0)
        state = os.path.join(lb.state_dir, "state.json")
        h.expect(os.path.exists(state),
                 f"{label}: expected {state} after a clean stop; state_dir holds "
                 f"{sorted(os.listdir(lb.state_dir))}")
    else:
        lb.kill()
    lb.clear_marker("drain")
    # With the agent unreachable HAProxy keeps what it was last told.
    h.hold_all_status(haps, "DRAIN (agent)", 3 * h.AGENT_INTER_MS / 1000,
                      f"{label}: both staying DRAIN (agent) while lbagent is down")

    h.section(f"{label}: lbagent starts again")
    lb.start()
    h.wait_all_status(haps, "UP", BOUND_S, f"{label}: both UP after the restart")
    for hap in haps:
        ss = hap.server_state("be", "s1")
        h.expect(ss["srv_admin_state"] == 0,
                 f"{label}: {hap.name}: expected srv_admin_state 0, saw {ss}")
    h.hold_all_status(haps, "UP", HOLD_S, f"{label}: both staying UP")
    lb.stop(expect_rc=0)
    for hap in haps:
        hap.stop()


def main():
    scenario(signal.SIGTERM)
    scenario(signal.SIGKILL)


h.run(main)
