"""The harness's own parts checked on their own, in seconds and without
HAProxy: each fault proxy mode against a small echo-and-answer server
(pass, refuse, blackhole, delay, drop_up, drop_down, and a mode change
acting on a connection already open), and the planned-operation check
on made-up requests. Run by `scripts/qualify --selftest`; exits 1 naming
what failed."""

import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

from faults import FaultProxy  # noqa: E402


class Upstream:
    """Answers every line it receives with "ok LINE\\n"; counts what it got."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received = []
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        buf = b""
        with c:
            while True:
                try:
                    data = c.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self.received.append(line)
                    try:
                        c.sendall(b"ok " + line + b"\n")
                    except OSError:
                        return


def exchange(port, line=b"hello", timeout_s=1.0, conn=None):
    """Sends a line, returns (answer or error name, seconds, the socket)."""
    s = conn or socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    s.settimeout(timeout_s)
    t = time.monotonic()
    try:
        s.sendall(line + b"\n")
        data = s.recv(4096)
        out = data if data else "EOF"
    except socket.timeout:
        out = "timeout"
    except OSError as e:
        out = type(e).__name__
    return out, time.monotonic() - t, s


def main(verbose=True):
    failures = []

    def check(ok, what):
        if verbose or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            failures.append(what)

    up = Upstream()
    p = FaultProxy("selftest", up.port)

    out, _, s = exchange(p.port, b"a")
    check(out == b"ok a\n", f"pass relays both ways: {out!r}")

    p.set("delay", delay_ms=300)
    out, took, s2 = exchange(p.port, b"b", timeout_s=3.0, conn=s)
    check(out == b"ok b\n" and took >= 0.5,
          f"delay holds each way's chunk 300 ms: {out!r} after {took:.2f} s")

    p.set("blackhole")
    out, _, _ = exchange(p.port, b"c", conn=s)
    check(out == "timeout", f"blackhole silences a connection already open: {out!r}")
    out, _, bh = exchange(p.port, b"d")
    check(out == "timeout" and b"d" not in up.received,
          f"blackhole accepts a new connection and never answers nor relays: {out!r}")
    bh.close()

    p.set("drop_down")
    out, _, c = exchange(p.port, b"e")
    time.sleep(0.2)
    check(out == "timeout" and b"e" in up.received,
          f"drop_down: the request arrives, the answer never: {out!r}")
    c.close()

    p.set("drop_up")
    n = len(up.received)
    out, _, c = exchange(p.port, b"f")
    time.sleep(0.2)
    check(out == "timeout" and len(up.received) == n,
          f"drop_up: the request never arrives: {out!r}")
    c.close()

    p.set("pass")
    out, _, c = exchange(p.port, b"g")
    check(out == b"ok g\n", f"pass again: {out!r}")
    p.set("refuse")
    out, _, _ = exchange(p.port, b"h", conn=c)
    check(out in ("EOF", "ConnectionResetError", "BrokenPipeError"),
          f"refuse closes a connection already open: {out!r}")
    out, _, _ = exchange(p.port, b"i")
    check(out in ("EOF", "ConnectionResetError", "BrokenPipeError"),
          f"refuse closes a new connection at once: {out!r}")
    p.close()

    # The planned-operation check on made-up requests.
    from invariants import check_planned
    from workload import Request

    class FakeSampler:
        def __init__(self):
            self.violations = []

        def violate(self, invariant, what, t=None):
            self.violations.append((invariant, what))

    def req(start, end, status):
        r = Request("lb1", "short", start)
        r.end, r.status, r.node = end, status, "n1"
        return r

    fs = FakeSampler()
    check_planned(fs, [req(0, 1, 503), req(2, 3, 200), req(2.5, 4.5, 503), req(6, 7, 503)],
                  [(2.0, 5.0, "op")], 0.0)
    check(len(fs.violations) == 1 and "2.50s" in fs.violations[0][1],
          f"planned: only the failed request that overlapped the window: {fs.violations}")
    if failures:
        print(f"selftest: {len(failures)} failed")
        return 1
    print("selftest: the fault proxies and the planned check work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
