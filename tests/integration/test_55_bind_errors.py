"""A listen address lbagent cannot bind is told with the configuration line
that sets it and what to do:

- a second lbagent on a port the first holds exits, its output
  `FILE:LINE: listen 127.0.0.1:P: address already in use (is another lbagent
  running? ss -ltnp 'sport = P')`;
- an address not on this host: `address not available (it is not an
  address of this host: ip -br addr)`;
- the same for [http] listen on a busy port, and for a unix socket in a
  directory that does not exist (`directory D does not exist (create it,
  ...)`);
- a unix socket another lbagent listens on is not taken from it (it used to
  be unlinked and bound anew, leaving the first one's API unreachable):
  `address already in use (is another lbagent running? ss -lxp src PATH)`;
- the compiled default (no listen in the file) says so:
  `FILE: [agent] listen (default) *:9505: ...`;
- a reload that adds an address it cannot bind logs the same text and keeps
  answering on the addresses that stay."""

import os
import signal
import socket
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402


def line_of(text, needle):
    """The 1-based number of the first line of text that starts with needle."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith(needle):
            return n
    raise h.TestFailure(f"no line starting {needle!r} in:\n{text}")


def run_once(text, name):
    """Runs lbagent in the foreground on text, which must make it exit at
    start-up; returns (path, returncode, output)."""
    path = h.env().path(h.env().unique_name(name) + ".conf")
    with open(path, "w") as f:
        f.write(text)
    try:
        r = subprocess.run([h.lbagent_exe(), "-f", path], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=h.startup_bound_s())
    except subprocess.TimeoutExpired:
        raise h.TestFailure(f"lbagent on {path} kept running; it should have "
                            f"failed to bind and exited") from None
    out = r.stdout.decode(errors="replace")
    print(out, end="", flush=True)
    return path, r.returncode, out


def holder(port, host="127.0.0.1"):
    """A listening socket that holds host:port (None: someone else does)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((host, port))
    except OSError:
        s.close()
        return None
    s.listen(1)
    return s


def in_use(port):
    return (f"address already in use (is another lbagent running? "
            f"ss -ltnp 'sport = {port}')")


def main():
    d = h.tmpdir()
    state = os.path.join(d, "state")
    os.makedirs(state)

    h.section("a second lbagent on the first one's port")
    first = h.Lbagent()
    text = h.ini_text({"agent": {"state_dir": state,
                                 "listen": f"127.0.0.1:{first.port}"},
                       "http": {"listen": "none"}})
    path, rc, out = run_once(text, "second")
    h.expect(rc != 0, f"the second lbagent exits non-zero (got {rc})")
    want = (f"{path}:{line_of(text, 'listen')}: listen 127.0.0.1:{first.port}: "
            f"{in_use(first.port)}")
    h.expect(want in out, f"its output has {want!r}")
    h.expect_equal(first.ask(), b"up\n", "the first one still answers")

    h.section("an address that is not this host's")
    text = h.ini_text({"agent": {"state_dir": state, "listen": "192.0.2.1:9505"},
                       "http": {"listen": "none"}})
    path, rc, out = run_once(text, "not-here")
    h.expect(rc != 0, f"lbagent exits non-zero (got {rc})")
    want = (f"{path}:{line_of(text, 'listen')}: listen 192.0.2.1:9505: address not "
            f"available (it is not an address of this host: ip -br addr)")
    h.expect(want in out, f"its output has {want!r}")

    h.section("[http] listen on a busy port")
    busy = h.free_port()
    hold = holder(busy)
    h.expect(hold is not None, f"the test holds 127.0.0.1:{busy}")
    port = h.free_port()
    text = h.ini_text({"agent": {"state_dir": state, "listen": f"127.0.0.1:{port}"},
                       "http": {"listen": f"127.0.0.1:{busy}"}})
    path, rc, out = run_once(text, "http-busy")
    h.expect(rc != 0, f"lbagent exits non-zero (got {rc})")
    http_line = [n for n, line in enumerate(text.splitlines(), 1)
                 if line.startswith("listen")][1]
    want = f"{path}:{http_line}: listen 127.0.0.1:{busy}: {in_use(busy)}"
    h.expect(want in out, f"its output has {want!r}")

    h.section("[http] listen on a unix socket in a missing directory")
    sock = os.path.join(d, "missing", "api.sock")
    text = h.ini_text({"agent": {"state_dir": state, "listen": f"127.0.0.1:{port}"},
                       "http": {"listen": f"unix:{sock}"}})
    path, rc, out = run_once(text, "unix-missing")
    h.expect(rc != 0, f"lbagent exits non-zero (got {rc})")
    http_line = [n for n, line in enumerate(text.splitlines(), 1)
                 if line.startswith("listen")][1]
    want = (f"{path}:{http_line}: listen unix:{sock}: directory "
            f"{os.path.join(d, 'missing')} does not exist (create it")
    h.expect(want in out, f"its output has {want!r}")

    h.section("a unix socket another lbagent listens on")
    live = os.path.join(d, "live.sock")
    # A probe (a file that is there): /health's plain 200.
    owner = h.Lbagent({"http": {"listen": f"unix:{live}"}, "probe up": {"type": "file", "path": h.tmpdir()}})
    h.expect_equal(h.http_request("unix:" + live, "/health")[0], 200,
                   "the first lbagent's API answers")
    text = h.ini_text({"agent": {"state_dir": state, "listen": f"127.0.0.1:{port}"},
                       "http": {"listen": f"unix:{live}"}})
    path, rc, out = run_once(text, "unix-live")
    h.expect(rc != 0, f"lbagent exits non-zero (got {rc})")
    http_line = [n for n, line in enumerate(text.splitlines(), 1)
                 if line.startswith("listen")][1]
    want = (f"{path}:{http_line}: listen unix:{live}: address already in use "
            f"(is another lbagent running? ss -lxp src {live})")
    h.expect(want in out, f"its output has {want!r}")
    h.expect_equal(h.http_request("unix:" + live, "/health")[0], 200,
                   "the first lbagent's API still answers on its socket")
    owner.stop()

    h.section("the default listen, *:9505, held")
    # Held by this test, or by someone else: busy either way.
    hold9505 = holder(9505, "0.0.0.0")
    text = h.ini_text({"agent": {"state_dir": state}, "http": {"listen": "none"}})
    path, rc, out = run_once(text, "default")
    h.expect(rc != 0, f"lbagent exits non-zero (got {rc})")
    want = f"{path}: [agent] listen (default) *:9505: {in_use(9505)}"
    h.expect(want in out, f"its output has {want!r}")
    if hold9505 is not None:
        hold9505.close()

    h.section("a reload that adds a busy address")
    mark = first.log_mark()
    text = h.ini_text({"agent": {"state_dir": first.state_dir,
                                 "listen": f"127.0.0.1:{first.port}, 127.0.0.1:{busy}"},
                       "http": {"listen": "none"}})
    with open(first.config_path, "w") as f:
        f.write(text)
    os.kill(first.pid, signal.SIGHUP)
    want = (f"{first.config_path}:{line_of(text, 'listen')}: listen 127.0.0.1:{busy}: "
            f"{in_use(busy)}")
    h.wait_until(lambda: first.log_since(mark), h.startup_bound_s(),
                 f"the reload to log {want!r}", ok=lambda t: want in t,
                 describe=lambda t: t[-600:])
    h.expect_equal(first.ask(), b"up\n", "it still answers on the port that stays")
    hold.close()
    first.stop()


h.run(main)
