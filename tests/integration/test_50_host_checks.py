"""`lbagent -c` checks the file against the host too, for what would fail
only once lbagent runs: each as `FILE:LINE: warning: ...` on the line it is
about, with exit 0 and `configuration OK`, since it may be right on the host
lbagent will run on:

- an exec probe's `command` given by an absolute path that is not here;
- `user =` while lbagent does not run as root (checked as the user nobody,
  as the packages' unit runs lbagent as the user lbagent);
- an [http] token_file that does not exist;
- an [http] unix socket whose directory does not exist;
- an http probe's `auth_file` that cannot be read (a missing one, and one
  whose content is not `user:password`; the content is never shown).

The first four at once come out in file order. The daemon, started on a file
with the first and third, logs the same lines at start. And a disk probe's
`warn = 85` (no %: 85 bytes free) is an error that says so, on its line,
instead of `crit must be below warn`."""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

HEAD = "[agent]\nlisten = 127.0.0.1:9\nno_probes = yes\n"   # 3 lines (no_probes: test_87 is about that warning)


def messages(out, path):
    """[(line, message)] of the FILE:LINE: lines in out."""
    rx = re.compile(re.escape(path) + r":(\d+): (.+)$")
    return [(int(m.group(1)), m.group(2)) for m in map(rx.match, out.splitlines()) if m]


def show(name, rc, out):
    print(f"   {name}: exit {rc}\n" + "".join(f"      {line}\n" for line in out.splitlines()),
          end="", flush=True)


def expect_warnings(name, rc, out, path, want):
    """want: [(line, words)]; each a `warning:` on that line naming the words."""
    show(name, rc, out)
    h.expect_equal(rc, 0, f"{name}: exit status of `lbagent -c` (warnings only):\n{out}")
    h.expect("configuration OK" in out, f"{name}: no `configuration OK`:\n{out}")
    seen = messages(out, path)
    for line, words in want:
        hit = [m for n, m in seen if n == line and m.startswith("warning: ") and
               all(w in m for w in words)]
        h.expect(hit, f"{name}: expected `{path}:{line}: warning: ...` naming {words}; "
                 f"the output was:\n{out}")
    h.expect_equal(len(seen), len(want), f"{name}: how many FILE:LINE: lines ({seen})")


def check(name, body):
    rc, out, path = h.check_config(HEAD + body, name=name)
    return rc, out, path


def check_as_nobody(name, text):
    """lbagent -c as the user nobody (the test may run as root)."""
    path = h.env().path(h.env().unique_name(name) + ".conf")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(h.env().dir, 0o755)
    os.chmod(path, 0o644)
    argv = [h.lbagent_exe(), "-c", "-f", path]
    if os.geteuid() == 0:
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + argv
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    return r.returncode, r.stdout.decode(errors="replace"), path


EXEC_MISSING = """\
[probe app]
type = exec
command = /nonexistent/lbagent-test/check_app --quick
"""

USER = """\
[probe as-nobody]
type = exec
command = /bin/true
user = nobody
"""

TOKEN = """\
[http]
listen = 127.0.0.1:{port}
token_file = /nonexistent/lbagent-test/token
"""

SOCKET = """\
[http]
listen = 127.0.0.1:{port}, unix:/nonexistent/lbagent-test/http.sock
"""

AUTH = """\
[probe rabbit]
type = http
url = http://127.0.0.1:9/
auth_file = {path}
"""

DISK = """\
[probe disk]
type = disk
path = /
warn = 85
crit = 95
"""


def main():
    h.require_kinds("exec", "disk")
    port = h.free_port()

    h.section("a missing absolute command path")
    rc, out, path = check("exec-missing", EXEC_MISSING)
    expect_warnings("exec command", rc, out, path,
                    [(6, ["command", "/nonexistent/lbagent-test/check_app",
                          "No such file or directory"])])

    h.section("user = while not running as root")
    rc, out, path = check_as_nobody("user", HEAD + USER)
    expect_warnings("user as nobody", rc, out, path,
                    [(7, ["user = nobody", "root", "the user lbagent"])])
    if os.geteuid() == 0:
        rc, out, path = check("user-root", USER)
        show("user as root", rc, out)
        h.expect(rc == 0 and "warning" not in out,
                 f"as root, `user =` is no warning:\n{out}")

    h.section("a missing token_file")
    rc, out, path = check("token", TOKEN.format(port=port))
    expect_warnings("token_file", rc, out, path,
                    [(6, ["token_file /nonexistent/lbagent-test/token",
                          "No such file or directory", "public"])])

    h.section("an http probe's auth_file that cannot be read")
    rc, out, path = check("auth-missing", AUTH.format(
        path="/nonexistent/lbagent-test/rabbitmq.auth"))
    expect_warnings("auth_file missing", rc, out, path,
                    [(7, ["auth_file /nonexistent/lbagent-test/rabbitmq.auth",
                          "No such file or directory", "crit"])])
    bad = h.env().path("bad.auth")
    with open(bad, "w") as f:
        f.write("no-colon-secret-XYZZY\n")
    rc, out, path = check("auth-bad", AUTH.format(path=bad))
    expect_warnings("auth_file bad", rc, out, path,
                    [(7, ["auth_file " + bad, "user:password"])])
    h.expect("XYZZY" not in out, f"the auth file's content is shown:\n{out}")
    good = h.env().path("good.auth")
    with open(good, "w") as f:
        f.write("user:secret\n")
    rc, out, path = check("auth-good", AUTH.format(path=good))
    show("auth_file readable", rc, out)
    h.expect(rc == 0 and "warning" not in out,
             f"a readable auth_file is no warning:\n{out}")

    h.section("a unix socket whose directory is missing")
    rc, out, path = check("socket", SOCKET.format(port=port))
    expect_warnings("unix socket", rc, out, path,
                    [(5, ["unix:/nonexistent/lbagent-test/http.sock",
                          "/nonexistent/lbagent-test", "does not exist"])])

    h.section("all of them, in file order")
    rc, out, path = check_as_nobody(
        "all", HEAD + EXEC_MISSING + "\n" + USER + "\n" +
        "[http]\nlisten = 127.0.0.1:%d, unix:/nonexistent/lbagent-test/http.sock\n"
        "token_file = /nonexistent/lbagent-test/token\n" % port)
    expect_warnings("all at once", rc, out, path,
                    [(6, ["command"]), (11, ["user = nobody"]), (14, ["unix:"]),
                     (15, ["token_file"])])
    lines = [n for n, _ in messages(out, path)]
    h.expect_equal(lines, sorted(lines), "the warnings' lines, in file order")

    h.section("the daemon logs the same warnings at start")
    text = ("[agent]\nlisten = 127.0.0.1:{port}\nstate_dir = {state_dir}\n\n" +
            EXEC_MISSING + "\n" + TOKEN.format(port=h.free_port()))
    lb = h.Lbagent(text)
    rc, out, path = h.check_config(lb.config_text, name="daemon-check")
    show("-c on the daemon's file", rc, out)
    h.expect_equal(rc, 0, f"-c on the daemon's file:\n{out}")
    warned = [line[len(path) + 1:] for line in out.splitlines()
              if line.startswith(path + ":") and ": warning: " in line]
    h.expect_equal(len(warned), 2, f"the warnings of -c:\n{out}")
    log = lb.log()
    for w in warned:
        # -c names its own copy of the file; the log names the daemon's.
        want = f"{lb.config_path}:{w}"
        h.expect(want in log, f"the start log lacks `{want}`; it says:\n{lb.log_tail()}")
    lb.stop()

    h.section("disk warn = 85 without %")
    rc, out, path = check("disk", DISK)
    show("disk warn = 85", rc, out)
    h.expect_equal(rc, 1, f"exit status of `lbagent -c`:\n{out}")
    h.expect("configuration OK" not in out, f"says `configuration OK`:\n{out}")
    seen = messages(out, path)
    hit = [m for n, m in seen if n == 7 and
           "85 is read as 85 bytes free; did you mean 85%?" in m]
    h.expect(hit, f"expected `{path}:7: warn: 85 is read as 85 bytes free; "
             f"did you mean 85%?`; the output was:\n{out}")
    h.expect("crit must be below warn" not in out, f"the old message:\n{out}")
    rc, out, path = check("disk-ok", DISK.replace("warn = 85", "warn = 85%")
                          .replace("crit = 95", "crit = 95%"))
    show("disk warn = 85%", rc, out)
    h.expect(rc == 0 and out.strip() == "configuration OK", f"85% and 95%:\n{out}")


h.run(main)
