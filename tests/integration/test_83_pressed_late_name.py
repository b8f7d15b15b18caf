"""Under the pressure cut a late service name gets its own service's word,
or none: never the default service's.

A node whose shared port serves [service db] by name only (db is down: its
probe fails) and the default service (up). Seven addresses keep eight idle
connections each open, each inside its share of max_connections = 64 (an
eighth), reopening each as lbagent closes it: 56 of 64 slots, past the
three quarters where every connection is held briefly. A load balancer then
asks for db with its agent-send arriving late, after 120 ms, past the 50 ms
a pressed connection once waited for text. lbagent used to answer it for
the default service, `up`, for a service that is down (every try). Now:

1. the late name, while it comes within the pressed wait for a name
   (250 ms), is answered for db (`down`); or, should the machine be slow,
   the connection is closed unanswered. Never `up`;
2. part of a name (`d`, the rest never sent) is closed unanswered: it could
   be the start of any name;
3. such closes are logged (at most once per 10 s, with a count);
4. an address known to send no text is still answered for the default
   service under the cut, and lbagent answers normally once the idle
   connections are gone.

A closed connection without a reply changes nothing in HAProxy (the check
counts as failed to answer, the server keeps its state): docs/haproxy.md."""

import re
import select
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

IDLERS = [f"127.0.83.{n}" for n in range(11, 18)]
PER_IDLER = 8
LB = "127.0.83.2"
QUIET_LB = "127.0.83.3"
TRIES = 20
LATE_S = 0.12


class Idlers:
    """Keeps PER_IDLER connections open from each of IDLERS, sending
    nothing, reopening each one lbagent closes."""

    def __init__(self, port):
        self.port = port
        self.stop = threading.Event()
        self.opened = 0
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    def _open(self, source):
        s = socket.socket()
        s.setblocking(False)
        s.bind((source, 0))
        try:
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        self.opened += 1
        return s

    def _loop(self):
        socks = {}
        try:
            for a in IDLERS:
                for _ in range(PER_IDLER):
                    socks[self._open(a)] = a
            while not self.stop.is_set():
                ready, _, _ = select.select(list(socks), [], [], 0.05)
                for s in ready:
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    if data:
                        continue        # a reply: read on until the close
                    a = socks.pop(s)
                    s.close()
                    socks[self._open(a)] = a
        finally:
            for s in socks:
                s.close()

    def close(self):
        self.stop.set()
        self.t.join()


def late_ask(port, first, rest, after_s):
    """A check whose agent-send comes in two parts, `rest` after_s later
    (None: never); what it reads until lbagent closes."""
    with socket.socket() as s:
        s.settimeout(5)
        s.bind((LB, 0))
        s.connect(("127.0.0.1", port))
        if first:
            s.sendall(first)
        if rest is not None:
            time.sleep(after_s)
            try:
                s.sendall(rest)
            except OSError as e:
                return f"{type(e).__name__} sending the rest".encode()
        return h.read_to_eof(s)


def main():
    for a in IDLERS + [LB, QUIET_LB]:
        h.require_source(a)
    h.raise_nofile(512)
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "max_connections": "64"},
        "probe fails": {"type": "file", "path": "/nonexistent/lbagent-test-83",
                        "interval": "100ms", "timeout": "90ms"},
        "service db": {"probes": "fails"},
    })
    h.wait_reply(lb, re.compile(rb"^down\b"), "db down at start", send=b"db\n",
                 source=LB)
    h.expect_equal(lb.ask(source=QUIET_LB), b"up\n",
                   "the default service, asked without text (teaches lbagent "
                   f"that {QUIET_LB} sends none)")
    h.expect_equal(late_ask(lb.port, b"", b"db\n", LATE_S)[:4], b"down",
                   "a late name without the pressure cut: waited for")
    mark = lb.log_mark()

    h.section(f"{len(IDLERS)} addresses x {PER_IDLER} idle connections "
              f"(max_connections 64); db asked with its name {LATE_S * 1000:.0f} ms late")
    started = time.monotonic()
    idlers = Idlers(lb.port)
    try:
        time.sleep(0.5)
        late = [late_ask(lb.port, b"", b"db\n", LATE_S) for _ in range(TRIES)]
        part = [late_ask(lb.port, b"d", None, 0) for _ in range(TRIES // 2)]
        quiet = [lb.ask(source=QUIET_LB) for _ in range(5)]
    finally:
        idlers.close()
    print(f"   {idlers.opened} idle connections opened in all", flush=True)

    def tally(replies):
        out = {}
        for r in replies:
            key = r.split(b" ")[0].rstrip(b"\n") if r else b"(closed unanswered)"
            out[key] = out.get(key, 0) + 1
        return out

    print(f"   late name: {tally(late)}; part of a name: {tally(part)}; "
          f"quiet address: {tally(quiet)}", flush=True)
    wrong = [r for r in late + part if r.startswith(b"up")]
    h.expect(not wrong, f"{len(wrong)} of {len(late) + len(part)} checks for db "
             f"were answered for the default service: {wrong[:3]}")
    h.expect(all(r == b"" or r.startswith(b"down") for r in late),
             f"a late name: db's word or nothing, saw {late}")
    h.expect(all(r == b"" for r in part),
             f"part of a name: closed unanswered, saw {part}")
    h.expect(all(r == b"up\n" for r in quiet),
             f"an address known to send no text: the default service, saw {quiet}")

    log = lb.log_since(mark)
    lines = re.findall(r"agent port: a check from \S+ closed unanswered under "
                       r"the pressure cut: (?:part of an|no) agent-send line", log)
    most = 2 + int((time.monotonic() - started) / 10)
    h.expect(1 <= len(lines) <= most,
             f"expected 1 to {most} log lines about checks closed unanswered "
             f"(one per 10 s at most), saw {len(lines)}")

    h.section("the idle connections gone: answered as before")
    h.wait_reply(lb, re.compile(rb"^down\b"), "db by name", send=b"db\n", source=LB)
    h.expect_equal(late_ask(lb.port, b"", b"db\n", LATE_S)[:4], b"down",
                   "a late name once the cut is over")
    h.expect(lb.alive(), "lbagent died")


if __name__ == "__main__":
    h.run(main)
