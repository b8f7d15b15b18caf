"""An operator's MAINT (Runtime API `set server be/s1 state maint`) is not
undone by lbagent: `ready` would cancel it, and lbagent sends `ready` only to
load balancers that saw a drain or maint it asserted itself.

A: lbagent asserted nothing -> MAINT holds for ten agent-inters and at
   least ten agent checks, and no `ready` is sent or logged.
B: after a drain lbagent asserted was released (ready delivered, UP), and
   well past the restore window, an operator MAINT holds the same way.

The agent checks go through an AgentTap, which relays them from HAProxy's
own source address and records every reply: that is the evidence of what
lbagent sent."""

import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()            # 1 s pickup + 2 agent-inters + 2 s margin
HOLD_S = 10 * h.AGENT_INTER_MS / 1000   # ten agent-inters
MIN_CHECKS = 10                         # ...and at least this many agent checks seen
# The restore window is twice the longest gap between a key's checks (here
# about 2 x 150 ms); 3 s is many windows past it.
PAST_WINDOW_S = 3.0


def sent_ready(exchanges):
    return [x for x in exchanges if b"ready" in x.words()]


def operator_maint_holds(lb, hap, tap, context):
    h.section(f"operator MAINT ({context})")
    log_mark, tap_mark = lb.log_mark(), tap.mark()
    hap.set_server_state("be", "s1", "maint")
    hap.wait_status("be", "s1", "MAINT", 2, "s1 MAINT right after the operator's command")
    hap.hold_status(
        "be", "s1", "MAINT", HOLD_S,
        f"operator's MAINT ({context}) for ten agent-inters and {MIN_CHECKS} agent checks",
        until=lambda: len(tap.exchanges(tap_mark, hap.source)) >= MIN_CHECKS,
        until_what=f"{MIN_CHECKS} agent checks from {hap.source}",
        until_timeout_s=h.agent_checks_bound_s(MIN_CHECKS))
    seen = tap.exchanges(tap_mark, hap.source)
    ready = sent_ready(seen)
    h.expect(not ready,
             f"lbagent sent 'ready' to {hap.source} during the operator's MAINT ({context}):"
             f" {ready!r}")
    h.expect(all(x.words() == [b"up"] for x in seen),
             f"expected every reply during the operator's MAINT ({context}) to be 'up', "
             f"saw {sorted(set(x.reply for x in seen))!r}")
    logged = [l for l in lb.log_since(log_mark).splitlines()
              if re.search(r"\bready\b", l, re.IGNORECASE)]
    h.expect(not logged, f"lbagent logged 'ready' during the operator's MAINT ({context}):\n"
             + "\n".join(logged))
    ss = hap.server_state("be", "s1")
    h.expect(ss["srv_admin_state"] & 1, f"expected the forced-MAINT bit, saw {ss}")

    h.section("operator sets the server ready again")
    hap.set_server_state("be", "s1", "ready")
    hap.wait_status("be", "s1", "UP", 5, "s1 UP after the operator's `state ready`")


def main():
    lb = h.Lbagent({"reply_reasons": "yes"})
    tap = h.AgentTap(lb.port)
    hap = h.Haproxy([h.Server("s1", tap)])
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start",
                    ok=lambda st: h.agent_result(st) == "L7OK")

    operator_maint_holds(lb, hap, tap, "lbagent asserted nothing")

    h.section("lbagent drains, then releases")
    lb.set_marker("drain", "patching\n")
    hap.wait_status("be", "s1", "DRAIN (agent)", BOUND_S, "s1 DRAIN (agent)")
    released_at = tap.mark()
    lb.clear_marker("drain")
    hap.wait_status("be", "s1", "UP", BOUND_S, "s1 UP after the drain marker was removed")
    h.expect(sent_ready(tap.exchanges(released_at, hap.source)),
             f"s1 came back UP but the tap saw no 'ready' reply to {hap.source}: "
             f"{tap.exchanges(released_at, hap.source)!r}")
    h.section(f"waiting {PAST_WINDOW_S} s, well past the restore window")
    hap.hold_status("be", "s1", "UP", PAST_WINDOW_S, "s1 staying UP after the release")
    last = tap.exchanges(tap.mark() - 3, hap.source)
    h.expect(last and all(x.words() == [b"up"] for x in last),
             f"expected plain 'up' replies well past the restore window, saw {last!r}")

    operator_maint_holds(lb, hap, tap, "after a drain lbagent asserted and released")


h.run(main)
