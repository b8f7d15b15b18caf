"""Black-box harness for lbagent's integration scenarios (stdlib only).

Each scenario is one script that starts the real lbagent and, usually, one or
more real HAProxy instances on loopback, and ends through run():

    import harness as h

    def main():
        lb = h.Lbagent()
        hap = h.Haproxy([lb])
        hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start")

    h.run(main)

run() maps the outcome to an exit status (0 pass, 1 failure, 77 skip for an
environmental reason only), prints what was expected and what was seen plus
every daemon's log tail and every HAProxy's output on failure, and stops
every process it started even when the scenario fails or is interrupted.

Conventions:
- Every time bound handed to wait_until() is a liveness bound: generous, with
  a margin for shared and noisy machines. Nothing here asserts speed.
- Each HAProxy instance checks from its own loopback source address
  (127.0.0.2, 127.0.0.3, ...), because lbagent tells load balancers apart by
  source address and agent-send text.
- Processes are started from the main thread only: they are tied to the
  test's lifetime with a parent-death signal, which Linux delivers when the
  forking *thread* exits.

Environment:
  LBAGENT              absolute path of the daemon under test (required)
  LBAGENT_SANITIZE     meson's b_sanitize value, e.g. "address" (optional)
  LBAGENT_TEST_KEEP=1  keep the temporary directory for inspection
  LBAGENT_TEST_TIME_SCALE  multiplies every liveness bound (default 1)
"""

import atexit
import csv
import io
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

POLL_S = 0.05
AGENT_INTER_MS = 150      # agent-inter used by the scenarios unless they say otherwise
CHECK_INTER_MS = 200      # the regular TCP check's inter
CHECK_TIMEOUT_S = 1.0     # HAProxy's `timeout check` in the configs written here
LOG_TAIL_LINES = 80
KILL_GRACE_S = 10.0       # how long a process gets to exit after SIGTERM


class TestFailure(AssertionError):
    """The daemon (or HAProxy as driven by it) did not behave as expected."""


class Skip(Exception):
    """The scenario cannot run here for an environmental reason only."""


# ---------------------------------------------------------------- time

def _time_scale():
    try:
        scale = float(os.environ.get("LBAGENT_TEST_TIME_SCALE", "1"))
    except ValueError:
        scale = 1.0
    return max(scale, 1.0)


def startup_bound_s():
    """Liveness bound (seconds) for a process to start answering and for
    HAProxy's first checks (rise 2 x inter 200 ms for the TCP check), with a
    wide margin for shared machines."""
    return 10.0


def marker_bound_s(agent_inter_ms=AGENT_INTER_MS):
    """Liveness bound for a marker change to show in HAProxy.

    lbagent promises to pick up a marker change within 1 s, and HAProxy
    needs up to two agent-inters to ask and apply the new reply (one check
    may already be in flight with the old answer). That makes
    1 s + 2 x agent-inter; the extra 2 s is a margin for shared, noisy
    machines, so this is a liveness bound, not a speed requirement."""
    return 1.0 + 2 * agent_inter_ms / 1000.0 + 2.0


def _describe(describe, value):
    """describe(value), or repr(value) when describe itself fails: a
    rendering bug must not hide what was observed."""
    try:
        return describe(value)
    except Exception as e:  # noqa: BLE001 - reported with the value
        return f"{value!r} (describe raised {type(e).__name__}: {e})"


def agent_checks_bound_s(checks=1, agent_inter_ms=AGENT_INTER_MS):
    """Liveness bound for HAProxy to make `checks` more agent checks: one
    every agent-inter, each taking up to `timeout check`, plus 5 s margin
    for shared, noisy machines."""
    return checks * (agent_inter_ms / 1000.0 + CHECK_TIMEOUT_S) + 5.0


def wait_until(fn, timeout_s, what, ok=None, describe=repr):
    """Polls fn() every 50 ms until ok(value) (bool(value) when ok is None).

    Returns the accepted value. On timeout raises TestFailure naming `what`
    and the last observed value (rendered by describe) or the last exception
    fn raised: a refused connection while a daemon starts is "not yet", not
    an error. TestFailure and Skip raised by fn or ok propagate at once.

    ok() should treat a part not there yet (a missing or null field) as
    false; if it raises instead, that observation is "not yet" too, and the
    exception is kept: the timeout names it, so a predicate bug still
    shows."""
    timeout_s *= _time_scale()
    start = time.monotonic()
    deadline = start + timeout_s
    last = "<nothing observed>"
    slip = None         # the last exception ok() raised, with its value
    while True:
        try:
            value = fn()
        except (TestFailure, Skip):
            raise
        except Exception as e:  # noqa: BLE001 - reported as the observation
            last = f"{type(e).__name__}: {e}"
        else:
            try:
                accepted = ok(value) if ok is not None else value
            except (TestFailure, Skip):
                raise
            except Exception as e:  # noqa: BLE001 - a predicate bug, kept
                accepted = False
                slip = (f"ok() raised {type(e).__name__}: {e} on "
                        f"{_describe(describe, value)}")
                last = slip
            else:
                if accepted:
                    return value
                last = _describe(describe, value)
        if time.monotonic() >= deadline:
            also = f"\n  and earlier {slip}" if slip is not None and slip != last else ""
            raise TestFailure(
                f"timed out after {timeout_s:.1f} s waiting for {what}\n"
                f"  last observed: {last}{also}")
        time.sleep(POLL_S)


def hold_for(fn, seconds, what, ok=None, describe=repr, until=None,
             until_what="the events the hold must outlast", until_timeout_s=10.0):
    """Asserts that ok(fn()) (bool(fn()) when ok is None) stays true for
    `seconds`, polling every 50 ms, and then for as long as `until()` is
    false (bounded by until_timeout_s, a liveness bound): use `until` to
    make sure the events the hold is about (e.g. agent checks) did happen.

    Exceptions from fn are failures here: a hold is about what was seen.
    So is an exception from ok (it should treat a missing or null field as
    false): the failure names it. Returns the number of observations."""
    start = time.monotonic()
    end = start + seconds
    until_deadline = None
    count = 0
    while True:
        value = fn()
        count += 1
        try:
            held = ok(value) if ok is not None else value
            why = ""
        except (TestFailure, Skip):
            raise
        except Exception as e:  # noqa: BLE001 - a predicate bug, reported
            held = False
            why = f"\n  ok() raised {type(e).__name__}: {e}"
        if not held:
            raise TestFailure(
                f"{what}: stopped holding after {time.monotonic() - start:.2f} s "
                f"(required {seconds:.2f} s)\n  observed: {_describe(describe, value)}"
                f"{why}")
        now = time.monotonic()
        if now >= end:
            if until is None or until():
                return count
            if until_deadline is None:
                until_deadline = now + until_timeout_s * _time_scale()
            elif now >= until_deadline:
                raise TestFailure(
                    f"{what}: held for {now - start:.2f} s, but {until_what} "
                    f"did not happen within {until_timeout_s} s more")
        time.sleep(POLL_S)


def hold_until(fn, deadline, what, ok=None, describe=repr):
    """Asserts that ok(fn()) (bool(fn()) when ok is None) holds for every
    observation that ended by `deadline` (a time.monotonic() value): a
    window that follows from a configured one and from when the test acted
    (e.g. "not down within down_after of the failure"), not from when this
    process got round to watching. An observation that ended after the
    deadline says nothing about the window and ends the hold.

    Exceptions from fn are failures, as in hold_for. Returns the number of
    observations within the window (0 when it was over before the first
    one ended: the caller decides whether that is a failure)."""
    count = 0
    while True:
        value = fn()
        if time.monotonic() > deadline:
            return count
        count += 1
        try:
            held = ok(value) if ok is not None else value
            why = ""
        except (TestFailure, Skip):
            raise
        except Exception as e:  # noqa: BLE001 - a predicate bug, reported
            held = False
            why = f"\n  ok() raised {type(e).__name__}: {e}"
        if not held:
            raise TestFailure(
                f"{what}: stopped holding {deadline - time.monotonic():.2f} s before "
                f"the end of its window\n  observed: {_describe(describe, value)}{why}")
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))


def expect(cond, message):
    """Fails with message unless cond."""
    if not cond:
        raise TestFailure(message)


def expect_equal(seen, expected, what):
    if seen != expected:
        raise TestFailure(f"{what}\n  expected: {expected!r}\n  seen:     {seen!r}")


# ------------------------------------------------------------ environment

class _Env:
    """Per-process test context: temp dir, ports, sources, started objects."""

    def __init__(self):
        self.name = os.path.splitext(os.path.basename(sys.argv[0] or "test"))[0]
        self.dir = tempfile.mkdtemp(prefix=f"lbagent-{self.name}-")
        self._ports = set()
        # Seeded apart: runs side by side pick apart.
        self._rng = random.Random(os.getpid() ^ time.monotonic_ns())
        self._next_source = 2
        self._sources = set()
        self._names = {}
        self._used = set()
        self._objects = []      # started things, stopped in reverse order
        self._cleaned = False
        atexit.register(self.cleanup)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def unique_name(self, base):
        """base the first time, then base.2, base.3...: never a name given
        before, whatever the base (lbagent-n1's second would otherwise be
        lbagent-n12, the first of lbagent-n12)."""
        n = self._names.get(base, 0)
        while True:
            n += 1
            name = base if n == 1 else f"{base}.{n}"
            if name not in self._used:
                break
        self._names[base] = n
        self._used.add(name)
        return name

    def free_port(self):
        """A TCP port free on 127.0.0.1 now, never handed out twice here,
        and outside the kernel's ephemeral range: a port bind(0) gives is
        one the next outgoing connection (a probe's, a peer's, HAProxy's
        check) may take as its own before the process it was meant for
        binds it, and that process then fails with EADDRINUSE."""
        lo, hi = _ephemeral_range()
        spans = [(a, b) for a, b in ((10000, lo - 1), (hi + 1, 65535)) if b - a >= 1000]
        if not spans:
            raise RuntimeError(f"no port range outside the ephemeral {lo}-{hi} "
                               f"(net.ipv4.ip_local_port_range)")
        for _ in range(1000):
            a, b = self._rng.choice(spans)
            port = self._rng.randint(a, b)
            if port in self._ports or not _bindable(port):
                continue
            self._ports.add(port)
            return port
        raise RuntimeError("could not find a free loopback port")

    def source(self, addr=None):
        """A loopback source address for a load balancer: addr when given,
        else the next one not used yet here (127.0.0.2, .3, ...)."""
        if addr is None:
            while f"127.0.0.{self._next_source}" in self._sources:
                self._next_source += 1
            addr = f"127.0.0.{self._next_source}"
        self._sources.add(addr)
        return addr

    def register(self, obj):
        self._objects.append(obj)

    def forget(self, obj):
        """Drops an object the scenario has stopped itself: no diagnostics
        from it on a later failure, nothing more to stop at exit."""
        self._objects = [o for o in self._objects if o is not obj]

    def diagnostics(self):
        parts = []
        for obj in self._objects:
            try:
                parts.append(obj.diagnostics())
            except Exception as e:  # noqa: BLE001 - diagnostics must not mask
                parts.append(f"== {obj!r}: diagnostics failed: {e}")
        return "\n".join(p for p in parts if p)

    def cleanup(self):
        if self._cleaned:
            return
        self._cleaned = True
        for obj in reversed(self._objects):
            try:
                obj.close()
            except Exception as e:  # noqa: BLE001 - keep stopping the rest
                print(f"harness: stopping {obj!r} failed: {e}", file=sys.stderr)
        if os.environ.get("LBAGENT_TEST_KEEP") == "1":
            print(f"harness: kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


_env = None


def env():
    global _env
    if _env is None:
        _env = _Env()
    return _env


def tmpdir():
    return env().dir


def _ephemeral_range():
    """net.ipv4.ip_local_port_range: where outgoing connections' ports are."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port):
    """Nothing bound to port on any IPv4 address (no SO_REUSEADDR: a
    socket in TIME_WAIT there counts as taken too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def free_port():
    return env().free_port()


def lbagent_exe():
    exe = os.environ.get("LBAGENT")
    if not exe:
        raise TestFailure("LBAGENT is not set: run through `meson test` or set "
                          "LBAGENT=/absolute/path/to/lbagent")
    if not os.path.isabs(exe) or not os.access(exe, os.X_OK):
        raise TestFailure(f"LBAGENT={exe!r} is not an absolute path to an executable")
    return exe


def lbagentctl_exe():
    exe = os.environ.get("LBAGENTCTL")
    if not exe or not os.access(exe, os.X_OK):
        raise TestFailure(f"LBAGENTCTL={exe!r} is not an executable: run through "
                          f"`meson test`")
    return exe


def lbagentctl(*args, launcher=(), timeout_s=60):
    """Runs lbagentctl with args (after launcher, e.g. setpriv's argv);
    returns (exit status, stdout, stderr)."""
    argv = list(launcher) + [lbagentctl_exe()] + list(args)
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise TestFailure(f"`{' '.join(argv)}` did not finish within {timeout_s} s") from None
    return (r.returncode, r.stdout.decode(errors="replace"),
            r.stderr.decode(errors="replace"))


def require_haproxy():
    if shutil.which("haproxy") is None:
        raise Skip("haproxy is not installed (apt-get install haproxy)")


def require_source(addr):
    """Skips when this host cannot use addr as a local source address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((addr, 0))
        except OSError as e:
            raise Skip(f"cannot bind to loopback source {addr}: {e}") from None


def raise_nofile(needed):
    """Raises this process's RLIMIT_NOFILE to at least `needed`."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= needed:
        return
    want = needed if hard == resource.RLIM_INFINITY else max(needed, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, want))
    except (ValueError, OSError) as e:
        raise Skip(f"cannot raise RLIMIT_NOFILE to {needed} "
                   f"(soft {soft}, hard {hard}): {e}") from None


def asan_enabled(exe=None):
    """True when the daemon is built with AddressSanitizer: meson passes its
    b_sanitize option through LBAGENT_SANITIZE; failing that, the binary
    names the ASan runtime."""
    if "address" in os.environ.get("LBAGENT_SANITIZE", ""):
        return True
    try:
        with open(exe or lbagent_exe(), "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def _preexec_argv():
    """Ties a child to the test: it gets SIGKILL if the test process dies,
    even by SIGKILL (meson's timeout), so nothing is left running."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


def _tail(path, lines=LOG_TAIL_LINES):
    try:
        with open(path, "r", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    rows = text.splitlines()
    cut = rows[-lines:]
    head = f"... ({len(rows) - len(cut)} earlier lines)\n" if len(rows) > len(cut) else ""
    return head + "\n".join(cut)


class _Process:
    """A child process with its output in a file and a guaranteed end."""

    def __init__(self, argv, log_path, env_vars=None, pass_fds=()):
        self.argv = argv
        self.log_path = log_path
        self._env_vars = env_vars
        self._pass_fds = tuple(pass_fds)
        self.proc = None

    def start(self, banner):
        with open(self.log_path, "a") as f:
            f.write(f"=== harness {time.strftime('%H:%M:%S')}: {banner}: "
                    f"{' '.join(self.argv)}\n")
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                _preexec_argv() + self.argv, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, env=self._env_vars,
                pass_fds=self._pass_fds)
        finally:
            log.close()

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig, timeout_s=KILL_GRACE_S):
        """Sends sig and waits for the exit; returns (returncode, timed_out).
        A process that outlives the timeout is killed."""
        if self.proc is None:
            return None, False
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
            except ProcessLookupError:
                pass
        try:
            return self.proc.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(), True

    def close(self):
        if self.alive():
            self.signal(signal.SIGTERM, timeout_s=3.0)


# ---------------------------------------------------------------- lbagent

def _ini_value(v):
    if v is True:
        return "yes"
    if v is False:
        return "no"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    return str(v)


def ini_text(sections):
    """{section: {key: value}} as INI text (True -> yes, lists joined by ', ').
    A value of None drops the key."""
    out = []
    for section, keys in sections.items():
        out.append(f"[{section}]")
        for k, v in keys.items():
            if v is not None:
                out.append(f"{k} = {_ini_value(v)}")
        out.append("")
    return "\n".join(out)


def check_config(text, name="checkconf"):
    """Runs `$LBAGENT -c -f FILE` on text; returns (returncode, output, path)
    with stdout and stderr together."""
    path = env().path(env().unique_name(name) + ".conf")
    with open(path, "w") as f:
        f.write(text)
    try:
        r = subprocess.run([lbagent_exe(), "-c", "-f", path], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=30 * _time_scale())
    except subprocess.TimeoutExpired:
        raise TestFailure(f"`lbagent -c -f {path}` did not finish within 30 s") from None
    return r.returncode, r.stdout.decode(errors="replace"), path


def ask(port, send=b"", source="127.0.0.1", host="127.0.0.1", timeout_s=5.0):
    """One raw agent check, as HAProxy does it: connect (from `source`),
    send `send` (HAProxy's agent-send; may be empty), read until EOF.
    Returns the bytes read. Connection errors propagate as OSError."""
    if isinstance(send, str):
        send = send.encode()
    deadline = time.monotonic() + timeout_s
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeout_s)
        if source:
            s.bind((source, 0))
        s.connect((host, port))
        if send:
            s.sendall(send)
        chunks, total = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no EOF within {timeout_s} s; read so far "
                                   f"{b''.join(chunks)!r}")
            s.settimeout(left)
            data = s.recv(4096)
            if not data:
                return b"".join(chunks)
            chunks.append(data)
            total += len(data)
            if total > 65536:
                raise TestFailure(f"agent reply longer than 64 KiB: {b''.join(chunks)[:200]!r}...")


def read_to_eof(s):
    """What socket s receives until the peer closes it; an error ends it as
    b"<ErrorName> after <what came before>" (a reset, a timeout)."""
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data
            data += chunk
    except OSError as e:
        return f"{type(e).__name__} after {data!r}".encode()


def cpu_seconds(pid):
    """User and system CPU time pid has used, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# For scenarios about what probes and rules decide: the transition engine's
# windows at zero, so each verdict reaches the reply at once. The windows
# themselves have their own scenario (test_28_transitions).
IMMEDIATE = {"down_after": "0", "degrade_after": "0", "up_after": "0",
             "restore_after": "0", "ramp": "0"}


class Lbagent:
    """The daemon under test, run in the foreground as `$LBAGENT -f CONFIG`.

    config: None (defaults), a dict of [agent] keys merged over the
    defaults (listen on a free loopback port, state_dir in the temp dir; a
    value of None drops a default), a dict of {section: {key: value}}, or
    INI text in which {port}, {state_dir} and {dir} are replaced.

    launcher: argv run in front of the daemon's (it must exec it, so that
    the daemon keeps its pid); pass_fds: descriptors the daemon inherits;
    args: more options for the daemon (e.g. ["-d"])."""

    def __init__(self, config=None, *, name="lbagent", port=None, start=True,
                 asan_quarantine_mb=None, extra_env=None, ready_timeout_s=None,
                 launcher=None, pass_fds=(), args=()):
        e = env()
        self.name = e.unique_name(name)
        self.dir = e.path(self.name)
        os.makedirs(self.dir)
        self.state_dir = os.path.join(self.dir, "state")
        os.makedirs(self.state_dir)
        self.config_path = os.path.join(self.dir, "lbagent.conf")
        self.log_path = os.path.join(self.dir, "lbagent.log")
        self.port = port or e.free_port()
        self.config_text = self._render(config)
        with open(self.config_path, "w") as f:
            f.write(self.config_text)
        self.exe = lbagent_exe()
        self.asan = asan_enabled(self.exe)
        self.ready_timeout_s = ready_timeout_s or startup_bound_s()
        self._starts = 0
        vars_ = dict(os.environ)
        if self.asan and asan_quarantine_mb is not None:
            # A small quarantine lets freed memory be reused, so RSS reflects
            # leaks rather than ASan's delayed reuse; kept non-zero so
            # use-after-free is still caught.
            opts = vars_.get("ASAN_OPTIONS", "")
            opts = ":".join(o for o in opts.split(":") if o and
                            not o.startswith("quarantine_size_mb="))
            vars_["ASAN_OPTIONS"] = (opts + ":" if opts else "") + \
                f"quarantine_size_mb={asan_quarantine_mb}"
        vars_.update(extra_env or {})
        self._proc = _Process(list(launcher or []) + [self.exe, "-f", self.config_path] + list(args),
                              self.log_path, vars_, pass_fds)
        e.register(self)
        if start:
            self.start()

    def _render(self, config):
        # No HTTP API unless a scenario asks for one: its default port is
        # fixed, and scenarios run several daemons at once.
        if isinstance(config, str):
            text = (config.replace("{port}", str(self.port))
                    .replace("{state_dir}", self.state_dir)
                    .replace("{dir}", self.dir))
            if not re.search(r"^\[http\]", text, re.M):
                text += "\n[http]\nlisten = none\n"
            return text
        sections = {"agent": {"listen": f"127.0.0.1:{self.port}",
                              "state_dir": self.state_dir},
                    "http": {"listen": "none"}}
        config = config or {}
        if any(isinstance(v, dict) for v in config.values()):
            for section, keys in config.items():
                sections.setdefault(section, {}).update(keys)
        else:
            sections["agent"].update(config)
        return ini_text(sections)

    def __repr__(self):
        return f"<Lbagent {self.name} port {self.port} pid {self.pid}>"

    # -- life cycle
    @property
    def pid(self):
        return self._proc.pid

    def alive(self):
        return self._proc.alive()

    def start(self):
        """Starts the daemon and waits (bounded) until it answers a check."""
        if self.alive():
            raise RuntimeError(f"{self.name} is already running")
        self._starts += 1
        self._proc.start(f"start #{self._starts}")

        def answered():
            if not self.alive():
                raise TestFailure(
                    f"{self.name} exited with status {self._proc.proc.returncode} "
                    f"during start-up")
            return self.ask()

        wait_until(answered, self.ready_timeout_s,
                   f"{self.name} to answer an agent check on port {self.port}",
                   ok=lambda r: r.endswith(b"\n"))

    def stop(self, expect_rc=0, timeout_s=KILL_GRACE_S):
        """SIGTERM, wait for the exit; fails unless it exits with expect_rc
        (None: any) within timeout_s. Returns the exit status."""
        if not self.alive():
            raise TestFailure(f"{self.name} was not running when it was to be stopped "
                              f"(exit status {self._proc.proc and self._proc.proc.returncode})")
        rc, timed_out = self._proc.signal(signal.SIGTERM, timeout_s)
        if timed_out:
            raise TestFailure(f"{self.name} did not exit within {timeout_s} s of "
                              f"SIGTERM (killed; status {rc})")
        if expect_rc is not None and rc != expect_rc:
            raise TestFailure(f"{self.name} exited with status {rc} after SIGTERM, "
                              f"expected {expect_rc}")
        return rc

    def set_env(self, name, value):
        """Sets (value None: removes) an environment variable for the next
        start."""
        if value is None:
            self._proc._env_vars.pop(name, None)
        else:
            self._proc._env_vars[name] = value

    def kill(self):
        """SIGKILL: no chance to save anything."""
        rc, _ = self._proc.signal(signal.SIGKILL)
        return rc

    def restart(self):
        self.stop()
        self.start()

    def close(self):
        self._proc.close()

    # -- talking to it
    def ask(self, send=b"", source="127.0.0.1", timeout_s=5.0, port=None):
        return ask(port or self.port, send=send, source=source, timeout_s=timeout_s)

    def check_config(self):
        """`-c` on this instance's own configuration: (returncode, output)."""
        rc, out, _ = check_config(self.config_text, name=self.name + "-check")
        return rc, out

    # -- observing it
    def log(self):
        with open(self.log_path, "r", errors="replace") as f:
            return f.read()

    def log_mark(self):
        """A position in the log; see log_since()."""
        return os.path.getsize(self.log_path)

    def log_since(self, mark):
        with open(self.log_path, "rb") as f:
            f.seek(mark)
            return f.read().decode(errors="replace")

    def log_tail(self, lines=LOG_TAIL_LINES):
        return _tail(self.log_path, lines)

    def _proc_status(self, field):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise RuntimeError(f"no {field} in /proc/{self.pid}/status")

    def rss_kb(self):
        """Resident set size in KiB, from /proc/PID/status."""
        return self._proc_status("VmRSS")

    def fd_count(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    # -- markers
    def marker_path(self, name):
        return os.path.join(self.state_dir, name)

    def set_marker(self, name, text=""):
        """Creates (or replaces) a marker atomically: the daemon never sees a
        half-written reason."""
        tmp = os.path.join(self.dir, f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.marker_path(name))

    def clear_marker(self, name):
        os.unlink(self.marker_path(name))

    def diagnostics(self):
        state = "running" if self.alive() else (
            f"exited with {self._proc.proc.returncode}" if self._proc.proc else "never started")
        out = [f"== {self.name} ({state}, port {self.port}, pid {self.pid}) "
               f"log {self.log_path}, last {LOG_TAIL_LINES} lines:",
               self.log_tail()]
        sj = os.path.join(self.state_dir, "state.json")
        if os.path.exists(sj):
            out.append(f"== {self.name} state.json:\n{_tail(sj, 40)}")
        return "\n".join(out)


# ---------------------------------------------------------------- stand-ins

class _Thread:
    """A daemon thread with a stop flag, for small loopback servers."""

    def _spawn(self, target):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def close(self):
        self._stop.set()
        try:
            self.sock.close()
        except OSError:
            pass
        self._thread.join(timeout=2)

    def diagnostics(self):
        return ""


class BackendStub(_Thread):
    """Where HAProxy's regular `check` connects: accepts and closes."""

    def __init__(self, host="127.0.0.1"):
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._spawn(self._loop)
        env().register(self)

    def _loop(self):
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            c.close()

    def __repr__(self):
        return f"<BackendStub {self.host}:{self.port}>"


_backend = None


def backend_stub():
    """The test's shared backend stand-in (started on first use)."""
    global _backend
    if _backend is None:
        _backend = BackendStub()
    return _backend


class Exchange:
    """One agent check seen by an AgentTap."""

    def __init__(self, source):
        self.t = time.monotonic()
        self.source = source
        self.request = b""
        self.reply = b""
        self.error = None

    def words(self):
        """The reply's words before any '#' (HAProxy's separators)."""
        line = self.reply.split(b"\n", 1)[0].split(b"#", 1)[0]
        return [w for w in re.split(rb"[ \t,\r]+", line) if w]

    def __repr__(self):
        return (f"<{self.source} sent {self.request!r} got {self.reply!r}"
                + (f" error {self.error}" if self.error else "") + ">")


class AgentTap(_Thread):
    """A recording relay between HAProxy and lbagent.

    Point a server's agent-port at tap.port: each check is relayed to the
    daemon from the same source address HAProxy used (so lbagent's keys are
    unchanged) and recorded as an Exchange. Half-closes are passed on. Only
    valid while the daemon runs: with the daemon down HAProxy would see an
    accepted-then-reset connection rather than a refused one."""

    def __init__(self, upstream_port, upstream_host="127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._exchanges = []
        self._started = 0
        self._in_flight = set()     # numbers of the relays not yet recorded
        self._spawn(self._loop)
        env().register(self)

    def __repr__(self):
        return f"<AgentTap :{self.port} -> {self.upstream[1]}>"

    def _loop(self):
        while not self._stop.is_set():
            try:
                c, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                n = self._started
                self._started += 1
                self._in_flight.add(n)
            threading.Thread(target=self._relay, args=(c, peer[0], n), daemon=True).start()

    def _relay(self, client, source, n):
        import selectors
        ex = Exchange(source)
        up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            up.bind((source, 0))
            up.settimeout(2)
            up.connect(self.upstream)
            sel = selectors.DefaultSelector()
            sel.register(client, selectors.EVENT_READ, "client")
            sel.register(up, selectors.EVENT_READ, "up")
            open_ = {"client", "up"}
            deadline = time.monotonic() + 10
            while open_ and time.monotonic() < deadline and not self._stop.is_set():
                for key, _ in sel.select(timeout=0.2):
                    src, dst = (client, up) if key.data == "client" else (up, client)
                    try:
                        data = src.recv(65536)
                    except OSError as e:
                        ex.error = f"{key.data}: {e}"
                        open_.clear()
                        break
                    if data:
                        if key.data == "client":
                            ex.request += data
                        else:
                            ex.reply += data
                        try:
                            dst.sendall(data)
                        except OSError as e:
                            ex.error = f"forwarding from {key.data}: {e}"
                    else:
                        sel.unregister(src)
                        open_.discard(key.data)
                        try:
                            dst.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
            sel.close()
        except OSError as e:
            ex.error = f"upstream: {e}"
        finally:
            up.close()
            client.close()
            with self._lock:
                self._exchanges.append(ex)
                self._in_flight.discard(n)
                self._done.notify_all()

    def _settle(self):
        """Waits (the lock held) until every relay accepted before now is
        recorded. A reply reaches HAProxy before its relay ends, so without
        this a state HAProxy shows could be missing from the record."""
        started = self._started
        self._done.wait_for(lambda: not any(n < started for n in self._in_flight),
                            timeout=15)

    def mark(self):
        with self._lock:
            self._settle()
            return len(self._exchanges)

    def exchanges(self, since=0, source=None):
        with self._lock:
            self._settle()
            return [x for x in self._exchanges[since:]
                    if source is None or x.source == source]

    def diagnostics(self):
        last = self.exchanges()[-10:]
        return f"== {self!r}, last {len(last)} exchanges:\n" + \
            "\n".join(f"  {x!r}" for x in last)


# ---------------------------------------------------------------- HAProxy

class Server:
    """One `server` line. agent: an Lbagent, an AgentTap (anything with
    .port) or a port number. agent_send: None inherits the Haproxy's."""

    _INHERIT = object()

    def __init__(self, name, agent, *, agent_addr="127.0.0.1", weight=100,
                 agent_send=_INHERIT, addr=None, extra=""):
        self.name = name
        self.agent_port = agent if isinstance(agent, int) else agent.port
        self.agent_addr = agent_addr
        self.weight = weight
        self.agent_send = agent_send
        self.addr = addr
        self.extra = extra


def _quote(text):
    """A double-quoted HAProxy config argument holding text verbatim."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


def agent_result(stat):
    """agent_status without the "* " HAProxy puts in front while a check is
    in progress (e.g. "* L7OK" -> "L7OK")."""
    s = stat.get("agent_status") or ""
    return s[2:] if s.startswith("* ") else s


def describe_stat(st):
    """The show-stat fields that matter here, compactly."""
    if not isinstance(st, dict):
        return repr(st)
    keys = ("status", "weight", "check_status", "agent_status", "agent_desc", "last_agt")
    return "{" + ", ".join(f"{k}={st.get(k, '')!r}" for k in keys) + "}"


class Haproxy:
    """One HAProxy instance (`haproxy -db -f cfg`) checking lbagent(s).

    servers: a list for one backend named "be" (items: Server, or an
    Lbagent/AgentTap/port, named s1, s2, ...); backends: {name: list} for
    several. Every server line has a TCP `check` against a shared backend
    stand-in and an `agent-check` from this instance's own loopback
    `source` address (127.0.0.2, .3, ... unless given). agent_send is text
    (a newline is added unless present); None sends nothing.

    stats_http: also serve the stats page on 127.0.0.1 (a free port), so
    that `stats_csv_url()` gives its CSV; stats_tcp: also a Runtime API
    socket on 127.0.0.1 (a free port, level admin), `stats_tcp_address()`.

    global_lines, defaults_lines: more lines for those sections;
    backend_lines: {backend: [lines]} before its server lines (e.g.
    "balance static-rr"). config_text: a complete configuration of the
    scenario's own instead (give backends={} or the servers it has, for
    the diagnostics); it must have `stats socket {socket}` (replaced by
    this instance's socket path) for the Runtime API. master_worker: run
    `haproxy -W` so that reload() can reload it as systemd does."""

    def __init__(self, servers=None, *, backends=None, agent_inter_ms=AGENT_INTER_MS,
                 inter_ms=CHECK_INTER_MS, source=None, agent_send=None, name="haproxy",
                 start=True, stats_http=False, stats_tcp=False, global_lines=(),
                 defaults_lines=(), backend_lines=None, config_text=None,
                 master_worker=False):
        require_haproxy()
        if (servers is None) == (backends is None):
            raise ValueError("give either servers or backends")
        self.global_lines = list(global_lines)
        self.defaults_lines = list(defaults_lines)
        self.backend_lines = dict(backend_lines or {})
        self.master_worker = master_worker
        e = env()
        self.name = e.unique_name(name)
        self.dir = e.path(self.name)
        os.makedirs(self.dir)
        self.source = e.source(source)
        require_source(self.source)
        self.agent_inter_ms = agent_inter_ms
        self.inter_ms = inter_ms
        self.agent_send = agent_send
        self.socket_path = os.path.join(self.dir, "admin.sock")
        self.stats_http_port = e.free_port() if stats_http else None
        self.stats_tcp_port = e.free_port() if stats_tcp else None
        self.config_path = os.path.join(self.dir, "haproxy.cfg")
        self.log_path = os.path.join(self.dir, "haproxy.log")
        self.backends = {}
        for be, items in (backends or {"be": servers}).items():
            self.backends[be] = [it if isinstance(it, Server) else Server(f"s{i}", it)
                                 for i, it in enumerate(items, 1)]
        if config_text is not None:
            self.config_text = config_text.replace("{socket}", self.socket_path)
        else:
            self.config_text = self._render()
        with open(self.config_path, "w") as f:
            f.write(self.config_text)
        self._proc = _Process(["haproxy"] + (["-W"] if master_worker else []) +
                              ["-db", "-f", self.config_path], self.log_path)
        e.register(self)
        if start:
            self.start()

    def __repr__(self):
        return f"<Haproxy {self.name} source {self.source} pid {self.pid}>"

    def _render(self):
        stub = backend_stub()
        out = ["global",
               f"    stats socket {self.socket_path} level admin"]
        if self.stats_tcp_port:
            out.append(f"    stats socket ipv4@127.0.0.1:{self.stats_tcp_port} level admin")
        out += [f"    {line}" for line in self.global_lines]
        out += ["",
                "defaults",
                "    mode tcp",
                "    timeout connect 1s",
                "    timeout client 5s",
                "    timeout server 5s",
                f"    timeout check {CHECK_TIMEOUT_S:g}s"]
        out += [f"    {line}" for line in self.defaults_lines]
        out += [""]
        if self.stats_http_port:
            out += ["listen stats",
                    "    mode http",
                    f"    bind 127.0.0.1:{self.stats_http_port}",
                    "    stats enable",
                    "    stats uri /stats",
                    ""]
        for be, servers in self.backends.items():
            out.append(f"backend {be}")
            out += [f"    {line}" for line in self.backend_lines.get(be, ())]
            for s in servers:
                send = self.agent_send if s.agent_send is Server._INHERIT else s.agent_send
                line = (f"    server {s.name} {s.addr or f'127.0.0.1:{stub.port}'} "
                        f"weight {s.weight} check inter {self.inter_ms} agent-check "
                        f"agent-addr {s.agent_addr} agent-port {s.agent_port} "
                        f"agent-inter {self.agent_inter_ms} source {self.source}")
                if send is not None:
                    line += " agent-send " + _quote(send if send.endswith("\n") else send + "\n")
                if s.extra:
                    line += " " + s.extra
                out.append(line)
            out.append("")
        return "\n".join(out)

    def stats_csv_url(self):
        """The stats page's CSV (needs stats_http=True)."""
        if not self.stats_http_port:
            raise ValueError(f"{self.name} has no HTTP stats page (stats_http=True)")
        return f"http://127.0.0.1:{self.stats_http_port}/stats;csv"

    def stats_tcp_address(self):
        """"127.0.0.1:PORT" of the TCP Runtime API socket (needs stats_tcp=True)."""
        if not self.stats_tcp_port:
            raise ValueError(f"{self.name} has no TCP Runtime API socket (stats_tcp=True)")
        return f"127.0.0.1:{self.stats_tcp_port}"

    # -- life cycle
    @property
    def pid(self):
        return self._proc.pid

    def alive(self):
        return self._proc.alive()

    def start(self):
        r = subprocess.run(["haproxy", "-c", "-f", self.config_path],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        if r.returncode != 0:
            raise TestFailure(f"haproxy -c rejected {self.config_path}:\n"
                              f"{r.stdout.decode(errors='replace')}\n"
                              f"--- config ---\n{self.config_text}")
        self._proc.start("start")

        def answered():
            if not self.alive():
                raise TestFailure(f"{self.name} exited with status "
                                  f"{self._proc.proc.returncode} during start-up")
            return self.cmd("show info")

        wait_until(answered, startup_bound_s(), f"{self.name}'s Runtime API socket",
                   ok=lambda out: "Pid:" in out, describe=lambda out: out[:200])

    def stop(self):
        rc, _ = self._proc.signal(signal.SIGTERM)
        return rc

    def close(self):
        self._proc.close()

    def worker_pid(self):
        """The pid that answers the Runtime API (the worker's under -W)."""
        m = re.search(r"^Pid: (\d+)", self.cmd("show info"), re.M)
        if not m:
            raise TestFailure(f"{self.name}: no Pid in show info")
        return int(m.group(1))

    def reload(self, before=None):
        """Reloads a master_worker instance as `systemctl reload` does: the
        master (SIGUSR2) rereads the configuration and starts a new worker,
        which takes over the listeners and the Runtime API socket. before()
        runs just before the signal (e.g. to save the servers' state).
        Waits (bounded) until the new worker answers; returns its pid."""
        if not self.master_worker:
            raise ValueError(f"{self.name} is not master_worker: it cannot reload")
        r = subprocess.run(["haproxy", "-c", "-f", self.config_path],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        if r.returncode != 0:
            raise TestFailure(f"haproxy -c rejected {self.config_path} for the reload:\n"
                              f"{r.stdout.decode(errors='replace')}")
        old = self.worker_pid()
        if before is not None:
            before()
        self._proc.proc.send_signal(signal.SIGUSR2)
        return wait_until(self.worker_pid, startup_bound_s(),
                          f"{self.name}'s new worker after the reload (old {old})",
                          ok=lambda pid: pid != old)

    def save_servers_state(self, path):
        """`show servers state` into path, as a reload that keeps the
        servers' state does before it signals HAProxy."""
        text = self.cmd("show servers state")
        if not text.startswith("1\n"):
            raise TestFailure(f"{self.name}: unexpected `show servers state`: {text[:200]!r}")
        write_atomic(path, text)

    # -- Runtime API
    def cmd(self, text, timeout_s=5.0):
        """One Runtime API command; returns its output."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(self.socket_path)
            s.sendall(text.encode() + b"\n")
            chunks = []
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
        return b"".join(chunks).decode(errors="replace")

    def set_server_state(self, backend, server, state):
        """`set server BE/SRV state ready|drain|maint`, as an operator does."""
        out = self.cmd(f"set server {backend}/{server} state {state}")
        if out.strip():
            raise TestFailure(f"`set server {backend}/{server} state {state}` "
                              f"answered {out.strip()!r}")

    def servers_state(self, backend):
        """`show servers state BACKEND` as a list of dicts (numbers as int)."""
        out = self.cmd(f"show servers state {backend}")
        header, rows = None, []
        for line in out.splitlines():
            if line.startswith("# "):
                header = line[2:].split()
            elif header and line.strip():
                fields = line.split()
                rows.append({k: int(v) if v.lstrip("-").isdigit() else v
                             for k, v in zip(header, fields)})
        if header is None:
            raise TestFailure(f"unexpected `show servers state {backend}` output: {out!r}")
        return rows

    def server_state(self, backend, server):
        """srv_op_state (2 running, 0 stopped), srv_admin_state (bit 1 forced
        MAINT, bit 8 forced DRAIN), srv_uweight, ... for one server."""
        for row in self.servers_state(backend):
            if row.get("srv_name") == server:
                return row
        raise TestFailure(f"{self.name}: no server {backend}/{server} in show servers state")

    @staticmethod
    def _stat_rows(out):
        lines = out.splitlines()
        if not lines or not lines[0].startswith("# "):
            raise TestFailure(f"unexpected `show stat` output: {out[:300]!r}")
        lines[0] = lines[0][2:]
        return list(csv.DictReader(io.StringIO("\n".join(l for l in lines if l.strip()))))

    def stats(self):
        """`show stat` as a list of dicts (CSV fields, strings)."""
        return self._stat_rows(self.cmd("show stat"))

    def stat_many_of(self, names):
        """(pid, uptime_s, {(backend, server): row}): `show info;show stat`
        in ONE connection, so the rows are known to come from the process
        with that pid, up that many seconds. Around a reload both workers
        can hold the Runtime API socket for a moment (the listeners are
        handed over, not bound anew): a verdict about the new worker takes
        only its own samples."""
        out = self.cmd("show info;show stat")
        head, sep, rest = out.partition("\n# ")
        pid = re.search(r"^Pid: (\d+)", head, re.M)
        up = re.search(r"^Uptime_sec: (\d+)", head, re.M)
        if not sep or not pid or not up:
            raise TestFailure(f"{self.name}: unexpected `show info;show stat`: {out[:300]!r}")
        rows = self._pick(self._stat_rows("# " + rest), names)
        return int(pid.group(1)), int(up.group(1)), rows

    def stat(self, backend, server):
        """One server's `show stat` row: status ("UP", "DRAIN (agent)",
        "MAINT"...), weight, agent_status, agent_desc, last_agt..."""
        return self.stat_many([(backend, server)])[(backend, server)]

    def stat_many(self, names=None):
        """{(backend, server): row} for each of names (default: every
        server of this instance), all from ONE `show stat`: a verdict on
        several servers, or on a server's status and its weight, judges
        one moment of HAProxy's, not several."""
        names = list(names if names is not None else self.server_names())
        return self._pick(self.stats(), names)

    def _pick(self, stats, names):
        """{(backend, server): row} of `show stat` rows, each of names there."""
        rows = {(r.get("pxname"), r.get("svname")): r for r in stats}
        missing = [f"{be}/{srv}" for be, srv in names if (be, srv) not in rows]
        if missing:
            raise TestFailure(f"{self.name}: no server {', '.join(missing)} in show stat")
        return {n: rows[n] for n in names}

    # -- waiting on it
    def wait_status(self, backend, server, status, timeout_s, what=None, ok=None):
        """Waits until the server's show-stat status is `status` (and ok(row)
        when given); returns the row."""
        what = what or f"{self.name} {backend}/{server} status {status!r}"
        return wait_until(lambda: self.stat(backend, server), timeout_s, what,
                          ok=lambda st: st["status"] == status and (ok is None or ok(st)),
                          describe=describe_stat)

    def hold_status(self, backend, server, status, seconds, what=None, **kw):
        what = what or f"{self.name} {backend}/{server} staying {status!r}"
        return hold_for(lambda: self.stat(backend, server), seconds, what,
                        ok=lambda st: st["status"] == status, describe=describe_stat, **kw)

    def output(self):
        with open(self.log_path, "r", errors="replace") as f:
            return f.read()

    def output_since(self, mark):
        with open(self.log_path, "rb") as f:
            f.seek(mark)
            return f.read().decode(errors="replace")

    def output_mark(self):
        return os.path.getsize(self.log_path)

    def diagnostics(self):
        out = [f"== {self.name} (source {self.source}, pid {self.pid}, "
               f"{'running' if self.alive() else 'not running'}) output {self.log_path}:",
               _tail(self.log_path)]
        if self.alive():
            for be, servers in self.backends.items():
                for s in servers:
                    try:
                        st = self.stat(be, s.name)
                        ss = self.server_state(be, s.name)
                        out.append(f"   {be}/{s.name}: {describe_stat(st)} "
                                   f"op_state={ss.get('srv_op_state')} "
                                   f"admin_state={ss.get('srv_admin_state')} "
                                   f"uweight={ss.get('srv_uweight')}")
                    except Exception as e:  # noqa: BLE001
                        out.append(f"   {be}/{s.name}: cannot read state: {e}")
        out.append(f"   config {self.config_path}:\n" + self.config_text)
        return "\n".join(out)

    def server_names(self):
        return [(be, s.name) for be, servers in self.backends.items() for s in servers]


def _all_stats(haproxies):
    """Every server of every instance: one `show stat` per instance."""
    return {f"{hp.name}:{be}/{srv}": row
            for hp in haproxies for (be, srv), row in hp.stat_many().items()}


def _describe_all(seen):
    return "; ".join(f"{k} {describe_stat(v)}" for k, v in seen.items())


def wait_all_status(haproxies, status, timeout_s, what):
    """Waits until every server of every instance shows `status`."""
    return wait_until(lambda: _all_stats(haproxies), timeout_s, what,
                      ok=lambda seen: all(st["status"] == status for st in seen.values()),
                      describe=_describe_all)


def hold_all_status(haproxies, status, seconds, what, **kw):
    """Asserts every server of every instance keeps showing `status`."""
    return hold_for(lambda: _all_stats(haproxies), seconds, what,
                    ok=lambda seen: all(st["status"] == status for st in seen.values()),
                    describe=_describe_all, **kw)


# ---------------------------------------------------------------- entry point

def _on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def _scenario_frames(tb):
    """Where in the scenario script a failure was raised."""
    script = os.path.abspath(sys.argv[0])
    frames = [f for f in traceback.extract_tb(tb) if os.path.abspath(f.filename) == script]
    return "\n".join(f"  at {os.path.basename(f.filename)}:{f.lineno} in {f.name}: {f.line}"
                     for f in frames)


def run(main):
    """Runs a scenario and exits: 0 pass, 1 failure, 77 skip. Every process
    the scenario started is stopped on the way out, whatever happened."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    rc = 1
    e = env()
    started = time.monotonic()
    failed = f"FAIL {e.name}: unexpected error"
    try:
        lbagent_exe()
        main()
        rc = 0
        print(f"PASS {e.name} ({time.monotonic() - started:.1f} s)")
    except Skip as s:
        rc = 77
        print(f"SKIP {e.name}: {s}")
    except TestFailure as f:
        failed = f"FAIL {e.name}: {f}"
        print(failed)
        print(_scenario_frames(f.__traceback__))
    except KeyboardInterrupt as k:
        failed = f"FAIL {e.name}: interrupted ({k})"
        print(failed)
        traceback.print_exc(file=sys.stdout)
    except Exception:  # noqa: BLE001 - a harness or scenario bug is a failure too
        print(failed)
        traceback.print_exc(file=sys.stdout)
    finally:
        if rc == 1:
            print("\n" + e.diagnostics())
            # Again last: meson keeps only a long log's last 100 lines.
            print(f"\n{failed.splitlines()[0][:400]}")
        sys.stdout.flush()
        e.cleanup()
    sys.exit(rc)


def section(title):
    """Prints a progress line: which step a failure happened in."""
    print(f"-- {time.strftime('%H:%M:%S')} {title}", flush=True)



# ================================================================ probes (issue 3)
#
# Stand-ins the probe scenarios (test_2N) share: a local HTTP server whose
# answers the test sets per path, a fake Docker Engine API on a unix socket,
# a recording TCP listener, a fixed /proc tree for [agent] proc_root, and
# small helpers to wait on replies and inspect processes.

import base64 as _base64
import http.server as _http_server
import json as _json
import socketserver as _socketserver

# A reply line as lbagent sends it: optional restore word, one state, an
# optional weight, an optional "#reason" of printable ASCII, one newline;
# or, with automation off, at most a marker's word or "ready" and a comment
# ending in "lbagent automation off"; or, in shadow mode, at most such a
# word and the comment "# lbagent shadow: would reply " and a line of the
# first form (SHADOW_RE: well_formed checks that line too).
REPLY_RE = re.compile(rb"^(?:(ready )?(up|down|(drain|maint) (up|down))"
                      rb"( (25[0-6]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])%)?"
                      rb"( maxconn:[1-9][0-9]*)?( #[\x20-\x7e]*)?"
                      rb"|((ready|drain|maint) )?#[\x20-\x7e]*lbagent automation off"
                      rb"|((ready|drain|maint) )?# lbagent shadow: would reply [\x20-\x7e]+)\n$")
SHADOW_RE = re.compile(rb"^(?:(?:ready|drain|maint) )?# lbagent shadow: would reply "
                       rb"([\x20-\x7e]+\n)$")
OFF_REPLY = b"# lbagent automation off\n"
REASON_MAX = 100


def probe_bound_s(interval_ms=500, timeout_ms=None, fall=1):
    """Liveness bound for a probe's change to show in the reply: `fall`
    runs (each up to interval + 10% jitter, plus its timeout) and one more
    run in flight, with a 5 s margin for shared, noisy machines."""
    timeout_ms = interval_ms if timeout_ms is None else timeout_ms
    return (fall + 1) * (interval_ms * 1.1 + timeout_ms) / 1000.0 + 5.0


def well_formed(reply):
    """True when reply is exactly one well-formed agent line whose reason
    fits the 100-byte limit."""
    if not isinstance(reply, bytes) or not REPLY_RE.match(reply):
        return False
    m = SHADOW_RE.match(reply)
    if m:
        would = m.group(1)
        return not SHADOW_RE.match(would) and well_formed(would)
    reason = reply_reason(reply)
    return reason is None or len(reason) <= REASON_MAX


def reply_reason(reply):
    """The text after ' #' (bytes, without the newline), or None."""
    line = reply.split(b"\n", 1)[0]
    i = line.find(b" #")
    return None if i < 0 else line[i + 2:]


def reply_words(reply):
    """The words before '#', as HAProxy splits them."""
    line = reply.split(b"\n", 1)[0].split(b"#", 1)[0]
    return [w for w in re.split(rb"[ \t,\r]+", line) if w]


def wait_reply(lb, ok, what, timeout_s=None, send=b"", port=None,
               source="127.0.0.1", seen=None):
    """Asks lb (raw checks) until the reply satisfies ok: bytes (equal), a
    callable, or a compiled bytes regex (match). Every reply on the way must
    be well-formed. Returns the accepted reply; `seen`, when a list, gets
    every reply."""
    if timeout_s is None:
        timeout_s = probe_bound_s()
    if isinstance(ok, bytes):
        want = ok
        accept = lambda r: r == want  # noqa: E731
    elif hasattr(ok, "match"):
        rx = ok
        accept = lambda r: rx.match(r) is not None  # noqa: E731
    else:
        accept = ok

    def one():
        r = lb.ask(send=send, source=source, port=port)
        if seen is not None:
            seen.append(r)
        if not well_formed(r):
            raise TestFailure(f"malformed reply while waiting for {what}: {r!r}")
        return r

    return wait_until(one, timeout_s, what, ok=accept)


def wait_healthy(lb, what, send=b"", port=None, source="127.0.0.1", timeout_s=None):
    """Waits for plain `up` (a restore window, `up 100%`, may come first)."""
    return wait_reply(lb, b"up\n", what, timeout_s=timeout_s, send=send, port=port,
                      source=source)


def starts(prefix):
    """An ok() for wait_reply: the reply starts with prefix (bytes)."""
    return lambda r: r.startswith(prefix)


def probe_kinds(exe=None):
    """The probe kinds `lbagent --keys` lists."""
    r = subprocess.run([exe or lbagent_exe(), "--keys"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    return set(re.findall(r"^\[probe NAME\] type = ([a-z]+)", r.stdout.decode(errors="replace"),
                          re.M))


def require_kinds(*kinds):
    """Fails (the daemon lacks a kind the scenario tests) with a clear message."""
    have = probe_kinds()
    missing = [k for k in kinds if k not in have]
    if missing:
        raise TestFailure(f"lbagent --keys lists no probe kind {', '.join(missing)} "
                          f"(it lists: {', '.join(sorted(have)) or 'none'})")


def write_atomic(path, data, mode=None):
    """Writes a file by rename, so a reader never sees half of it."""
    if isinstance(data, str):
        data = data.encode()
    d = os.path.dirname(path)
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp{threading.get_ident()}")
    with open(tmp, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def write_script(path, body, mode=0o755):
    """An executable /bin/sh script (body without the #! line)."""
    write_atomic(path, "#!/bin/sh\n" + body.lstrip("\n"), mode)
    return path


def pgrep_f(pattern):
    """PIDs (other than ours) whose command line contains pattern."""
    out = []
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
        except OSError:
            continue
        if pattern.encode() in cmd:
            out.append((int(d), cmd.decode(errors="replace").strip()))
    return out


def proc_children(pid):
    """[(pid, state letter, comm)] of pid's direct children."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(")")
        fields = s[r + 2:].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.append((int(d), fields[0], s[s.find("(") + 1:r]))
    return out


def proc_usage(pid):
    """(rss_kb, cpu_s): resident set from /proc/PID/status, user+system CPU
    time from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rfind(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])     # utime, stime (fields 14, 15)
    rss = None
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, ticks / os.sysconf("SC_CLK_TCK")


class Spawned:
    """A helper process of the test (e.g. a `sleep` a probe watches), tied
    to the test's lifetime. Started from the main thread only."""

    def __init__(self, argv, name="spawned"):
        e = env()
        self.name = e.unique_name(name)
        self._proc = _Process(list(argv), e.path(self.name + ".log"))
        self._proc.start("start")
        e.register(self)

    @property
    def pid(self):
        return self._proc.pid

    def alive(self):
        return self._proc.alive()

    def kill(self):
        """SIGKILL and reap: gone from /proc afterwards."""
        return self._proc.signal(signal.SIGKILL)[0]

    def close(self):
        if self.alive():
            self.kill()

    def diagnostics(self):
        return ""

    def __repr__(self):
        return f"<Spawned {self.name} pid {self.pid}>"


# ------------------------------------------------------------ HTTP stand-ins

class _Answer:
    """What a path answers."""

    def __init__(self, status=200, body=b"", content_type="text/plain",
                 delay_s=0.0, hang=False, auth=None, headers=None):
        self.status = status
        self.body = body.encode() if isinstance(body, str) else body
        self.content_type = content_type
        self.delay_s = delay_s
        self.hang = hang
        self.auth = auth
        self.headers = headers or {}


class _StubHandler(_http_server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "stub/1"
    sys_version = ""

    def log_message(self, fmt, *args):  # quiet: the stub records requests itself
        pass

    def _serve(self):
        self.server.stub._handle(self)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_OPTIONS = _serve


class _TcpHttpServer(_socketserver.ThreadingMixIn, _http_server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256


class _UnixHttpServer(_socketserver.ThreadingMixIn, _socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = 256


class _HttpStubBase:
    """Answers per path (the query string ignored); records every request
    as (method, path, headers). Paths not set answer `default`."""

    def __init__(self, name):
        self.name = env().unique_name(name)
        self._lock = threading.Lock()
        self._answers = {}
        self._matchers = []
        self.default = _Answer(404, b"not found\n")
        self._requests = []
        self._stop = threading.Event()
        self._release = threading.Event()   # ends every hanging answer
        self._server = None
        self._thread = None
        env().register(self)

    # -- what it answers
    def set(self, path, status=200, body=b"", content_type="text/plain", delay_s=0.0,
            hang=False, auth=None, headers=None):
        """Sets what `path` answers. delay_s delays the answer; hang accepts
        the request and never answers (until changed or closed); auth =
        (user, password) requires that Basic authorization (401 otherwise)."""
        a = _Answer(status, body, content_type, delay_s, hang, auth, headers)
        with self._lock:
            old = self._answers.get(path)
            self._answers[path] = a
            if old is not None and old.hang and not hang:
                self._release.set()
                self._release = threading.Event()

    def set_json(self, path, obj, status=200, **kw):
        self.set(path, status=status, body=_json.dumps(obj).encode(),
                 content_type="application/json", **kw)

    def set_matcher(self, fn):
        """fn(path) -> _Answer or None, consulted before the per-path table."""
        with self._lock:
            self._matchers.append(fn)

    def _answer_for(self, path):
        with self._lock:
            for fn in self._matchers:
                a = fn(path)
                if a is not None:
                    return a, self._release
            return self._answers.get(path, self.default), self._release

    # -- what it saw
    def requests(self, path=None):
        with self._lock:
            return [r for r in self._requests if path is None or r[1] == path]

    def count(self, path=None):
        return len(self.requests(path))

    def _handle(self, req):
        path = req.path.split("?", 1)[0]
        headers = {k.lower(): v for k, v in req.headers.items()}
        with self._lock:
            self._requests.append((req.command, path, headers))
            if len(self._requests) > 100000:
                del self._requests[:50000]
        a, release = self._answer_for(path)
        if a.hang:
            # Accepted, request read, never answered.
            release.wait(120)
            req.close_connection = True
            return
        if a.delay_s:
            self._stop.wait(a.delay_s)
        status, body, ctype = a.status, a.body, a.content_type
        extra = dict(a.headers)
        if a.auth is not None:
            token = _base64.b64encode(f"{a.auth[0]}:{a.auth[1]}".encode()).decode()
            if headers.get("authorization") != f"Basic {token}":
                status, body, ctype = 401, b"unauthorized\n", "text/plain"
                extra["WWW-Authenticate"] = 'Basic realm="stub"'
        try:
            req.send_response(status)
            req.send_header("Content-Type", ctype)
            req.send_header("Content-Length", str(len(body)))
            for k, v in extra.items():
                req.send_header(k, v)
            req.end_headers()
            if req.command != "HEAD":
                req.wfile.write(body)
        except OSError:
            pass        # the client gave up (its timeout): nothing to report

    # -- life cycle
    def _serve(self, server):
        server.stub = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()

    def _shutdown(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def close(self):
        self._stop.set()
        self._release.set()
        self._shutdown()

    def diagnostics(self):
        last = self.requests()[-8:]
        return (f"== {self!r}: {self.count()} requests, last {len(last)}:\n" +
                "\n".join(f"  {m} {p}" for m, p, _ in last))


class HttpStub(_HttpStubBase):
    """A local HTTP server (127.0.0.1) whose answers the test flips."""

    def __init__(self, host="127.0.0.1", port=None, name="http"):
        super().__init__(name)
        self.host = host
        self.port = port or free_port()
        self.start()

    def url(self, path="/", userinfo=None):
        return f"http://{userinfo + '@' if userinfo else ''}{self.host}:{self.port}{path}"

    def start(self):
        """(Re)starts listening on the same port."""
        if self._server is None:
            self._serve(_TcpHttpServer((self.host, self.port), _StubHandler))

    def stop_listening(self):
        """Closes the listening socket: new connections are refused."""
        self._shutdown()

    def __repr__(self):
        return f"<HttpStub {self.name} {self.host}:{self.port}>"


class DockerStub(_HttpStubBase):
    """A small fake Docker Engine API on a unix socket: answers
    GET .../containers/NAME/json (any prefix, e.g. /v1.41) with the JSON
    the test sets per container, 404 {"message": "No such container"} for
    the others."""

    def __init__(self, path=None, name="docker"):
        super().__init__(name)
        self.path = path or env().path(self.name + ".sock")
        self._containers = {}
        self.default = _Answer(404, b'{"message":"page not found"}\n', "application/json")
        self.set_matcher(self._route)
        self.start()

    def _route(self, path):
        m = re.search(r"/containers/([^/]+)/json$", path)
        if not m:
            return None
        name = m.group(1)
        if name in self._containers:
            status, obj = self._containers[name]
        else:
            status, obj = 404, {"message": f"No such container: {name}"}
        return _Answer(status, _json.dumps(obj).encode(), "application/json")

    def set_container(self, name, obj, status=200):
        with self._lock:
            self._containers[name] = (status, obj)

    def remove_container(self, name):
        with self._lock:
            self._containers.pop(name, None)

    def start(self):
        if self._server is None:
            if os.path.exists(self.path):
                os.unlink(self.path)
            self._serve(_UnixHttpServer(self.path, _StubHandler))
            os.chmod(self.path, 0o660)

    def remove_path(self):
        """Removes the socket's path: new connections fail, the server keeps
        answering those already queued."""
        if os.path.exists(self.path):
            os.unlink(self.path)

    def stop(self):
        """Stops answering and removes the socket."""
        self._shutdown()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def __repr__(self):
        return f"<DockerStub {self.path}>"


def docker_inspect(name, status="running", exit_code=0, health=None, restarting=False,
                   oom=False, cid=None):
    """A `docker inspect`-style answer (GET /containers/NAME/json), shaped
    like Docker Engine 24's, with the State fields a health check reads."""
    cid = cid or ("4f1c2b" * 11)[:64]
    running = status in ("running", "restarting", "paused")
    state = {
        "Status": status,
        "Running": running,
        "Paused": status == "paused",
        "Restarting": restarting or status == "restarting",
        "OOMKilled": oom,
        "Dead": status == "dead",
        "Pid": 41237 if running else 0,
        "ExitCode": exit_code,
        "Error": "",
        "StartedAt": "2026-11-29T08:12:44.912374512Z",
        "FinishedAt": ("0001-01-01T00:00:00Z" if status == "running"
                       else "2026-11-29T09:01:02.118822310Z"),
    }
    if health is not None:
        state["Health"] = {
            "Status": health,
            "FailingStreak": 0 if health == "healthy" else 3,
            "Log": [{"Start": "2026-11-29T09:00:58.1Z", "End": "2026-11-29T09:00:58.3Z",
                     "ExitCode": 0 if health == "healthy" else 1,
                     "Output": "ok\n" if health == "healthy" else "curl: (7) refused\n"}],
        }
    return {
        "Id": cid,
        "Created": "2026-11-20T10:00:00.000000000Z",
        "Path": "/docker-entrypoint.sh",
        "Args": ["nginx", "-g", "daemon off;"],
        "State": state,
        "Image": "sha256:" + "a1" * 32,
        "Name": "/" + name,
        "RestartCount": 2 if restarting or status == "restarting" else 0,
        "Driver": "overlay2",
        "Platform": "linux",
        "HostConfig": {"RestartPolicy": {"Name": "unless-stopped", "MaximumRetryCount": 0}},
        "Config": {"Hostname": cid[:12], "Image": "nginx:1.25",
                   "Labels": {"com.docker.compose.service": name}},
        "NetworkSettings": {"Networks": {"bridge": {"IPAddress": "172.17.0.5"}}},
    }


class LineRecorder(_Thread):
    """A TCP listener on 127.0.0.1 that records what each connection sends
    (up to 4 KiB or 2 s), then closes it."""

    def __init__(self, host="127.0.0.1"):
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(512)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._lock = threading.Lock()
        self.received = []
        self.connections = 0
        self._spawn(self._loop)
        env().register(self)

    def _loop(self):
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c):
        data = b""
        deadline = time.monotonic() + 2
        try:
            while len(data) < 4096 and time.monotonic() < deadline:
                c.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = c.recv(4096)
                if not chunk:
                    break
                data += chunk
                if b"\n" in data:
                    break
        except OSError:
            pass
        finally:
            c.close()
        with self._lock:
            self.received.append(data)

    def seen(self):
        with self._lock:
            return list(self.received)

    def __repr__(self):
        return f"<LineRecorder {self.host}:{self.port}>"


# ------------------------------------------------------------ a fixed /proc

class ProcTree:
    """A fixed tree for [agent] proc_root: loadavg, stat (cpu lines),
    meminfo, PID/comm, PID/stat. Every write is atomic (by rename)."""

    def __init__(self, path=None, ncpu=2):
        self.path = path or env().path(env().unique_name("proc"))
        os.makedirs(self.path, exist_ok=True)
        self.ncpu = ncpu
        self._busy = 0
        self._idle = 0
        self._lock = threading.Lock()
        self._ticker = None
        self.set_loadavg(0.10, 0.10, 0.10)
        self.set_meminfo()
        self.write_stat(1000, 100000)
        env().register(self)

    def write(self, rel, text):
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        write_atomic(full, text)

    def set_loadavg(self, one, five, fifteen):
        self.write("loadavg", f"{one:.2f} {five:.2f} {fifteen:.2f} 2/345 12345\n")

    def set_meminfo(self, total_kb=8000000, available_kb=6000000, swap_total_kb=2000000,
                    swap_free_kb=2000000):
        free = max(available_kb - 500000, 0)
        self.write("meminfo", "".join(f"{k + ':':<16}{v:>8} kB\n" for k, v in [
            ("MemTotal", total_kb), ("MemFree", free), ("MemAvailable", available_kb),
            ("Buffers", 120000), ("Cached", 900000), ("SwapCached", 0),
            ("Active", 1500000), ("Inactive", 700000),
            ("SwapTotal", swap_total_kb), ("SwapFree", swap_free_kb),
            ("Dirty", 120), ("Writeback", 0), ("Shmem", 40000),
            ("Slab", 200000), ("CommitLimit", 6000000), ("Committed_AS", 3000000),
            ("HugePages_Total", 0), ("Hugepagesize", 2048)]))

    def write_stat(self, busy, idle):
        """/proc/stat with `ncpu` cpuN lines; `busy` jiffies of user time and
        `idle` of idle in total, spread over the CPUs."""
        with self._lock:
            self._busy, self._idle = busy, idle
            lines = [f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0"]
            for i in range(self.ncpu):
                lines.append(f"cpu{i} {busy // self.ncpu} 0 0 {idle // self.ncpu} 0 0 0 0 0 0")
            lines += ["intr 12345 0 0", "ctxt 987654", "btime 1764400000",
                      "processes 4321", "procs_running 1", "procs_blocked 0",
                      "softirq 1 0 0 0 0 0 0 0 0 0 0"]
            self.write("stat", "\n".join(lines) + "\n")

    def cpu_busy(self, percent, tick_s=0.05):
        """Keeps advancing stat's counters so that any interval between two
        reads is `percent` busy (None stops the ticker)."""
        if self._ticker is not None:
            self._ticker[0].set()
            self._ticker[1].join(timeout=2)
            self._ticker = None
        if percent is None:
            return
        stop = threading.Event()

        def tick():
            while not stop.wait(tick_s):
                with self._lock:
                    b, i = self._busy + percent, self._idle + (100 - percent)
                self.write_stat(b, i)

        t = threading.Thread(target=tick, daemon=True)
        t.start()
        self._ticker = (stop, t)

    def add_process(self, pid, comm, state="S"):
        self.write(f"{pid}/comm", comm + "\n")
        self.write(f"{pid}/stat",
                   f"{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194560 1234 0 0 0 "
                   f"20 10 0 0 20 0 1 0 4567 123456789 2345 18446744073709551615 1 1 0 0 "
                   f"0 0 0 4096 16384 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")

    def remove_process(self, pid):
        shutil.rmtree(os.path.join(self.path, str(pid)), ignore_errors=True)

    def close(self):
        self.cpu_busy(None)

    def diagnostics(self):
        out = [f"== proc_root {self.path}:"]
        for rel in ("loadavg", "meminfo", "stat"):
            try:
                with open(os.path.join(self.path, rel)) as f:
                    text = f.read()
            except OSError as e:
                text = f"<{e}>"
            out.append(f"  {rel}: " + " | ".join(text.splitlines()[:4]))
        return "\n".join(out)

    def __repr__(self):
        return f"<ProcTree {self.path}>"


# ---------------------------------------------------------------- HTTP API

class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def http_status_line(s):
    """Reads a raw HTTP connection s to its end and closes it; returns the
    reply's status line, or what went wrong instead."""
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        s.close()
    return data.split(b"\r\n", 1)[0].decode(errors="replace") or "closed without a reply"


def http_request(where, path, method="GET", headers=None, timeout_s=5.0):
    """One request to lbagent's HTTP API: where is a TCP port on 127.0.0.1
    or "unix:/path". Returns (status, headers (lowercase names), body)."""
    if isinstance(where, str) and where.startswith("unix:"):
        conn = _UnixHTTPConnection(where[5:], timeout_s)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", where, timeout=timeout_s)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def http_json(where, path, headers=None):
    """GET path; (status, parsed JSON)."""
    status, hdrs, body = http_request(where, path, headers=headers)
    if not hdrs.get("content-type", "").startswith("application/json"):
        raise TestFailure(f"{path}: content type {hdrs.get('content-type')!r}, "
                          f"not JSON; body {body[:200]!r}")
    return status, json.loads(body)
