"""A reload of HAProxy while lbagent holds a drain and a reduced weight,
without and with a server state file.

lbagent runs [service web] (its drain marker set: `drain up`) and
[service api] (a probe failing with on_crit = 50%: `up 50%`); one HAProxy
in master-worker mode (as Debian's unit runs it) has a backend for each,
agent-inter 10s. HAProxy schedules a new process's first agent check of
each server a fraction of agent-inter after its start (api's at 2.5 s,
web's at 7.5 s here), so the window before it is wide enough to see.

Each sample below is one `show info;show stat` in one connection, so it
is known to be the new worker's (for a moment after the reload the old
worker may still answer on the handed-over socket; such samples are
counted, not judged); a server whose agent status is still INI has had
no agent reply in this process yet.

1. Without server-state-file: the reload (SIGUSR2 to the master) starts
   a worker that knows nothing of the agent: while web's agent status is
   INI, web shows UP, not DRAIN, and api weight 100; at least one such
   sample is seen for each. After their first agent check web is
   DRAIN (agent) again and api at weight 50.
2. With server-state-file and load-server-state-from-file global, the
   state saved with `show servers state` just before the reload: every
   sample of the new worker, INI or not, shows web DRAIN (agent) and api
   at weight 50, from the first (at least one INI sample is seen) until
   both have had their first agent check, and after.
3. Why the file must go at a fresh start: a file saved while web was
   drained, the drain then undone (`ready`, then plain `up` again), and
   HAProxy stopped and started afresh from the same source with that old
   file: the server is DRAIN (agent) and stays so over three agent checks
   that lbagent answers `up` (the `ready` is not repeated)."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

AGENT_INTER_MS = 10000
DRAIN = "DRAIN (agent)"


def settle_bound_s():
    # The first process's last first check is at 3/4 of agent-inter, the
    # state is already there (marker, failing probe) when it starts.
    return h.agent_checks_bound_s(2, AGENT_INTER_MS)


SERVERS = [("web", "s1"), ("api", "s1")]


def judged(rows):
    web, api = rows[("web", "s1")], rows[("api", "s1")]
    return {"web": (web["status"], h.agent_result(web)),
            "api": (api["weight"], h.agent_result(api))}


def sample(hap):
    return judged(hap.stat_many(SERVERS))


def sample_of(hap):
    """A sample with the pid and uptime of the process that gave it."""
    pid, up_s, rows = hap.stat_many_of(SERVERS)
    return {**judged(rows), "pid": pid, "up_s": up_s}


def scenario(lb, with_state):
    label = "with server-state-file" if with_state else "without server-state-file"
    h.section(f"{label}: HAProxy shows the drain and the weight")
    state_file = os.path.join(h.tmpdir(), f"server-state-{int(with_state)}")
    hap = h.Haproxy(backends={"api": [h.Server("s1", lb, agent_send="api")],
                              "web": [h.Server("s1", lb, agent_send="web")]},
                    agent_inter_ms=AGENT_INTER_MS, master_worker=True,
                    name="haproxy-state" if with_state else "haproxy-nostate",
                    global_lines=[f"server-state-file {state_file}"] if with_state else [],
                    defaults_lines=["load-server-state-from-file global"] if with_state else [])
    h.wait_until(lambda: sample(hap), settle_bound_s(), f"{label}: web DRAIN, api at 50",
                 ok=lambda s: s["web"][0] == DRAIN and s["api"][0] == "50")

    h.section(f"{label}: reload")
    pid = hap.reload(before=(lambda: hap.save_servers_state(state_file)) if with_state
                     else None)
    print(f"   new worker {pid}", flush=True)
    seen, elsewhere = [], []

    def one():
        s = sample_of(hap)
        if s["pid"] != pid:
            # The old worker, still holding the handed-over socket for a
            # moment: not a sample of the new worker.
            elsewhere.append(s)
            return None
        seen.append(s)
        if with_state:
            h.expect(s["web"][0] == DRAIN and s["api"][0] == "50",
                     f"{label}: a sample of the new worker lost the drain or the weight: "
                     f"{s!r}; samples so far: {seen!r}")
        else:
            if s["web"][1] == "INI":
                h.expect(s["web"][0] != DRAIN and s["web"][0].startswith("UP"),
                         f"{label}: before its first agent check web shows {s['web']!r}, "
                         f"not UP; samples so far: {seen!r}")
            if s["api"][1] == "INI":
                h.expect_equal(s["api"][0], "100",
                               f"{label}: api's weight before its first agent check")
        return s

    h.wait_until(one, h.agent_checks_bound_s(1, AGENT_INTER_MS),
                 f"{label}: the new worker's first agent check of both servers",
                 ok=lambda s: s is not None and s["web"][1] not in ("INI", "")
                 and s["api"][1] not in ("INI", ""))
    if elsewhere:
        print(f"   {len(elsewhere)} samples answered by the old worker "
              f"{sorted(set(s['pid'] for s in elsewhere))}, not judged", flush=True)
    for srv in ("web", "api"):
        before = [s[srv] for s in seen if s[srv][1] == "INI"]
        h.expect(before, f"{label}: no sample of {srv} before its first agent check in "
                 f"the new worker {pid}: {seen!r}")
        print(f"   {srv}: {len(before)} samples before its first agent check, "
              f"{len(seen) - len(before)} after; first {before[0]!r}", flush=True)
    h.wait_until(lambda: sample(hap), h.agent_checks_bound_s(1, AGENT_INTER_MS),
                 f"{label}: after the first agent checks, web DRAIN and api at 50",
                 ok=lambda s: s["web"][0] == DRAIN and s["api"][0] == "50")
    hap.stop()
    h.env().forget(hap)


def stale(lb):
    h.section("stale file: a fresh start takes up a DRAIN lbagent has since undone")
    tap = h.AgentTap(lb.port)
    state_file = os.path.join(h.tmpdir(), "server-state-stale")
    lines = {"global_lines": [f"server-state-file {state_file}"],
             "defaults_lines": ["load-server-state-from-file global"]}
    hap = h.Haproxy([h.Server("s1", tap, agent_send="web")], name="haproxy-stale", **lines)
    hap.wait_status("be", "s1", DRAIN, h.marker_bound_s(), "web DRAIN (agent)")
    hap.save_servers_state(state_file)
    mark = tap.mark()
    os.unlink(os.path.join(lb.state_dir, "web", "drain"))
    hap.wait_status("be", "s1", "UP", h.marker_bound_s(), "web UP after the drain")

    def after_ready():
        replies = [x.reply for x in tap.exchanges(mark, source=hap.source)]
        if b"ready up\n" not in replies:
            return None
        return replies[replies.index(b"ready up\n"):]

    # The restore window is over once `ready` has given way to plain `up`.
    h.wait_until(after_ready, h.agent_checks_bound_s(2) + 8,
                 "lbagent's `ready`, then plain `up` again",
                 ok=lambda r: r and r[-1] == b"up\n")
    hap.stop()
    h.env().forget(hap)
    mark = tap.mark()
    hap = h.Haproxy([h.Server("s1", tap, agent_send="web")], name="haproxy-stale",
                    source=hap.source, **lines)

    def checks():
        return [x.reply for x in tap.exchanges(mark, source=hap.source)]

    hap.hold_status("be", "s1", DRAIN, 1.0,
                    "the fresh start's DRAIN, from the old file, while lbagent answers up",
                    until=lambda: len(checks()) >= 3, until_what="three agent checks")
    h.expect(checks() and all(r == b"up\n" for r in checks()),
             f"lbagent's replies to the fresh start: {checks()!r}")
    print(f"   {len(checks())} agent checks answered `up`, the server still DRAIN",
          flush=True)


def main():
    h.require_kinds("file")
    api_ok = os.path.join(h.tmpdir(), "api.ok")
    lb = h.Lbagent({"agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
                    "probe webf": {"type": "file", "path": h.tmpdir(), "interval": "300ms",
                                   "timeout": "200ms"},
                    "probe apif": {"type": "file", "path": api_ok, "interval": "300ms",
                                   "timeout": "200ms", "on_crit": "50%"},
                    "service web": {"probes": "webf"},
                    "service api": {"probes": "apif"}})
    os.makedirs(os.path.join(lb.state_dir, "web"), exist_ok=True)
    h.write_atomic(os.path.join(lb.state_dir, "web", "drain"), "web drained\n")
    h.wait_reply(lb, b"drain up #web drained\n", "web drained", send=b"web\n")
    h.wait_reply(lb, b"up 50% #apif: does not exist\n", "api at 50%", send=b"api\n")
    scenario(lb, with_state=False)
    scenario(lb, with_state=True)
    stale(lb)
    h.expect(lb.alive(), "lbagent died")


h.run(main)
