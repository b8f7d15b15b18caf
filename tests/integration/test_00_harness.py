"""The harness's own waits, before any scenario leans on them.

- a predicate given to wait_until() that raises on a field present but
  null (`t.get("status", "").startswith(...)` on {"status": null}) is
  "not yet", and the wait goes on to the value it waits for;
- a predicate that keeps raising still shows: the timeout names its
  exception, also when the last observation was a plain "no";
- a describe() that raises does not hide the value observed;
- hold_for() reports a raising predicate as the hold failing, naming it;
- hold_until() judges only what it saw within its window (a value that
  changes once the window is over is no failure), and fails on a change
  within it;
- peer_cluster.wait_doc() treats a raising predicate as "not yet" too,
  and names it on timeout.

No daemon here: the things under test are the waits themselves, fed by a
sequence of observations. The bounds given to the waits that must time
out are short on purpose; those that must succeed get a liveness bound."""

import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

LIVENESS_S = 10.0       # the waits that must succeed see their value at the 3rd poll
SHORT_S = 0.3           # the waits that must time out


def feed(*values):
    """fn() for a wait: each value in turn, then the last one forever."""
    seq = list(values)

    def fn():
        return seq.pop(0) if len(seq) > 1 else seq[0]
    return fn


def must_time_out(call, *needles):
    """call() must raise TestFailure whose text holds every needle."""
    try:
        call()
    except h.TestFailure as e:
        text = str(e)
        for n in needles:
            h.expect(n in text, f"the failure names {n!r}:\n{text}")
        return text
    raise h.TestFailure(f"expected a timeout naming {needles}, the wait returned")


def main():
    h.section("a predicate raising on a null field is 'not yet'")
    # The shape of the bug: the field is there, and null.
    null_then_maint = feed({"status": None}, {"status": None}, {"status": "MAINT"})
    t = h.wait_until(null_then_maint, LIVENESS_S, "MAINT after a null status",
                     ok=lambda t: t.get("status", "").startswith("MAINT"))
    h.expect_equal(t, {"status": "MAINT"}, "the accepted value")

    h.section("a predicate that keeps raising shows on timeout")
    must_time_out(lambda: h.wait_until(feed({"status": None}), SHORT_S, "never",
                                       ok=lambda t: t["status"].startswith("UP")),
                  "timed out", "never", "AttributeError", "'status': None")
    # Raised once, then a plain "no": the earlier exception is still named.
    must_time_out(lambda: h.wait_until(feed({"status": None}, {"status": "DOWN"}),
                                       SHORT_S, "UP",
                                       ok=lambda t: t["status"].startswith("UP")),
                  "last observed: {'status': 'DOWN'}", "earlier",
                  "AttributeError")

    h.section("a describe() that raises does not hide the value")
    must_time_out(lambda: h.wait_until(feed([1, 2]), SHORT_S, "a third",
                                       ok=lambda v: len(v) == 3,
                                       describe=lambda v: v.name),
                  "[1, 2]", "describe raised AttributeError")

    h.section("hold_for: a raising predicate is the hold failing, named")
    must_time_out(lambda: h.hold_for(feed({"weight": "100"}, {"weight": None}), 5.0,
                                     "weight 100", ok=lambda st: int(st["weight"]) == 100),
                  "weight 100: stopped holding", "TypeError", "'weight': None")

    h.section("hold_until: judged on the window, not on when the watching ended")
    # "up" until the window's end, "down" after it: what lbagent may rightly
    # do once a configured window is over. A hold that counted the whole of
    # its own duration from a late start would fail on it.
    end = time.monotonic() + 0.3
    late = lambda: "up" if time.monotonic() <= end else "down"  # noqa: E731
    n = h.hold_until(late, end, "up within the window", ok=lambda v: v == "up")
    h.expect(n > 0, f"observations within the window: {n}")
    h.expect_equal(h.hold_until(late, time.monotonic() - 1.0, "a window already over",
                                ok=lambda v: v == "up"), 0,
                   "observations in a window over before the first ended")
    flip = feed("up", "up", "down")
    must_time_out(lambda: h.hold_until(flip, time.monotonic() + LIVENESS_S, "up",
                                       ok=lambda v: v == "up"),
                  "up: stopped holding", "'down'")
    must_time_out(lambda: h.hold_until(feed({"weight": None}), time.monotonic() + LIVENESS_S,
                                       "weight 100", ok=lambda st: int(st["weight"]) == 100),
                  "weight 100: stopped holding", "TypeError")

    h.section("peer_cluster.wait_doc: a raising predicate is 'not yet', named")

    class Node:
        def __init__(self, fn):
            self.detail = fn

    null_state = {"services": [{"name": "", "peer_guard": {"state": None}}]}
    latched = {"services": [{"name": "", "peer_guard": {"state": "latched"}}]}
    doc = pc.wait_doc(Node(feed(null_state, null_state, latched)),
                      lambda d: pc.guard_state(d).startswith("latch"), LIVENESS_S,
                      "latched after a null state")
    h.expect_equal(pc.guard_state(doc), "latched", "the accepted document")
    must_time_out(lambda: pc.wait_doc(Node(feed(null_state)),
                                      lambda d: pc.guard_state(d).startswith("latch"),
                                      SHORT_S, "never latched"),
                  "never latched", "AttributeError", '"state": null')


h.run(main)
