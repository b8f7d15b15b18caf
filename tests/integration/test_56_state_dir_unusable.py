"""A state_dir that becomes unusable while lbagent runs (its parent replaced
by a regular file: missing and not creatable, as root too):

- checks are still answered, and the decisions still change;
- an error in the log when saving starts failing, one line (not one per
  retry), and another a minute later while it lasts;
- /status's persistence says failing since when and why, lbagentctl status
  prints `persistence: failing since HH:MM:SS UTC (reason)`, the metric
  lbagent_state_save_failures_total counts the failed saves, /health's body
  says it (only then) while its code stays that of serving (200);
- the directory back: a notice, persistence ok, state.json saved again."""

import json
import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

MINUTE_S = 60


def ctl_status(config):
    rc, out, err = h.lbagentctl("-f", config, "status")
    h.expect(rc == 0, f"lbagentctl status: exit {rc}: {err}")
    return out


def save_failures(api):
    code, _, body = h.http_request(api, "/metrics")
    h.expect_equal(code, 200, "/metrics")
    m = re.search(r"^lbagent_state_save_failures_total (\d+)$", body.decode(), re.M)
    h.expect(m is not None, "/metrics has lbagent_state_save_failures_total")
    return int(m.group(1))


def persistence(api):
    code, doc = h.http_json(api, "/status")
    h.expect_equal(code, 200, "/status")
    return doc["persistence"]


def main():
    d = h.tmpdir()
    parent = os.path.join(d, "parent")
    state_dir = os.path.join(parent, "state")
    os.makedirs(state_dir)
    ok_file = os.path.join(d, "ok")
    open(ok_file, "w").close()
    api = "unix:" + os.path.join(d, "api.sock")
    lb = h.Lbagent(h.ini_text({
        "agent": {**h.IMMEDIATE, "listen": "127.0.0.1:{port}", "state_dir": state_dir},
        "http": {"listen": api},
        "probe dep": {"type": "file", "path": ok_file, "interval": "200ms",
                      "timeout": "100ms", "on_crit": "down"},
    }))
    h.wait_until(lb.ask, 10, "up", ok=lambda r: r == b"up\n")
    p = persistence(api)
    h.expect(p["ok"] is True and p["failing_since"] is None and p["reason"] is None,
             f"persistence ok at start: {p}")
    h.expect_equal(save_failures(api), 0, "no failed save yet")
    code, _, body = h.http_request(api, "/health")
    h.expect(code == 200 and "persistence" not in json.loads(body),
             f"/health says nothing of persistence while it works: {code} {body!r}")
    h.expect("persistence" not in ctl_status(lb.config_path),
             "lbagentctl status says nothing of persistence while it works")

    h.section("the state_dir's parent becomes a regular file")
    mark = lb.log_mark()
    os.rename(parent, parent + ".away")
    with open(parent, "w") as f:
        f.write("not a directory\n")
    os.unlink(ok_file)
    h.wait_until(lb.ask, 10, "down while the state cannot be saved",
                 ok=lambda r: r.startswith(b"down"))
    h.wait_until(lambda: persistence(api), 10, "persistence failing",
                 ok=lambda p: p["ok"] is False)
    p = persistence(api)
    want_reason = (f"state_dir {state_dir} is missing and cannot be created: "
                   f"Not a directory")
    h.expect_equal(p["reason"], want_reason, "the reason")
    h.expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", p["failing_since"]),
             f"failing_since is a time: {p['failing_since']!r}")
    open(ok_file, "w").close()
    h.wait_until(lb.ask, 10, "up again, state still not saved",
                 ok=lambda r: r == b"up\n")

    h.section("counted, shown, and logged once")
    h.wait_until(lambda: save_failures(api), 10, "the retries counted",
                 ok=lambda n: n >= 3)
    text = lb.log_since(mark)
    errors = [line for line in text.splitlines() if " error: " in line]
    h.expect_equal(len(errors), 1, f"error lines so far:\n{text}")
    h.expect(f"error: cannot save state: {want_reason}; still answering checks" in
             errors[0], f"the error says why and that replies go on: {errors[0]!r}")
    code, _, body = h.http_request(api, "/health")
    h.expect_equal(code, 200, "/health's code is serving's")
    hp = json.loads(body)["persistence"]
    h.expect(hp["ok"] is False and hp["reason"] == want_reason and
             hp["failing_since"] == p["failing_since"], f"/health's body says it: {hp}")
    out = " ".join(ctl_status(lb.config_path).split())
    since = p["failing_since"][11:19]
    want = f"persistence: failing since {since} UTC ({want_reason})"
    h.expect(want in out, f"lbagentctl status has {want!r}:\n{out}")

    h.section("a minute later, still failing: another error")
    h.wait_until(lambda: lb.log_since(mark), MINUTE_S + 30,
                 "the error repeated after a minute",
                 ok=lambda t: "error: still cannot save state after 1m" in t,
                 describe=lambda t: t[-400:])
    h.expect(lb.ask() == b"up\n", "still answering")

    h.section("the directory back: saved again")
    mark = lb.log_mark()
    failures = save_failures(api)
    os.unlink(parent)
    os.rename(parent + ".away", parent)
    h.wait_until(lambda: persistence(api), 10, "persistence ok again",
                 ok=lambda p: p["ok"] is True)
    h.wait_until(lambda: lb.log_since(mark), 10, "the notice",
                 ok=lambda t: re.search(r"notice: \S+/state\.json: saved again, "
                                        r"after \S+ of failing", t))
    h.expect(save_failures(api) >= failures, "the counter never goes back")
    code, _, body = h.http_request(api, "/health")
    h.expect(code == 200 and "persistence" not in json.loads(body),
             f"/health says nothing of persistence once it works: {code} {body!r}")
    with open(os.path.join(state_dir, "state.json")) as f:
        saved = json.load(f)
    h.expect_equal(saved["decision"]["state"], "up", "state.json has the latest decision")
    h.expect("persistence" not in ctl_status(lb.config_path),
             "lbagentctl status says nothing of persistence once it works")
    lb.stop()


h.run(main)
