"""Markers with an owner and an end, against the real daemon and two real
HAProxy instances (sources 127.0.0.2 and 127.0.0.3).

- `lbagentctl drain on --for D --reason deploy` (SUDO_USER=alice-70):
  the file's first line is the reason, then owner, host, since, until;
  /status detail and `lbagentctl status` show owner@host, since and
  until, `lbagentctl why` when it ends by itself; /metrics has lbagent_marker_expiry_timestamp_seconds for it;
  both HAProxy instances go DRAIN (agent).
- Past its end the marker ends by itself: drain is renamed to
  drain.expired (same content), the log says so at warning, both load
  balancers get the node back (UP, srv_admin_state 0), /status shows no
  marker and /metrics no expiry.
- A marker written with echo still works and has no end: both DRAIN, held
  past the length of the first one, no until in /status, no expiry in
  /metrics; then removed, both UP.
- A marker whose until is not a date: present, no end, the note in
  /status and the log.
- `maint on --until ISO-TIME`: MAINT on both, then it ends too, into
  maint.expired (the earlier drain.expired stays).
D is longer than HAProxy needs to see a marker (marker_bound_s), so both
instances see the drain before it ends: the end is judged by lbagent's
clocks, which a test cannot fake; the jump logic is in the unit tests
(test_marker_format)."""

import datetime
import math
import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()
FOR_S = math.ceil(BOUND_S) + 1
OWNER = "alice-70"


def ctl(config, *args, rcs=(0,)):
    env = dict(os.environ)
    env["SUDO_USER"] = OWNER
    argv = [h.lbagentctl_exe(), "-f", config] + list(args)
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    h.expect(r.returncode in rcs, f"lbagentctl {' '.join(args)}: exit {r.returncode}\n"
                                f"stdout: {out}\nstderr: {err}")
    return out


def markers(where):
    _, doc = h.http_json(where, "/status")
    svc = [s for s in doc["services"] if s["name"] == ""][0]
    return {m["kind"]: m for m in svc["markers"]}


def expiry_metrics(where):
    _, _, body = h.http_request(where, "/metrics")
    return re.findall(r'^lbagent_marker_expiry_timestamp_seconds\{service="default",'
                      r'marker="(\w+)"\} (\S+)$', body.decode(), re.M)


def read(path):
    with open(path) as f:
        return f.read()


def iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def back_on_both(haps, what):
    h.wait_all_status(haps, "UP", FOR_S + BOUND_S, f"{what}: every server UP again")
    for hap in haps:
        ss = hap.server_state("be", "s1")
        h.expect(ss["srv_admin_state"] == 0,
                 f"{hap.name}: srv_admin_state {ss['srv_admin_state']} after the end, "
                 f"expected 0 (no forced drain or maint left)")


def main():
    d = h.tmpdir()
    sock = os.path.join(d, "http.sock")
    lb = h.Lbagent({"agent": {"reply_reasons": "yes"},
                    "http": {"listen": f"unix:{sock}"}})
    unix = f"unix:{sock}"
    hap1 = h.Haproxy([lb], source="127.0.0.2")
    hap2 = h.Haproxy([lb], source="127.0.0.3")
    haps = [hap1, hap2]
    h.wait_all_status(haps, "UP", h.startup_bound_s(), "every server UP at start")
    host = socket.gethostname()

    h.section(f"drain on --for {FOR_S}s")
    mark = lb.log_mark()
    out = ctl(lb.config_path, "drain", "on", "--for", f"{FOR_S}s", "--reason", "deploy")
    path = lb.marker_path("drain")
    h.expect(f"wrote {path}\nit ends at " in out, f"lbagentctl's output: {out!r}")
    content = read(path)
    lines = content.splitlines()
    h.expect_equal(lines[0], "deploy", "the marker's first line")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    h.expect_equal(sorted(fields), ["host", "owner", "since", "until"], "the marker's keys")
    h.expect_equal(fields["owner"], OWNER, "owner (SUDO_USER)")
    h.expect_equal(fields["host"], host, "host")
    since = datetime.datetime.strptime(fields["since"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    until = datetime.datetime.strptime(fields["until"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    h.expect_equal(until - since, FOR_S, "until - since")

    m = markers(unix)["drain"]
    h.expect_equal((m["reason"], m["owner"], m["host"], m["since"], m["until"]),
                   ("deploy", OWNER, host, fields["since"], fields["until"]),
                   "/status: the drain marker's reason, owner, host, since, until")
    # Exit 3: the node does not serve while it drains.
    status = ctl(lb.config_path, "status", rcs=(3,))

    def shown(iso_time):
        return iso_time.replace("T", " ").replace("Z", " UTC")
    h.expect(f"  set by {OWNER}@{host} at {shown(fields['since'])}\n" in status
             and f"  until {shown(fields['until'])}\n" in status,
             f"lbagentctl status shows who and until when:\n{status}")
    for line in status.splitlines():
        h.expect(len(line) <= 80, f"lbagentctl status: a line over 80 columns: {line!r}")
    local_until = datetime.datetime.fromtimestamp(until).strftime("%Y-%m-%d %H:%M:%S")
    why = ctl(lb.config_path, "why", rcs=(3,))
    h.expect(f"ends by itself at {local_until}, or with" in why,
             f"lbagentctl why says when the marker ends:\n{why}")
    h.expect_equal(expiry_metrics(unix), [("drain", f"{until:.3f}")],
                   "lbagent_marker_expiry_timestamp_seconds")
    h.wait_all_status(haps, "DRAIN (agent)", BOUND_S, "every server DRAIN (agent)")

    h.section("the drain ends by itself")
    back_on_both(haps, "after --for")
    h.expect(not os.path.exists(path), f"{path} still there after its end")
    h.expect_equal(read(path + ".expired"), content, "drain.expired: the marker as it was")
    log = lb.log_since(mark)
    h.expect(re.search(r"warning: marker drain ended: deploy \(set by "
                       + re.escape(f"{OWNER}@{host} at {fields['since']}, until "
                                   f"{fields['until']}") + r"\)", log),
             f"the log says the drain ended, at warning:\n{log}")
    h.expect("renamed to drain.expired" in log, f"the log names drain.expired:\n{log}")
    h.expect_equal(markers(unix), {}, "/status markers after the end")
    h.expect_equal(expiry_metrics(unix), [], "expiry metrics after the end")
    h.hold_all_status(haps, "UP", 2, "every server staying UP")

    h.section("a marker written with echo has no end")
    lb.set_marker("drain", "plain reason\n")
    h.wait_all_status(haps, "DRAIN (agent)", BOUND_S, "every server DRAIN (agent), echo")
    m = markers(unix)["drain"]
    h.expect_equal((m["reason"], m["owner"], m["until"], m["note"]),
                   ("plain reason", None, None, None), "/status of an echoed marker")
    h.expect_equal(expiry_metrics(unix), [], "no expiry for a marker without an end")
    h.hold_all_status(haps, "DRAIN (agent)", FOR_S + 1, "every server staying DRAIN")
    h.expect(os.path.exists(path), "the echoed marker is still there")
    lb.clear_marker("drain")
    h.wait_all_status(haps, "UP", BOUND_S, "every server UP after rm")

    h.section("a marker whose until is not a date: kept, said")
    mark = lb.log_mark()
    lb.set_marker("drain", "odd\nuntil: tomorrow morning\n")
    h.wait_all_status(haps, "DRAIN (agent)", BOUND_S, "every server DRAIN (agent), bad until")
    m = markers(unix)["drain"]
    h.expect_equal(m["until"], None, "until of a bad date")
    h.expect(m["note"] is not None and m["note"].startswith("line 2: until:"),
             f"the note of a bad until: {m['note']!r}")
    h.wait_until(lambda: lb.log_since(mark), 2, "the log says the until is not read",
                 ok=lambda log: "warning: marker drain: line 2: until:" in log)
    lb.clear_marker("drain")
    h.wait_all_status(haps, "UP", BOUND_S, "every server UP after rm")

    h.section("maint on --until an ISO 8601 time")
    end = math.ceil(time.time()) + FOR_S
    ctl(lb.config_path, "maint", "on", "--until", iso(end))
    h.expect_equal(markers(unix)["maint"]["until"], iso(end), "/status until of maint")
    h.wait_all_status(haps, "MAINT", BOUND_S, "every server MAINT")
    back_on_both(haps, "after --until")
    h.expect(os.path.exists(lb.marker_path("maint.expired")), "maint.expired")
    h.expect(os.path.exists(path + ".expired"), "drain.expired kept")
    for hap in haps:
        hap.stop()
    lb.stop()


h.run(main)
