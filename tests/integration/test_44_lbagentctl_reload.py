"""lbagentctl reload, end to end.

- a valid changed configuration: `lbagentctl reload` exits 0 and says
  "reloaded", the reload count went up by one, last_reload is ok, and the
  change took effect (a probe's on_crit: 50% instead of down);
- a broken configuration: exit 1, stdout is the daemon's errors as
  FILE:LINE: message, the same lines `lbagent -c` prints for that file,
  and lbagent keeps answering with the previous configuration;
- fixed again: exit 0."""

import os
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402


def ctl(*args):
    exe = os.environ.get("LBAGENTCTL")
    if not exe:
        raise h.TestFailure("LBAGENTCTL is not set: run through `meson test`")
    r = subprocess.run([exe] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def main():
    d = h.tmpdir()
    dep = os.path.join(d, "dep.ok")     # never there: the probe is crit
    sock = os.path.join(d, "http.sock")

    def config(on_crit):
        return {
            "agent": {"reply_reasons": "yes", **h.IMMEDIATE},
            "http": {"listen": f"unix:{sock}"},
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


h.run(main)
