"""This node's own row when no decision waits on the others (issue 34): a
real HAProxy (master-worker, so that it can reload) whose backend `be`
holds the node's server s1 and 499 others, read over its TCP Runtime API
through a tap (a second HAProxy, one TCP `listen`) whose frontend counts
the questions (`stot`) and the bytes sent back to lbagent (`bout`),
outside lbagent. [peers] interval 200ms, steady_interval 1s.

1. a fresh detail read (?fresh=1) shows s1 as HAProxy does (it waits
   for a round of every server: the detail shows the other nodes too);
   the rounds that go on at the steady pace after it, nobody reading, ask
   for s1's row alone: each answer a few KB, where every server of the
   backend (`show stat be 4 -1;show servers state be`, what the guard
   reads) is well over 100 KB; a dashboard reading the detail (not
   fresh) every 0.5 s gets the same small answers, and the last whole
   round only ages; a fresh read again costs one whole answer;
2. held out by a maint marker (the steady pace), nobody reading: the same
   small answers;
3. HAProxy reloaded with a server added before s1 (every id moves up by
   one: the one lbagent knew now names another server) and s1's weight
   now 50, still held out, nobody reading: the next question finds
   another server under that id, lbagent learns the id again from one
   whole answer, and its questions find s1 (the sessions /metrics shows
   for it come from them) with small answers again; a detail read then
   shows s1's new configured weight.

The bounds are bytes over counted answers: no timing of any of them."""

import json
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

OTHERS = 499
INTERVAL_MS = 200
STEADY_MS = 1000
WINDOW_S = 5.0
# An answer of one row: the CSV's header (129 columns in 2.6, 208 in 3.2)
# and one row, and a weight; one of 20 of the backend's 500 rows is more.
OWN_MAX = 8 * 1024


def counts(tap):
    for r in tap.stats():
        if r["pxname"] == "tap" and r["svname"] == "FRONTEND":
            return int(r["stot"]), int(r["bout"])
    raise h.TestFailure("no tap FRONTEND in the tap's show stat")


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    tap_port = h.free_port()
    sock = f"{d}/api.sock"
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE},
        "http": {"listen": f"unix:{sock}"},
        "peers": {"interval": f"{INTERVAL_MS}ms", "steady_interval": f"{STEADY_MS}ms",
                  "timeout": "2s"},
        "haproxy": {"sources": f"tcp:127.0.0.1:{tap_port}", "backend": "be",
                    "server": "s1"},
        "probe p": {"type": "file", "path": "/", "interval": "200ms", "timeout": "150ms"},
    })
    others = [f"server o{j} 127.0.0.1:9 weight 3" for j in range(1, OTHERS + 1)]
    hap = h.Haproxy([h.Server("s1", lb)], stats_tcp=True, master_worker=True,
                    backend_lines={"be": others})
    tap = h.Haproxy(backends={"tap": []}, name="tap", config_text="\n".join([
        "global", "    stats socket {socket} level admin", "",
        "defaults", "    mode tcp", "    timeout connect 1s",
        "    timeout client 5s", "    timeout server 5s", "",
        "listen tap", f"    bind 127.0.0.1:{tap_port}",
        f"    server lb {hap.stats_tcp_address()}", ""]))
    h.wait_all_status([hap], "UP", h.startup_bound_s(), "s1 UP")
    whole = hap.cmd("show stat be 4 -1;show servers state be")
    h.expect(len(whole) > 100 * 1024,
             f"every server of be is well over 100 KB: {len(whole)}")

    def detail(fresh=True):
        code, _, body = h.http_request(f"unix:{sock}",
                                       "/status?fresh=1" if fresh else "/status")
        h.expect_equal(code, 200, "the detail over the unix socket")
        return json.loads(body)

    def s1(doc):
        for src in doc.get("haproxy") or []:
            for row in src.get("this_node") or []:
                if row.get("service") == "":
                    return row
        return None

    def shows(status, weight, iweight):
        def ok(doc):
            r = s1(doc)
            return (r is not None and r["found"] and r["status"] == status and
                    r["weight"] == weight and r["initial_weight"] == iweight)
        return ok

    def sessions():
        """s1's lbagent_lb_sessions on /metrics (not a reader: no round)."""
        code, _, body = h.http_request(f"unix:{sock}", "/metrics")
        h.expect_equal(code, 200, "/metrics over the unix socket")
        for line in body.decode().split("\n"):
            if line.startswith("lbagent_lb_sessions{"):
                return line
        return None

    steady_least = int(WINDOW_S * 1000 / STEADY_MS) // 2

    def small_answers(what, q0, b0, least):
        q1, b1 = counts(tap)
        q, b = q1 - q0, b1 - b0
        h.expect(q >= least, f"{what}: {q} questions, expected at least {least}")
        h.expect(b / q <= OWN_MAX,
                 f"{what}: {b} bytes over {q} answers, {b / q:.0f} each (at most "
                 f"{OWN_MAX}; every server of be: {len(whole)})")
        print(f"  {what}: {q} answers, {b / q:.0f} bytes each "
              f"(every server of be: {len(whole)})")

    h.section("a detail read, then the steady pace: its own row")
    h.wait_until(detail, h.startup_bound_s(), "s1 UP at 100 in the detail",
                 ok=shows("UP", 100, 100), describe=s1)
    # The rounds go on at the steady pace for 10 s after a read: past the
    # read's own round, count over a window within those 10 s.
    time.sleep(0.5)
    q0, b0 = counts(tap)
    time.sleep(WINDOW_S)
    small_answers("watched, nobody reading", q0, b0, steady_least)

    h.section("a dashboard reading the detail every 0.5 s: its own row")
    q0, b0 = counts(tap)
    ages = []
    end = time.monotonic() + WINDOW_S
    while time.monotonic() < end:
        doc = detail(fresh=False)
        h.expect(shows("UP", 100, 100)(doc), f"the dashboard's read shows s1: {s1(doc)}")
        ages.append(doc["peer_rounds"]["last_whole_round_s"])
        time.sleep(0.5)
    small_answers("a dashboard reading", q0, b0, steady_least)
    h.expect(all(b > a for a, b in zip(ages, ages[1:])),
             f"no whole round while the dashboard reads: last_whole_round_s {ages}")

    h.section("a fresh read: one whole round, then its own row again")
    q0, b0 = counts(tap)
    doc = detail()
    q1, b1 = counts(tap)
    h.expect(b1 - b0 > 100 * 1024 and
             doc["peer_rounds"]["last_whole_round_s"] < ages[-1],
             f"the fresh read waited for a whole answer: {b1 - b0} bytes over {q1 - q0} "
             f"questions, last whole round {doc['peer_rounds']['last_whole_round_s']} s "
             f"ago (the dashboard's last read: {ages[-1]} s)")

    h.section("held out by a marker: the steady pace, its own row")
    lb.set_marker("maint", "patching")
    h.wait_reply(lb, lambda r: r.startswith(b"maint "), "the maint marker replied")
    # The marker's own round (the whole backend: is another serving?) is
    # over by then, and the detail read above is 10 s old.
    time.sleep(2.0 + 10.0)
    q0, b0 = counts(tap)
    time.sleep(WINDOW_S)
    small_answers("held out", q0, b0, steady_least)

    h.section("a reload moves every id: learnt again, then its own row again")
    text = hap.config_text.replace("    server o1 ", "    server n0 127.0.0.1:9 weight 3\n"
                                   "    server o1 ", 1).replace(" weight 100 check",
                                                                " weight 50 check", 1)
    h.expect("server n0 " in text and " weight 50 check" in text,
             f"n0 first, s1 at weight 50 in the new config:\n{text[-600:]}")
    hap.config_text = text
    with open(hap.config_path, "w") as f:
        f.write(text)
    # Counted from before the reload: the first round the new worker
    # answers may come before its stats show s1 MAINT to this test.
    q0, b0 = counts(tap)
    hap.reload()
    h.wait_until(lambda: {r["svname"]: r for r in hap.stats() if r["pxname"] == "be"},
                 h.startup_bound_s(), "s1 MAINT (agent) after the reload",
                 ok=lambda rows: rows.get("s1", {}).get("status", "").startswith("MAINT"),
                 describe=lambda rows: h.describe_stat(rows.get("s1")))
    sids = {r["svname"]: r["sid"] for r in hap.stats() if r["pxname"] == "be"}
    h.expect_equal(sids.get("s1"), str(OTHERS + 2), "s1's id after the reload")
    # Three questions more, all to the new worker: the id is surely learnt
    # again by the third.
    qm = counts(tap)[0]
    h.wait_until(lambda: counts(tap)[0], 10 * STEADY_MS / 1000.0, "three questions",
                 ok=lambda q: q >= qm + 3)
    q1, b1 = counts(tap)
    h.expect(b1 - b0 > 100 * 1024,
             f"{b1 - b0} bytes over {q1 - q0} questions after the reload: one of them "
             f"the whole backend, learning the id again")
    print(f"  relearning: {q1 - q0} answers, {b1 - b0} bytes")
    h.wait_until(sessions, h.startup_bound_s(), "s1's sessions in /metrics",
                 ok=lambda v: v is not None)
    q0, b0 = counts(tap)
    time.sleep(WINDOW_S)
    small_answers("after the reload", q0, b0, steady_least)
    h.expect(sessions() is not None, "s1's sessions in /metrics still")
    lb.clear_marker("maint")
    h.wait_until(detail, h.startup_bound_s(), "s1 UP at 50 (configured 50) in the detail",
                 ok=shows("UP", 50, 50), describe=s1)
    h.expect(lb.alive(), "lbagent still running")


if __name__ == "__main__":
    h.run(main)
