"""lbagentctl reload, end to end.

- a valid changed configuration: `lbagentctl reload` exits 0 and says
  "reloaded", the reload count went up by one, last_reload is ok, and the
  change took effect (a probe's on_crit: 50% instead of down);
- a broken configuration: exit 1, stdout is the daemon's errors as
  FILE:LINE: message, the same lines `lbagent -c` prints for that file,
  and lbagent keeps answering with the previous configuration;
- fixed again: exit 0;
- POST /reload on the unix socket answers 202 and reloads (the change takes
  effect); on TCP, even with the token, it is refused (403) and nothing
  reloads; GET /reload is 405 with Allow: POST;
- lbagentctl reload by a user who may use the socket but cannot signal the
  daemon (uid nobody, gid root, while lbagent runs as root): it asks over
  the socket, and the reload happens; over TCP with the token it signals
  lbagent as before."""

import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402


TOKEN = "t0ken-for-the-test"


def ctl(*args, launcher=()):
    return h.lbagentctl(*args, launcher=launcher)


def main():
    d = h.tmpdir()
    dep = os.path.join(d, "dep.ok")     # never there: the probe is crit
    sock = os.path.join(d, "http.sock")
    port = h.free_port()
    token_file = os.path.join(d, "token")
    h.write_atomic(token_file, TOKEN + "\n", mode=0o600)
    auth = {"Authorization": f"Bearer {TOKEN}"}

    def config(on_crit):
        return {
            "agent": {"reply_reasons": "yes", **h.IMMEDIATE},
            "http": {"listen": f"unix:{sock}, 127.0.0.1:{port}",
                     "token_file": token_file},
            "probe dep": {"type": "file", "path": dep, "interval": "200ms",
                          "timeout": "100ms", "on_crit": on_crit},
        }

    lb = h.Lbagent(config("down"))
    h.wait_until(lb.ask, h.probe_bound_s(200, 100), "down while dep is missing",
                 ok=lambda r: r.startswith(b"down"))
    _, before = h.http_json(f"unix:{sock}", "/status")

    h.section("a valid change: reloaded, in effect")
    with open(lb.config_path, "w") as f:
        f.write(lb._render(config("50%")))
    rc, out, err = ctl("-f", lb.config_path, "reload")
    h.expect(rc == 0 and "reloaded" in out, f"reload: exit {rc}\n{out}\n{err}")
    _, after = h.http_json(f"unix:{sock}", "/status")
    h.expect_equal(after["reloads"], before["reloads"] + 1, "reloads")
    h.expect(after["last_reload"]["ok"] is True, f"last_reload {after['last_reload']!r}")
    h.wait_until(lb.ask, h.probe_bound_s(200, 100), "up 50% after the reload",
                 ok=lambda r: r.startswith(b"up 50%"))

    h.section("a broken configuration: its errors, the old one kept")
    broken = lb._render(config("50%")) + "\n[probe bad]\ntype = nosuchkind\n"
    with open(lb.config_path, "w") as f:
        f.write(broken)
    want = subprocess.run([h.lbagent_exe(), "-c", "-f", lb.config_path],
                          stdout=subprocess.PIPE).stdout.decode()
    rc, out, err = ctl("-f", lb.config_path, "reload")
    h.expect_equal(rc, 1, f"reload of a broken file: exit status ({err!r})")
    h.expect_equal(out.splitlines(), [l for l in want.splitlines() if l != "configuration OK"],
                   "the errors, as lbagent -c prints them")
    h.expect(f"{lb.config_path}:" in out, f"FILE:LINE: message lines: {out!r}")
    h.expect("previous configuration" in err, f"says the old one is kept: {err!r}")
    h.expect(lb.ask().startswith(b"up 50%"), "still answering with the previous config")

    h.section("fixed again")
    with open(lb.config_path, "w") as f:
        f.write(lb._render(config("50%")))
    rc, out, err = ctl("-f", lb.config_path, "reload")
    h.expect(rc == 0, f"reload after the fix: exit {rc}\n{out}\n{err}")

    def reloads():
        return h.http_json(f"unix:{sock}", "/status")[1]["reloads"]

    h.section("POST /reload: on the unix socket it reloads, on TCP it is refused")
    with open(lb.config_path, "w") as f:
        f.write(lb._render(config("25%")))
    n = reloads()
    status, hdrs, body = h.http_request(port, "/reload", method="POST", headers=auth)
    h.expect_equal(status, 403, f"POST /reload on TCP with the token ({body!r})")
    h.expect("unix socket" in json.loads(body).get("error", ""),
             f"the refusal says where to ask: {body!r}")
    status, hdrs, _ = h.http_request(f"unix:{sock}", "/reload")
    h.expect_equal((status, hdrs.get("allow")), (405, "POST"), "GET /reload")
    h.expect_equal(reloads(), n, "no reload from a refused or wrong request")
    h.expect(lb.ask().startswith(b"up 50%"), "the old configuration still answers")
    status, hdrs, body = h.http_request(f"unix:{sock}", "/reload", method="POST")
    h.expect_equal(status, 202, f"POST /reload on the unix socket ({body!r})")
    h.expect(hdrs.get("content-type", "").startswith("application/json"),
             f"a JSON body: {hdrs!r}")
    h.expect_equal(json.loads(body).get("reloads"), n, f"says the count before: {body!r}")
    h.wait_until(reloads, h.startup_bound_s(), "the reload POST /reload asked for", ok=lambda r: r == n + 1)
    h.wait_until(lb.ask, h.probe_bound_s(200, 100), "up 25% after POST /reload",
                 ok=lambda r: r.startswith(b"up 25%"))

    h.section("lbagentctl reload over TCP with the token: it signals lbagent, as before")
    with open(lb.config_path, "w") as f:
        f.write(lb._render(config("60%")))
    n, mark = reloads(), lb.log_mark()
    rc, out, err = ctl("-f", lb.config_path, "-s", f"127.0.0.1:{port}", "reload")
    h.expect(rc == 0 and "reloaded" in out, f"reload over TCP: exit {rc}\n{out}\n{err}")
    h.expect_equal(reloads(), n + 1, "one reload")
    h.expect("SIGHUP: reloading" in lb.log_since(mark), "by the signal")
    h.wait_until(lb.ask, h.probe_bound_s(200, 100), "up 60% after the signal",
                 ok=lambda r: r.startswith(b"up 60%"))

    h.section("lbagentctl reload over the socket, by a user who cannot signal lbagent")
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        raise h.TestFailure("needs root and setpriv to run lbagentctl as another user")
    # The group root may use the socket (0660) and read the configuration;
    # uid nobody may not signal a root process.
    os.chmod(d, 0o750)
    as_member = [setpriv, "--reuid=nobody", "--regid=0", "--clear-groups", "--"]
    rc, out, err = ctl("-f", lb.config_path, "status", launcher=as_member)
    h.expect(rc == 0, f"status as nobody with group root: exit {rc}\n{out}\n{err}")
    with open(lb.config_path, "w") as f:
        f.write(lb._render(config("75%")))
    n = reloads()
    mark = lb.log_mark()
    rc, out, err = ctl("-f", lb.config_path, "reload", launcher=as_member)
    h.expect(rc == 0 and "reloaded" in out,
             f"reload as nobody with group root: exit {rc}\n{out}\n{err}")
    h.expect_equal(reloads(), n + 1, "one reload")
    h.expect("POST /reload: reloading" in lb.log_since(mark), "asked over the socket")
    h.wait_until(lb.ask, h.probe_bound_s(200, 100), "up 75% after lbagentctl reload",
                 ok=lambda r: r.startswith(b"up 75%"))


h.run(main)
