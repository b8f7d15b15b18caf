"""The peer guard asks only when it needs to (issue 17): three nodes with
[peers] agents (every node) and [haproxy] sources (one real HAProxy, read
over its stats page's CSV, so that HAProxy's own `req_tot` of the stats
frontend counts every question a node puts to it). Same windows as
test_45 (peer_cluster.py: [peers] interval 200ms).

1. healthy, nobody reading the detail: no node begins a round
   (lbagent_peer_rounds_total stays where it is on every node) and HAProxy
   counts no stats request, over 15 intervals; scraping /metrics and the
   public /status (as the peers do) is not watching;
2. n1's dependency fails: n1 asks, goes out, and while out keeps asking
   every interval (past just_out, when only being out wants it), and its
   questions reach HAProxy; n2 and n3, in and healthy, still ask nobody
   (answering n1's questions on their public /status does not count);
3. n1 heals and is back at full weight: it stops asking;
4. the detail read on an idle node waits for a fresh round (its
   `peer_rounds.last_round_s` within an interval, where it was seconds
   old), says no service needs rounds, and rounds go on every interval for
   a while after it, then stop."""

import re
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import peer_cluster as pc  # noqa: E402

INTERVAL_S = pc.PEER_INTERVAL_MS / 1000.0
QUIET_S = 15 * INTERVAL_S
# lbagent keeps asking this long after its detail was last read
# (PEERS_WATCH_MS): a phase that expects silence starts after it.
WATCH_S = 10.0


def rounds(node):
    """lbagent_peer_rounds_total of a node, from its /metrics (which is not
    watching: it never starts a round)."""
    status, _, body = h.http_request(node.http_port, "/metrics")
    h.expect_equal(status, 200, f"{node.name}: /metrics code")
    m = re.search(r"^lbagent_peer_rounds_total (\d+)$", body.decode(), re.M)
    h.expect(m is not None, f"{node.name}: no lbagent_peer_rounds_total in /metrics")
    return int(m.group(1))


def stats_requests(hap):
    """HTTP requests HAProxy's stats page has served (read over the admin
    socket, which that frontend does not see)."""
    for row in hap.stats():
        if row["pxname"] == "stats" and row["svname"] == "FRONTEND":
            return int(row["req_tot"])
    raise h.TestFailure("no stats FRONTEND row in `show stat`")


def counts(c):
    return {n.name: rounds(n) for n in c.nodes}, stats_requests(c.hap)


def over(c, seconds):
    """Rounds begun per node and stats requests HAProxy served over a
    window of `seconds`."""
    r0, s0 = counts(c)
    time.sleep(seconds)
    r1, s1 = counts(c)
    return {k: r1[k] - r0[k] for k in r0}, s1 - s0


def main():
    c = pc.Cluster(sources=("http",))
    c.start()
    n1, n2 = c["n1"], c["n2"]

    h.section("healthy, nobody reading the detail: nobody is asked")
    # Start-up's own round is over (every server UP took longer); nothing
    # read a detail, so only what the steps want would start a round.
    for n in c.nodes:
        n.public()
    began, served = over(c, QUIET_S)
    h.expect(all(v == 0 for v in began.values()),
             f"rounds begun over {QUIET_S:g}s while healthy: {began}")
    h.expect_equal(served, 0, f"stats requests over {QUIET_S:g}s while healthy")
    status, _, body = h.http_request(n1.http_port, "/metrics")
    h.expect(re.search(r"^lbagent_peer_round_age_seconds \d+\.\d+$", body.decode(), re.M),
             "/metrics gives the last round's age")

    h.section("n1 fails: it asks, goes out, and keeps asking while out")
    n1.fail()
    c.wait_out("n1")
    # Past just_out, being out is what keeps the rounds going.
    time.sleep(pc.JUST_OUT_S + INTERVAL_S)
    began, served = over(c, QUIET_S)
    h.expect(began["n1"] > 0, f"n1 out: rounds begun over {QUIET_S:g}s: {began}")
    h.expect(served > 0, f"n1 out: its questions reach HAProxy ({served} requests)")
    h.expect(began["n2"] == 0 and began["n3"] == 0,
             f"n2 and n3, in and healthy, ask nobody while n1 asks them: {began}")

    h.section("n1 back at full weight: it stops asking")
    n1.heal()
    c.hap.wait_status("be", "n1", "UP", pc.PROBE_S + pc.UP_AFTER_S + pc.HAP_S + pc.ROUND_S,
                      "n1 back at full weight", ok=lambda st: st["weight"] == "100")
    # A round in flight at that moment ends within the peer timeout.
    time.sleep(pc.PEER_TIMEOUT_MS / 1000.0 + INTERVAL_S)
    began, served = over(c, QUIET_S)
    h.expect(all(v == 0 for v in began.values()),
             f"all back: rounds begun over {QUIET_S:g}s: {began}")
    h.expect_equal(served, 0, "stats requests with all back")

    h.section("the detail read on an idle node waits for a fresh round")
    before = rounds(n2)
    t0 = time.monotonic()
    doc = n2.detail()
    took_s = time.monotonic() - t0
    pr = doc["peer_rounds"]
    # The round it shows began after the request was sent.
    h.expect(pr["last_round_s"] is not None and pr["last_round_s"] <= took_s + 0.001,
             f"the detail waited for a round begun after it was asked "
             f"({took_s:.3f}s ago): {pr}")
    h.expect(pr["rounds"] > before and pr["needed"] is False,
             f"a round begun for the detail; no service needs rounds: {pr} (before {before})")
    others = [row for row in pc.peer_rows(doc) if not pc.peer_is_self(row)]
    h.expect(len(others) == 2 and all(pc.peer_serving(r) for r in others),
             f"the fresh round found n1 and n3 serving: {pc.short(doc)}")
    began, _ = over(c, QUIET_S)
    h.expect(began["n2"] >= 2, f"rounds go on after the detail read: {began}")
    time.sleep(WATCH_S)
    began, _ = over(c, QUIET_S)
    h.expect(began["n2"] == 0, f"after the watch, n2 asks nobody again: {began}")
    c.close()


if __name__ == "__main__":
    h.run(main)
