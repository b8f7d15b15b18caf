"""Markers that are symbolic links, against a real lbagent and a real HAProxy:
a link is never followed, so its target's text (a secret file, lbagent's
own environment) is never a public reason; it is there, so it counts as
present with the default reason, dangling or not, and the log says once
that it is a link whose content is not read.

1. state_dir/drain -> a file with a secret first line: HAProxy shows the
   server DRAIN, the reply is `drain up #drain marker`, the public /status
   has no secret either; one warning in the log;
2. state_dir/maint -> /proc/self/environ (lbagent's environment, with a
   variable set for the test): `maint up #maint marker`; removed: back;
3. a dangling state_dir/drain: drain all the same;
4. state_dir/web/ a link to another directory holding a `drain` with a
   secret: service web drains with `#drain marker`."""

import json
import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

BOUND_S = h.marker_bound_s()
SECRET = "root:$6$SECRET-HASH-never-shown:19000:0:99999:7:::"
ENV_SECRET = "LBAGENT_TEST_ENV_SECRET"


def public_status(port):
    return h.http_request(port, "/status")[2].decode(errors="replace")


def link_marker(lb, name, target):
    path = lb.marker_path(name)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    secret = os.path.join(d, "shadow")
    h.write_atomic(secret, SECRET + "\n")
    http_port = h.free_port()
    lb = h.Lbagent({"agent": {"reply_reasons": "yes"},
                    "http": {"listen": f"127.0.0.1:{http_port}"},
                    "probe p": {"type": "file", "path": "/", "interval": "100ms",
                                "timeout": "90ms"},
                    "service web": {"probes": "p"}},
                   extra_env={ENV_SECRET: "env-secret-value-never-shown"})
    # Several services share the port: HAProxy names the default one (an
    # empty line), else lbagent waits request_timeout for a name.
    hap = h.Haproxy([lb], agent_send="")
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start",
                    ok=lambda st: h.agent_result(st) == "L7OK")

    h.section("a drain marker linked to a secret file: present, not read")
    mark = lb.log_mark()
    link_marker(lb, "drain", secret)
    hap.wait_status("be", "s1", "DRAIN (agent)", BOUND_S, "s1 DRAIN (agent) by the linked marker")
    h.expect_equal(lb.ask(), b"drain up #drain marker\n", "the public reply")
    h.hold_for(lb.ask, 1.0, "the reply stays the default reason",
               ok=lambda r: r == b"drain up #drain marker\n")
    st = public_status(http_port)
    h.expect("SECRET" not in st, f"the secret in the public /status: {st}")
    log = lb.log_since(mark)
    warned = [ln for ln in log.splitlines() if "marker drain" in ln and "symbolic link" in ln]
    h.expect(len(warned) == 1 and "not read" in warned[0],
             f"one warning that drain is a link whose content is not read:\n{log}")
    h.expect("SECRET" not in lb.log(), "the secret in the log")
    os.unlink(lb.marker_path("drain"))
    hap.wait_status("be", "s1", "UP", BOUND_S, "s1 UP once the link is gone")

    h.section("a maint marker linked to /proc/self/environ: present, not read")
    link_marker(lb, "maint", "/proc/self/environ")
    h.wait_reply(lb, b"maint up #maint marker\n", "maint by the linked marker",
                 timeout_s=BOUND_S)
    hap.wait_status("be", "s1", "MAINT", BOUND_S, "s1 MAINT by the linked marker",
                    ok=lambda st: st["status"].startswith("MAINT"))
    h.expect("env-secret" not in public_status(http_port), "the environment in /status")
    os.unlink(lb.marker_path("maint"))
    h.wait_reply(lb, lambda r: not r.startswith(b"maint"), "maint gone with the link",
                 timeout_s=BOUND_S)

    h.section("a dangling drain link: present")
    link_marker(lb, "drain", os.path.join(d, "nothing-there"))
    h.wait_reply(lb, b"drain up #drain marker\n", "drain by the dangling link",
                 timeout_s=BOUND_S)
    os.unlink(lb.marker_path("drain"))
    h.wait_reply(lb, lambda r: not r.startswith(b"drain"), "drain gone with the link",
                 timeout_s=BOUND_S)

    h.section("a service's directory that is a link: not read through")
    elsewhere = os.path.join(d, "elsewhere")
    os.makedirs(elsewhere)
    h.write_atomic(os.path.join(elsewhere, "drain"), SECRET + "\n")
    web = os.path.join(lb.state_dir, "web")
    os.rmdir(web)
    os.symlink(elsewhere, web)
    h.wait_reply(lb, b"drain up #drain marker\n", "web drained by the marker in the link",
                 send=b"web\n", timeout_s=BOUND_S)
    doc = json.loads(public_status(http_port))
    h.expect("SECRET" not in json.dumps(doc), f"the secret in /status: {doc}")
    r = lb.ask()
    h.expect(not r.startswith(b"drain"), f"the default service drained by web's marker: {r!r}")


h.run(main)
