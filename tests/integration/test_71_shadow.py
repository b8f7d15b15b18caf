"""Shadow mode against the real HAProxy (server weight 100): down_after 1s,
one file probe (`dep`, every 100 ms) whose file the test removes.

- lbagent started with the marker state_dir/shadow: replies carry no
  state word, only `# lbagent shadow: would reply up`;
- the probe fails: the shadow engine goes down after down_after, and
  says so at warning as a real change would, but HAProxy's server stays
  UP at weight 100 throughout, every reply being only the comment;
- /status (detail) shows the mode, the real reply and the would-be one
  (`shadow_reply`, `shadow_state` down) beside the state really told (up);
- /metrics passes `promtool check metrics` and has lbagent_shadow 1,
  lbagent_shadow_reply{state="down"} 1 beside lbagent_state{state="up"} 1;
- `lbagentctl status` and `why` show the would-be reply beside the real;
  `lbagentctl mode auto` (no off marker) says shadow mode stays, and why;
- a drain marker still acts in shadow mode (HAProxy drains), and its
  `ready` still goes when it is removed;
- removing the shadow marker switches to auto: HAProxy still holds UP,
  so the node goes down only a full down_after after the switch;
- healed and back in shadow mode while it fails again, killed (SIGKILL)
  and started again still in shadow mode, it remembers that HAProxy holds
  UP, though its engine, loaded from the state file, is down;
- killed again and started without the shadow marker (removed while it
  was stopped), the start is the same switch: `up` at once, down only a
  full down_after later."""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

# A file probe's stat runs on a worker thread: given 50 ms, it timed out
# ("timed out after 50ms" for "does not exist") while the CI machine's two
# cores ran the sanitizer build beside the suite. Its answer is the file's,
# never the clock's, so the timeout stays far from what a stat costs.
INTERVAL_MS = 250
TIMEOUT_MS = 200
DOWN_AFTER_S = 1.0
UP_AFTER_S = 2.0
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS) + DOWN_AFTER_S
SHADOW = b"# lbagent shadow: would reply "


def metric(text, name, **labels):
    """The value of the one sample of name with exactly these labels."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    rx = re.compile(rf"^{re.escape(name)}\{{{re.escape(want)}\}} (\S+)$", re.M)
    m = rx.search(text)
    if m is None:
        raise h.TestFailure(f"no sample {name}{{{want}}} in /metrics:\n{text}")
    return float(m.group(1))


def saved(lb):
    """state.json as lbagent last saved it (None while there is none)."""
    try:
        with open(os.path.join(lb.state_dir, "state.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def log_time(log, text):
    """The time (s, from the log's own stamp) of the first line with text."""
    for line in log.splitlines():
        if text in line:
            stamp = line.split(" ", 1)[0].rstrip("Z")
            return datetime.datetime.fromisoformat(stamp).timestamp()
    return None


def main():
    h.require_kinds("file")
    promtool = shutil.which("promtool")
    if promtool is None:
        raise h.TestFailure("promtool not found: scripts/deps test installs prometheus")
    tmp = h.tmpdir()
    dep = os.path.join(tmp, "dep.ok")
    h.write_atomic(dep, "ok\n")
    sock = os.path.join(tmp, "http.sock")
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "down_after": "1s", "up_after": "2s",
                  "ramp": "0", "degrade_after": "1s", "restore_after": "1s",
                  "flap_limit": "0"},
        "http": {"listen": f"unix:{sock}"},
        "probe dep": {"type": "file", "path": dep, "interval": f"{INTERVAL_MS}ms",
                      "timeout": f"{TIMEOUT_MS}ms"},
    }, start=False)
    lb.set_marker("shadow", "trial week\n")
    lb.start()
    api = f"unix:{sock}"

    def ctl(*args):
        rc, out, err = h.lbagentctl("-f", lb.config_path, "-s", api, *args)
        print(f"$ lbagentctl {' '.join(args)}  [exit {rc}]\n{out}{err}", file=sys.stderr)
        for line in out.splitlines():
            h.expect(len(line) <= 80, f"lbagentctl {' '.join(args)}: a line of "
                                      f"{len(line)} columns: {line!r}")
        return rc, out

    def svc():
        return h.http_json(api, "/status")[1]["services"][0]

    h.section("started in shadow mode: only the comment")
    h.wait_reply(lb, SHADOW + b"up\n", "the shadow reply at start", BOUND_S)
    hap = h.Haproxy([lb])
    hap.wait_status("be", "s1", "UP", BOUND_S, "s1 UP at start",
                    ok=lambda st: st["weight"] == "100")
    s = svc()
    h.expect_equal((s["mode"], s["automation"], s["shadow_by"], s["shadow_reply"],
                    s["state"], s["weight"]),
                   ("shadow", "shadow", f"marker {lb.state_dir}/shadow", "up", "up", 100),
                   "/status in shadow mode, all passing")
    h.expect("shadow mode (marker " in lb.log(), "the log says shadow mode began")

    h.section("a failing probe: the would-be down, and HAProxy unchanged")
    mark = lb.log_mark()
    t0 = time.monotonic()
    os.unlink(dep)
    h.wait_until(svc, BOUND_S, "/status: would reply down",
                 ok=lambda s: s["shadow_state"] == "down")
    h.expect(time.monotonic() - t0 >= DOWN_AFTER_S,
             "the shadow engine waited down_after, as the real one would")

    def both():
        return hap.stat("be", "s1"), lb.ask()

    def unchanged(v):
        st, reply = v
        return (st["status"] == "UP" and st["weight"] == "100" and
                reply == SHADOW + b"down #dep: does not exist\n")

    checks = hap.stat("be", "s1").get("chkdown")
    h.hold_for(both, 3.0, "HAProxy UP at weight 100, lbagent only the comment",
               ok=unchanged, describe=lambda v: f"{h.describe_stat(v[0])} {v[1]!r}")
    h.expect_equal(hap.stat("be", "s1").get("chkdown"), checks,
                   "no DOWN transition counted by HAProxy meanwhile")
    st = hap.stat("be", "s1")
    print(f"   HAProxy agent_status {st.get('agent_status')!r} "
          f"agent_desc {st.get('agent_desc')!r}", flush=True)
    log = lb.log_since(mark)
    h.expect(' warning: shadow: would reply "down #dep: does not exist" (was "up")' in log,
             f"the log says the would-be change at warning:\n{log}")
    h.expect(re.search(r" warning: shadow: down: failing on every evaluation for "
                       r"1(\.[0-9])?s", log),
             f"the shadow transition at warning, with its timing:\n{log}")
    h.expect("reply changed" not in log, "the real reply did not change")

    h.section("/status: the real reply beside the would-be one")
    s = svc()
    h.expect_equal((s["state"], s["weight"], s["serving"], s["reply"], s["shadow_reply"],
                    s["shadow_state"], s["shadow_weight"], s["shadow_reason"]),
                   ("up", 100, True, "# lbagent shadow: would reply down #dep: does not exist",
                    "down #dep: does not exist", "down", 0, "dep: does not exist"), "/status detail")
    h.expect_equal(s["target"]["state"], "down", "the rules say down")
    _, pub = h.http_json(api, "/status")
    h.expect_equal(pub["automation"], "shadow", "the node's automation")

    h.section("/metrics: promtool is quiet; the would-be state beside the real")
    _, _, body = h.http_request(api, "/metrics")
    text = body.decode()
    r = subprocess.run([promtool, "check", "metrics"], input=body,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    h.expect(r.returncode == 0 and r.stdout.strip() == b"",
             f"promtool (exit {r.returncode}):\n{r.stdout.decode()}")
    h.expect_equal((metric(text, "lbagent_shadow", service="default"),
                    metric(text, "lbagent_shadow_reply", service="default", state="down"),
                    metric(text, "lbagent_shadow_reply", service="default", state="up"),
                    metric(text, "lbagent_shadow_weight_ratio", service="default"),
                    metric(text, "lbagent_state", service="default", state="up"),
                    metric(text, "lbagent_weight_ratio", service="default"),
                    metric(text, "lbagent_automation_off", service="default"),
                    metric(text, "lbagent_marker", service="default", marker="shadow")),
                   (1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0), "metrics in shadow mode")

    h.section("lbagentctl status and why show the would-be reply")
    rc, out = ctl("status")
    h.expect_equal(rc, 0, "status exit (what HAProxy is told is up)")
    h.expect(re.search(r"^\(default\)\s+up\s+100\s+yes\s+shadow$", out, re.M),
             f"the table says shadow:\n{out}")
    h.expect('shadow: would reply "down #dep: does not exist"' in out,
             f"the table shows the would-be reply:\n{out}")
    rc, out = ctl("status", "-")
    h.expect(re.search(r"would reply\s+down #dep: does not exist \(shadow mode: not sent\)", out),
             f"the detail has the would-be reply:\n{out}")
    h.expect(re.search(r"reply\s+# lbagent shadow: would reply down #dep: does not exist", out),
             f"the detail has the real reply:\n{out}")
    h.expect(re.search(r"automation\s+SHADOW \(marker\s", out), f"SHADOW and why:\n{out}")
    rc, out = ctl("why")
    text1 = out.replace("\n    ", " ")
    h.expect("shadow mode (marker " in text1 and
             'automation would reply "down #dep: does not exist"' in text1 and
             "ends when " + lb.state_dir + "/shadow is removed" in text1,
             f"why explains shadow mode:\n{out}")

    h.section("lbagentctl mode auto: no off marker to remove; shadow mode stays")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "-s", api, "mode", "auto")
    print(f"$ lbagentctl mode auto  [exit {rc}]\n{out}{err}", file=sys.stderr)
    h.expect_equal(rc, 0, "mode auto exit (shadow mode is not off)")
    h.expect(f"in shadow mode (marker {lb.state_dir}/shadow)" in err,
             f"mode auto notes the shadow mode and why:\n{err}")
    h.expect('replies "# lbagent shadow: would reply down #dep: does not exist" to all 2'
             in re.sub(r"\s+", " ", out),
             f"mode auto shows what the load balancers get:\n{out}")
    h.expect_equal(svc()["mode"], "shadow", "still in shadow mode")

    h.section("a drain marker still acts in shadow mode; its ready goes")
    lb.set_marker("drain", "patching\n")
    hap.wait_status("be", "s1", "DRAIN (agent)", h.marker_bound_s(), "s1 drained")
    h.expect_equal(lb.ask(), b"drain " + SHADOW + b"drain down #patching\n",
                   "the drain reply in shadow mode")
    lb.clear_marker("drain")
    hap.wait_status("be", "s1", "UP", h.marker_bound_s(), "s1 UP again after ready",
                    ok=lambda st: st["weight"] == "100")

    h.section("shadow marker removed: down only a full down_after later")
    mark = lb.log_mark()
    t1 = time.monotonic()
    lb.clear_marker("shadow")
    h.wait_reply(lb, b"up\n", "`up` right after the switch", h.marker_bound_s())
    n = h.hold_until(lambda: (hap.stat("be", "s1")["status"], lb.ask()),
                     t1 + DOWN_AFTER_S * 0.9, "UP and `up` within down_after of the switch",
                     ok=lambda v: v[0] == "UP" and v[1] == b"up\n")
    h.expect(n > 0, "a reply seen within down_after of the switch")
    hap.wait_status("be", "s1", "DOWN (agent)", BOUND_S, "s1 DOWN (agent) after down_after")
    took = time.monotonic() - t1
    print(f"   DOWN in HAProxy {took:.2f} s after the switch", flush=True)
    h.expect(took >= DOWN_AFTER_S, f"DOWN {took:.2f} s after the switch, before down_after")
    log = lb.log_since(mark)
    h.expect("shadow mode ended: automation on from what HAProxy holds (up)" in log,
             f"the log says the switch:\n{log}")
    s = svc()
    h.expect_equal((s["mode"], s["automation"], s["shadow_reply"], s["state"]),
                   ("auto", "auto", None, "down"), "/status back in auto")

    h.section("healed, then shadow mode again while the probe fails")
    h.write_atomic(dep, "ok\n")
    hap.wait_status("be", "s1", "UP", BOUND_S + UP_AFTER_S, "s1 UP again after up_after",
                    ok=lambda st: st["weight"] == "100")
    lb.set_marker("shadow", "trial week, again\n")
    h.wait_reply(lb, SHADOW + b"up\n", "the shadow reply again", h.marker_bound_s())
    os.unlink(dep)
    h.wait_until(svc, BOUND_S, "/status: would reply down again",
                 ok=lambda s: s["shadow_state"] == "down")
    # The engine's down on disk (saved within a second), so that the
    # restart loads an engine worse than what HAProxy holds.
    h.wait_until(lambda: saved(lb), 5.0, "the shadow engine's down in state.json",
                 ok=lambda st: st is not None and st["transition"]["level"] == -1 and
                 st["decision"]["shadow"])

    h.section("killed and started again in shadow mode: what HAProxy holds is kept")
    lb.kill()
    lb.start()
    h.wait_reply(lb, SHADOW + b"down #dep: does not exist\n",
                 "the would-be down again after the restart", BOUND_S)
    s = svc()
    h.expect_equal((s["mode"], s["state"], s["weight"], s["reply"], s["shadow_state"]),
                   ("shadow", "up", 100, "# lbagent shadow: would reply down #dep: does not exist",
                    "down"), "/status after the restart: HAProxy holds up, the engine says down")
    st = hap.stat("be", "s1")
    h.expect(st["status"] == "UP" and st["weight"] == "100",
             f"HAProxy still UP at weight 100: {h.describe_stat(st)}")

    h.section("shadow marker removed while stopped: the same switch, at start")
    lb.kill()
    lb.clear_marker("shadow")
    mark = lb.log_mark()
    lb.start()
    h.expect_equal(lb.ask(), b"up\n", "the first reply after the start (within down_after)")
    hap.wait_status("be", "s1", "DOWN (agent)", BOUND_S, "s1 DOWN (agent) after down_after")
    log = lb.log_since(mark)
    switched = log_time(log, "shadow mode ended: automation on from what HAProxy holds (up)")
    down = log_time(log, 'reply changed: "down #dep: does not exist"')
    h.expect(switched is not None and down is not None,
             f"the log says the switch at start, then down:\n{log}")
    print(f"   down {down - switched:.3f} s after the switch at start", flush=True)
    h.expect(down - switched >= DOWN_AFTER_S,
             f"down {down - switched:.3f} s after the switch, before down_after:\n{log}")

h.run(main)
