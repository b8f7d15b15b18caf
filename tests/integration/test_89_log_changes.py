"""The log says what changed in kind, not every ramp step (issue 32).

An exec probe whose output the test writes (a file the command prints, its
exit status in a second file) drives web's reply through a sequence; each
reply is waited for on the agent port (the reply changes at once, whatever
the log does), then the log's `reply changed` lines are counted, at warning
and at debug level (lbagent runs with -d):

  ok -> warn (up 50%)                warning   (a change in kind)
  crit: down                         warning
  ok: the recovery ramp starts       warning
  ramp steps                         debug     (however many there are)
  the ramp ends at full weight       warning
  crit: down, ok: the ramp again     warning x3, its steps at debug

so exactly 7 warnings, and every step between at debug, by construction.
(A change of a number only in a reason, which only a window's reason
makes, is the unit test service's: its log at warning once a minute.)"""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

# A timeout is a reply change of its own: the check must never come near
# it, however busy the machine (an exec under a loaded suite).
INTERVAL_MS = 500
TIMEOUT_MS = 450
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
RAMP_S = 3


def main():
    h.require_kinds("exec")
    d = h.tmpdir()
    # The exit code and the words in one file, replaced at once: a run
    # never reads one of them new and the other old.
    said = os.path.join(d, "said")
    script = os.path.join(d, "check")
    h.write_script(script, f"#!/bin/sh\nread rc words < {said}\necho \"$words\"\nexit $rc\n")

    def say(words, rc):
        h.write_atomic(said, f"{rc} {words}\n")

    say("OK", 0)
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "down_after": "0", "up_after": "0",
                  "degrade_after": "0", "restore_after": "0", "ramp": f"{RAMP_S}s",
                  "ramp_start": "25%", "flap_limit": "0", "no_probes": "yes"},
        "probe api": {"type": "exec", "command": script, "interval": f"{INTERVAL_MS}ms",
                      "timeout": f"{TIMEOUT_MS}ms", "on_warn": "50%", "on_crit": "down"},
        "service web": {"probes": "api"},
    }, args=["-d"])

    def reply_is(want, timeout_s=BOUND_S):
        h.wait_reply(lb, lambda r: r == want, f"web replies {want!r}", send=b"web\n",
                     timeout_s=timeout_s)

    reply_is(b"up\n", BOUND_S + h.startup_bound_s())
    mark = lb.log_mark()
    h.section("a weight, another reason, back up, down, the ramp")
    say("WARNING - queue deep", 1)
    reply_is(b"up 50% #api: WARNING - queue deep\n")
    say("CRITICAL - queue full", 2)
    reply_is(b"down #api: CRITICAL - queue full\n")
    say("OK", 0)
    h.wait_reply(lb, lambda r: r.startswith(b"up"), "web back up", send=b"web\n",
                 timeout_s=BOUND_S + RAMP_S * 2, seen=None)
    reply_is(b"up\n", BOUND_S + RAMP_S * 2)
    say("CRITICAL - gone", 2)
    reply_is(b"down #api: CRITICAL - gone\n")
    say("OK", 0)
    h.wait_reply(lb, lambda r: r.startswith(b"up 25%"), "the ramp starts", send=b"web\n",
                 timeout_s=BOUND_S)
    reply_is(b"up\n", BOUND_S + RAMP_S * 2)

    log = lb.log_since(mark).splitlines()
    warned = [ln for ln in log if " warning: service web: reply changed" in ln]
    debug = [ln for ln in log if " debug: service web: reply changed" in ln]
    shown = "\n".join(warned + debug)
    h.expect(len(debug) >= 1 and all("recovering" in ln for ln in debug),
             f"ramp steps at debug level:\n{shown}")
    h.expect_equal(len(warned), 7, f"reply changes at warning:\n{shown}")


if __name__ == "__main__":
    h.run(main)
