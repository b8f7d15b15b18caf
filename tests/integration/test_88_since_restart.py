"""Since when a service replies what it does survives a restart (issue 32):
the time its reply last changed in kind is kept in state.json (`since`,
wall-clock ms) and put back at start, so /status's `since`, `why` and
`status --short` show the time the state began, not the restart.

- a file probe takes `web` down; its since is the one state.json saved, and
  after a restart into the same state (a new process, the same state_dir)
  it is still exactly that saved value, and `why` says it is held from
  before the start;
- the file comes back while lbagent is stopped: at the restart the reply
  changes (down to up), and since is that change, not the old value."""

import datetime
import json
import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 200
TIMEOUT_MS = 150
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)


def web(sock):
    _, doc = h.http_json(sock, "/status")
    for s in doc["services"]:
        if s["name"] == "web":
            return doc, s
    raise h.TestFailure("no service web in /status")


def saved_since(lb):
    with open(os.path.join(lb.state_dir, "state.json")) as f:
        doc = json.load(f)
    ms = doc["services"]["web"].get("since")
    h.expect(isinstance(ms, int), f"state.json: web's since is {ms!r}")
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    ok = os.path.join(d, "ok")
    sock = f"unix:{d}/api.sock"
    lb = h.Lbagent({
        "agent": {"down_after": "0", "up_after": "0", "degrade_after": "0",
                  "restore_after": "0", "ramp": "0", "flap_limit": "0",
                  "no_probes": "yes"},
        "http": {"listen": sock},
        "probe f": {"type": "file", "path": ok, "interval": f"{INTERVAL_MS}ms",
                    "timeout": f"{TIMEOUT_MS}ms"},
        "service web": {"probes": "f"},
    })

    h.section("down by the rules: since is what state.json saved")
    h.wait_until(lambda: web(sock)[1]["state"], BOUND_S + h.startup_bound_s(),
                 "web down", ok=lambda s: s == "down")
    _, s = web(sock)
    since = s["since"]
    lb.stop()
    h.expect_equal(saved_since(lb), since, "state.json's since, as /status showed it")

    h.section("a restart into the same state keeps it")
    lb.start()
    h.wait_until(lambda: all(p["settled"] for p in web(sock)[1]["probes"]),
                 BOUND_S, "web: the probe's verdict after the restart")
    doc, s = web(sock)
    h.expect_equal(s["state"], "down", "web's state after the restart")
    h.expect_equal(s["since"], since, "web's since after the restart")
    h.expect(since < doc["started_at"], f"since {since} is not before the start "
                                        f"{doc['started_at']}")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "why", "web")
    h.expect(rc == 3 and "held from before lbagent started" in out,
             f"why web: exit {rc}\n{out}{err}")
    lb.stop()

    h.section("a restart into another state: since is that change")
    h.write_atomic(ok, "ok\n")
    lb.start()
    h.wait_until(lambda: web(sock)[1]["state"], BOUND_S, "web up after the restart",
                 ok=lambda st: st == "up")
    doc, s = web(sock)
    h.expect(s["since"] >= doc["started_at"], f"since {s['since']} is before the "
                                              f"start {doc['started_at']}")
    h.expect_equal(s["since"],
                   s["history"][-1]["at"], "since and the newest history entry")


if __name__ == "__main__":
    h.run(main)
