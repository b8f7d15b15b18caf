"""Weights end to end, the RX layout's subset: http probes `log`
(on_crit = 75%) and `preview` (on_crit = 50%) against a server whose answers
the test flips, seen by two real HAProxy instances (weight 100, sources
127.0.0.2 and 127.0.0.3) through a recording relay:

- log failing -> `up 75% #log: HTTP 503`, weight 75 on both;
- both failing -> `up 50%`, the reason lists both, preview (the more
  severe) first although log comes first in the file;
- recovered -> every load balancer that saw the reduced weight gets
  `up 100%` for a short while, then `up`, and shows weight 100 again; a
  load balancer that never saw it gets plain `up`;
- a probe with on_crit = drain -> `up 0%` (never the word drain): weight 0,
  no forced DRAIN in HAProxy, and back to 100 the same way."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
SOURCES = ("127.0.0.2", "127.0.0.3")


def probe(url, on_crit):
    return {"type": "http", "url": url, "interval": f"{INTERVAL_MS}ms",
            "timeout": f"{TIMEOUT_MS}ms", "on_crit": on_crit}


def weights(haps):
    """{name: (status, weight)}, each pair from one `show stat`."""
    return {hap.name: (st["status"], st["weight"])
            for hap, st in ((hap, hap.stat("be", "s1")) for hap in haps)}


def wait_weight(haps, weight, what):
    return h.wait_until(lambda: weights(haps), BOUND_S, what,
                        ok=lambda seen: all(v == ("UP", str(weight)) for v in seen.values()))


def restored(tap, mark, haps, old_prefix, label):
    """After recovery: per source, the replies are the old reduced line(s)
    (checks in flight), then `up 100%` at least once, then `up`; and the
    weights are back to 100."""
    def sequences():
        return {src: [x.reply for x in tap.exchanges(mark, source=src)] for src in SOURCES}

    def done(seqs):
        return all(b"up\n" in s and b"up 100%\n" in s for s in seqs.values())

    seqs = h.wait_until(sequences, BOUND_S + 10, f"{label}: `up 100%` then `up` to each "
                        f"load balancer", ok=done)
    for src, replies in seqs.items():
        i = 0
        while i < len(replies) and replies[i].startswith(old_prefix):
            i += 1
        rest = replies[i:]
        h.expect(rest and rest[0] == b"up 100%\n",
                 f"{label}: {src}: after the reduced weight, the first other reply must be "
                 f"`up 100%`; replies since recovery: {replies!r}")
        j = rest.index(b"up\n")
        h.expect(all(r == b"up 100%\n" for r in rest[:j]) and
                 all(r == b"up\n" for r in rest[j:]),
                 f"{label}: {src}: expected `up 100%` replies, then only `up`; "
                 f"replies since recovery: {replies!r}")
        print(f"   {src}: {i} reduced, {j} x `up 100%`, then {len(rest) - j} x `up`", flush=True)
    wait_weight(haps, 100, f"{label}: weight 100 on both HAProxy instances")


def main():
    h.require_kinds("http")
    srv = h.HttpStub()
    for p in ("/log", "/preview", "/cache"):
        srv.set(p, 200, "ok\n")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe log": probe(srv.url("/log"), "75%"),
        "probe preview": probe(srv.url("/preview"), "50%"),
        "probe cache": probe(srv.url("/cache"), "drain"),
    })
    tap = h.AgentTap(lb.port)
    haps = [h.Haproxy([tap], source=SOURCES[0]), h.Haproxy([tap], source=SOURCES[1])]
    h.wait_reply(lb, b"up\n", "`up` at start", timeout_s=BOUND_S)
    wait_weight(haps, 100, "both HAProxy UP with weight 100 at start")

    h.section("log failing -> 75%")
    srv.set("/log", 503, "no\n")
    h.wait_reply(lb, b"up 75% #log: HTTP 503\n", "`up 75% #log: HTTP 503`", timeout_s=BOUND_S)
    wait_weight(haps, 75, "weight 75 of 100 on both")

    h.section("preview failing too -> 50%, both listed, preview first")
    srv.set("/preview", 503, "no\n")
    both = b"up 50% #preview: HTTP 503; log: HTTP 503\n"
    h.wait_reply(lb, both, "`up 50% #preview: HTTP 503; log: HTTP 503`", timeout_s=BOUND_S)
    wait_weight(haps, 50, "weight 50 of 100 on both")
    mark = tap.mark()
    h.wait_until(lambda: {x.source for x in tap.exchanges(mark)}, h.agent_checks_bound_s(),
                 "a check from each HAProxy", ok=lambda s: set(SOURCES) <= s)
    got = {x.reply for x in tap.exchanges(mark)}
    h.expect(got == {both}, f"every HAProxy got {both!r}; seen {got!r}")

    h.section("preview back, log still failing -> 75%")
    srv.set("/preview", 200, "ok\n")
    h.wait_reply(lb, b"up 75% #log: HTTP 503\n", "`up 75% #log: HTTP 503` again",
                 timeout_s=BOUND_S)
    wait_weight(haps, 75, "weight 75 again")

    h.section("log back, preview failing -> 50%")
    srv.set("/preview", 503, "no\n")
    srv.set("/log", 200, "ok\n")
    h.wait_reply(lb, b"up 50% #preview: HTTP 503\n", "`up 50% #preview: HTTP 503`",
                 timeout_s=BOUND_S)
    wait_weight(haps, 50, "weight 50 again")

    h.section("everything recovered -> up 100% to each load balancer, then up")
    mark = tap.mark()
    srv.set("/preview", 200, "ok\n")
    first = h.wait_reply(lb, lambda r: not r.startswith(b"up 50%"), "the raw reply to change",
                         timeout_s=BOUND_S)
    fresh = lb.ask(source="127.0.0.9")
    h.expect_equal(fresh, b"up\n", "first reply to a load balancer that never saw the weight")
    h.expect_equal(first, b"up 100%\n", "first raw reply after recovery to a key that saw 50%")
    h.wait_reply(lb, b"up\n", "raw `up` after the restore window", timeout_s=BOUND_S)
    restored(tap, mark, haps, b"up 50% ", "recovery")
    h.hold_for(lambda: weights(haps), 10 * h.AGENT_INTER_MS / 1000,
               "weight 100 holding on both", ok=lambda s: all(v == ("UP", "100")
                                                              for v in s.values()))

    h.section("on_crit = drain -> up 0%, never the word drain")
    mark = tap.mark()
    srv.set("/cache", 503, "no\n")
    h.wait_reply(lb, b"up 0% #cache: HTTP 503\n", "`up 0% #cache: HTTP 503`", timeout_s=BOUND_S)
    wait_weight(haps, 0, "weight 0 on both, still UP")
    for hap in haps:
        ss = hap.server_state("be", "s1")
        h.expect(ss["srv_admin_state"] & 9 == 0 and ss["srv_op_state"] == 2,
                 f"{hap.name}: weight 0 must not be a forced DRAIN or MAINT: {ss}")
    h.wait_until(lambda: {x.source for x in tap.exchanges(mark)}, h.agent_checks_bound_s(),
                 "checks from each HAProxy", ok=lambda s: set(SOURCES) <= s)
    for x in tap.exchanges(mark):
        h.expect(b"drain" not in x.words() and b"maint" not in x.words(),
                 f"an automated reaction used an admin word: {x!r}")

    h.section("cache recovered -> up 100%, then up, weight 100")
    mark = tap.mark()
    srv.set("/cache", 200, "ok\n")
    restored(tap, mark, haps, b"up 0% ", "after the 0%")
    h.wait_reply(lb, b"up\n", "raw `up` at the end", timeout_s=BOUND_S)


h.run(main)
