"""systemd integration, with a datagram socket of the test as NOTIFY_SOCKET
and listening sockets the test passes as socket activation would:

- notify: STATUS=starting, STATUS= with the reply, then READY=1 only once
  the agent port answers (the test asks the port the moment READY=1
  arrives); STATUS= follows the reply (a drain marker); with
  WATCHDOG_USEC set, WATCHDOG=1 every half of it; SIGHUP gives
  RELOADING=1 (with MONOTONIC_USEC) then READY=1 and keeps serving;
  SIGTERM gives STOPPING=1, the last message;
- socket activation: a listening socket at descriptor 3 with LISTEN_FDS=1
  and LISTEN_PID of lbagent itself (`bash -c 'LISTEN_PID=$$ exec "$@"'`):
  the agent answers there and not on the configured [agent] listen port; a
  service's own `listen` port is still bound; the real HAProxy's agent
  check through the passed socket;
- the same through systemd-socket-activate (when installed) with two
  sockets named `agent:http`: the `http` one is kept, not answered;
- a descriptor that is not a listening socket: lbagent does not start,
  exits 1 and names the descriptor;
- probe commands see none of NOTIFY_SOCKET, WATCHDOG_*, LISTEN_*."""

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

WATCHDOG_USEC = 400000          # pings every 200 ms
SD_VARS = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_PID",
           "LISTEN_FDS", "LISTEN_FDNAMES")


class NotifySocket:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET. Records
    every message with its arrival time; on READY=1, at once asks the agent
    port `check_port` and records the answer (or the error)."""

    def __init__(self, check_port=None):
        e = h.env()
        self.path = e.path(e.unique_name("notify") + ".sock")
        self.check_port = check_port
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self._lock = threading.Lock()
        self._msgs = []
        self.ready_answers = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        e.register(self)

    def _loop(self):
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            text = data.decode(errors="replace")
            if text == "READY=1" and self.check_port is not None:
                try:
                    answer = h.ask(self.check_port, timeout_s=2.0)
                except OSError as e:
                    answer = f"{type(e).__name__}: {e}"
                self.ready_answers.append(answer)
            with self._lock:
                self._msgs.append((time.monotonic(), text))

    def messages(self):
        with self._lock:
            return [m for _, m in self._msgs]

    def timed(self, text):
        with self._lock:
            return [t for t, m in self._msgs if m == text]

    def wait_for(self, pred, what, timeout_s=None):
        return h.wait_until(self.messages, timeout_s or h.startup_bound_s(), what,
                            ok=pred)

    def close(self):
        self._stop.set()
        self.sock.close()
        self._thread.join(timeout=2)

    def diagnostics(self):
        return f"== notify socket {self.path}, messages:\n" + \
            "\n".join(f"  {m!r}" for m in self.messages()[-40:])

    def __repr__(self):
        return f"<NotifySocket {self.path}>"


def env_probe(path):
    """An exec probe that writes the environment it got to path."""
    script = h.write_script(os.path.join(os.path.dirname(path), "dump-env"),
                            f'env > "{path}.tmp" && mv "{path}.tmp" "{path}"\n'
                            'echo "env dumped"\n')
    return {"type": "exec", "command": script, "interval": "300ms", "timeout": "200ms"}


def expect_clean_probe_env(path, what):
    text = h.wait_until(lambda: open(path).read(), h.startup_bound_s(),
                        f"the env-dumping probe to run ({what})")
    names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line}
    leaked = sorted(names & set(SD_VARS))
    h.expect(not leaked, f"{what}: probe commands inherit {leaked}:\n{text}")


def with_fd3(fd, argv_tail):
    """argv running argv_tail with fd as descriptor 3 and LISTEN_PID its own
    pid (the shell execs, so the pid stays). bash, because dash's
    redirections take single-digit descriptors only."""
    move = "" if fd == 3 else f"exec 3<&{fd} {fd}<&-; "
    return ["/bin/bash", "-c", move + 'LISTEN_PID=$$ exec "$@"', "sh"] + argv_tail


def listening_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s, s.getsockname()[1]


def refused(port):
    try:
        h.ask(port, timeout_s=2.0)
    except ConnectionRefusedError:
        return True
    return False


def no_answer(port, wait_s=0.5):
    """The port accepts (the kernel's queue) but nobody replies."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as c:
        c.settimeout(wait_s)
        try:
            c.recv(100)
        except socket.timeout:
            return True
        return False


def notify_and_watchdog():
    h.section("Type=notify: READY=1 once the port answers, STATUS, watchdog")
    port = h.free_port()
    ns = NotifySocket(check_port=port)
    dump = h.env().path("notify-env")
    lb = h.Lbagent({"agent": {}, "probe envdump": env_probe(dump)}, port=port,
                   extra_env={"NOTIFY_SOCKET": ns.path,
                              "WATCHDOG_USEC": str(WATCHDOG_USEC)})
    msgs = ns.wait_for(lambda m: "READY=1" in m, "READY=1")
    h.expect_equal(ns.ready_answers[:1], [b"up\n"],
                   "the agent's answer, asked the moment READY=1 arrived")
    h.expect_equal(msgs[:3], ["STATUS=starting", "STATUS=up", "READY=1"],
                   "the first messages (in order)")
    lb.set_marker("drain", "kernel upgrade\n")
    ns.wait_for(lambda m: "STATUS=drain up #kernel upgrade" in m,
                "STATUS= following the reply to a drain marker")
    lb.clear_marker("drain")
    ns.wait_for(lambda m: m.count("STATUS=up") >= 2,
                "STATUS= back to up after the marker went")
    expect_clean_probe_env(dump, "under a notify socket and watchdog")

    h.section("WATCHDOG=1 every half of WATCHDOG_USEC")
    ns.wait_for(lambda m: m.count("WATCHDOG=1") >= 6, "six WATCHDOG=1 pings")
    times = ns.timed("WATCHDOG=1")
    gaps = [b - a for a, b in zip(times, times[1:])]
    half = WATCHDOG_USEC / 2e6
    # Never early (a timer runs late on a busy machine, not early); 30 ms
    # is for the receiving thread's own scheduling.
    h.expect(min(gaps) >= half - 0.03,
             f"WATCHDOG=1 gaps {[round(g, 3) for g in gaps]} s: some shorter than "
             f"half of WATCHDOG_USEC ({half} s)")
    h.expect(sorted(gaps)[len(gaps) // 2] < 2 * half,
             f"WATCHDOG=1 gaps {[round(g, 3) for g in gaps]} s: the median is not "
             f"about half of WATCHDOG_USEC ({half} s)")

    h.section("SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1")
    before = len(ns.messages())
    mark = lb.log_mark()
    os.kill(lb.pid, signal.SIGHUP)
    after = ns.wait_for(lambda m: "READY=1" in m[before:], "READY=1 after SIGHUP")[before:]
    after = [m for m in after if m != "WATCHDOG=1"]
    h.expect(len(after) >= 2 and after[0].startswith("RELOADING=1\nMONOTONIC_USEC=")
             and after[0].split("=")[-1].isdigit() and after[1] == "READY=1",
             f"after SIGHUP: expected RELOADING=1\\nMONOTONIC_USEC=N then READY=1, "
             f"saw {after}")
    h.expect("reloaded" in lb.log_since(mark), "SIGHUP reloads the configuration")
    h.expect_equal(lb.ask(), b"up\n", "answer after SIGHUP")

    h.section("SIGTERM: STOPPING=1, the last message")
    lb.stop(expect_rc=0)
    msgs = ns.wait_for(lambda m: "STOPPING=1" in m, "STOPPING=1")
    time.sleep(0.2)
    h.expect_equal(ns.messages()[-1], "STOPPING=1", "the last message")


def socket_activation():
    h.section("socket activation: fd 3, LISTEN_FDS=1, LISTEN_PID of lbagent")
    sock, passed = listening_socket()
    configured, svc_port = h.free_port(), h.free_port()
    ns = NotifySocket(check_port=passed)
    dump = h.env().path("activated-env")
    lb = h.Lbagent({"agent": {"listen": f"127.0.0.1:{configured}"},
                    "probe envdump": env_probe(dump),
                    "service api": {"probes": "envdump",
                                    "listen": f"127.0.0.1:{svc_port}"}},
                   name="activated", port=passed,
                   launcher=with_fd3(sock.fileno(), []), pass_fds=(sock.fileno(),),
                   extra_env={"LISTEN_FDS": "1", "LISTEN_FDNAMES": "lbagent.socket",
                              "NOTIFY_SOCKET": ns.path})
    sock.close()        # lbagent's copy is the only one now
    h.expect_equal(lb.ask(), b"up\n", "answer on the passed socket")
    h.expect(refused(configured),
             f"the configured [agent] listen port {configured} must not be bound "
             f"when a socket is passed")
    h.expect_equal(lb.ask(port=svc_port), b"up\n", "answer on the service's own port")
    ns.wait_for(lambda m: "READY=1" in m, "READY=1")
    h.expect_equal(ns.ready_answers[:1], [b"up\n"], "answer the moment READY=1 arrived")
    h.expect("(socket activation)" in lb.log(), "the log says where it listens")
    expect_clean_probe_env(dump, "socket-activated")

    h.section("the real HAProxy checks through the passed socket")
    hap = h.Haproxy([lb])
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(),
                    "s1 UP with a successful agent check through the passed socket",
                    ok=lambda st: h.agent_result(st) == "L7OK")
    lb.set_marker("drain", "activated")
    hap.wait_status("be", "s1", "DRAIN (agent)", h.marker_bound_s(),
                    "s1 DRAIN from the drain marker, through the passed socket")
    lb.stop(expect_rc=0)


def systemd_socket_activate():
    tool = shutil.which("systemd-socket-activate")
    if tool is None:
        print("   systemd-socket-activate not installed: that part not run", flush=True)
        return
    h.section("systemd-socket-activate, sockets named agent:http")
    agent_port, http_port, configured = h.free_port(), h.free_port(), h.free_port()
    ns = NotifySocket()
    keep = [f"--setenv={v}" for v in ("ASAN_OPTIONS", "UBSAN_OPTIONS") if v in os.environ]
    lb = h.Lbagent({"listen": f"127.0.0.1:{configured}"}, name="ssa", port=agent_port,
                   launcher=[tool, "-l", f"127.0.0.1:{agent_port}",
                             "-l", f"127.0.0.1:{http_port}", "--fdname=agent:http",
                             f"--setenv=NOTIFY_SOCKET={ns.path}"] + keep)
    h.expect_equal(lb.ask(), b"up\n", "answer on the socket named agent")
    h.expect(no_answer(http_port), "the socket named http is kept, not answered")
    h.expect(refused(configured), "the configured port is not bound")
    ns.wait_for(lambda m: "READY=1" in m, "READY=1")
    h.expect("named \"http\" kept for the HTTP API" in lb.log(),
             "the log says the http socket is kept")
    lb.stop(expect_rc=0)


def bad_descriptor():
    h.section("a passed descriptor that is not a listening socket: exit 1")
    path = h.env().path("bad-fd.conf")
    with open(path, "w") as f:
        f.write(h.ini_text({"agent": {"listen": f"127.0.0.1:{h.free_port()}",
                                      "state_dir": h.tmpdir()},
                            "http": {"listen": "none"}}))
    sock, _ = listening_socket()
    bound = socket.socket(socket.AF_INET, socket.SOCK_STREAM)   # bound, not listening
    bound.bind(("127.0.0.1", 0))
    # Out of the way of 3 and 4 first, then fd 3 the listening socket and
    # fd 4 the bound one.
    high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD_CLOEXEC, 20) for s in (sock, bound)]
    sock.close()
    bound.close()
    script = f"exec 3<&{high[0]} 4<&{high[1]}; " + 'LISTEN_PID=$$ exec "$@"'
    env = dict(os.environ, LISTEN_FDS="2")
    try:
        r = subprocess.run(["/bin/bash", "-c", script, "sh", h.lbagent_exe(), "-f", path],
                           pass_fds=high, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
    except subprocess.TimeoutExpired:
        raise h.TestFailure("lbagent with a bad passed descriptor kept running") from None
    finally:
        for fd in high:
            os.close(fd)
    out = r.stdout.decode(errors="replace")
    h.expect(r.returncode == 1 and "descriptor 4 (unnamed) is not listening" in out
             and "not starting" in out,
             f"expected exit 1 naming descriptor 4, got exit {r.returncode}:\n{out}")


def main():
    h.require_kinds("exec")
    notify_and_watchdog()
    socket_activation()
    systemd_socket_activate()
    bad_descriptor()


h.run(main)
