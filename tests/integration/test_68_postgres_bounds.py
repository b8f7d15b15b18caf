"""The postgres probe's bounds, whatever the server does, each judged by the
probe's result in lbagent's status JSON and by agent replies:

- a hostile server (a small fake speaking just enough of the protocol:
  startup, then an ErrorResponse of 200 MB to every query, streamed): the
  probe is crit "answer over 1 MiB: read stopped", the agent answers while
  the fake streams, and lbagent's peak memory (VmHWM) stays under 64 MiB;
- a real PostgreSQL (as test_65 starts one):
  - endless rows (a set-returning function streaming a billion rows):
    crit "over 1000 rows: read stopped";
  - one row of 4 MB: "answer over 1 MiB: read stopped"; the same over TLS
    (sslmode=require, a self-signed certificate: libpq refuses to go on
    without TLS), where the relay sits below TLS, and SELECT 1 over TLS
    is ok;
  - a query that lifts the statement_timeout the probe sets and sleeps a
    minute: past the probe's timeout a cancel request ends it on the
    server, so no such backend ever gets older than a few seconds
    (pg_stat_activity's own clock; before, each run left one for 60 s)."""

import os
import socket
import struct
import subprocess
import sys
import threading
import uuid

sys.dont_write_bytecode = True
import harness as h  # noqa: E402
import test_65_postgres as pg65  # noqa: E402

ERROR_BYTES = 200 * 1024 * 1024
HWM_LIMIT_KB = 64 * 1024
MARK = "lbagent_stall_" + uuid.uuid4().hex[:10]


class HostileServer:
    """Answers every query with a 200 MB ErrorResponse, streamed in 64 KiB
    writes; counts what it sent and the cancel requests it got."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.sent = 0
        self.streams = 0
        self.closed = False
        h.env().register(self)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    @staticmethod
    def read(c, n):
        buf = b""
        while len(buf) < n:
            got = c.recv(n - len(buf))
            if not got:
                raise EOFError
            buf += got
        return buf

    def serve(self, c):
        try:
            with c:
                while True:
                    n = struct.unpack("!i", self.read(c, 4))[0]
                    body = self.read(c, n - 4)
                    code = struct.unpack("!i", body[:4])[0]
                    if code in (80877103, 80877104):   # SSL, GSS: no
                        c.sendall(b"N")
                        continue
                    if code == 80877102:               # a cancel request
                        return
                    break
                c.sendall(b"R" + struct.pack("!ii", 8, 0) +
                          b"K" + struct.pack("!iii", 12, 4242, 4343) +
                          b"Z" + struct.pack("!i", 5) + b"I")
                while True:
                    kind = self.read(c, 1)
                    n = struct.unpack("!i", self.read(c, 4))[0]
                    self.read(c, n - 4)
                    if kind == b"X":
                        return
                    if kind == b"Q":
                        self.error(c)
        except (EOFError, OSError):
            return

    def error(self, c):
        head = b"SERROR\0CXX000\0M"
        c.sendall(b"E" + struct.pack("!i", 4 + len(head) + ERROR_BYTES + 2) + head)
        with self.lock:
            self.streams += 1
        chunk = b"x" * 65536
        for _ in range(ERROR_BYTES // len(chunk)):
            c.sendall(chunk)
            with self.lock:
                self.sent += len(chunk)
        c.sendall(b"\0\0" + b"Z" + struct.pack("!i", 5) + b"I")

    def diagnostics(self):
        return f"== hostile server: {self.streams} errors begun, {self.sent} bytes sent"

    def close(self):
        self.closed = True
        self.sock.close()


def hwm_kb(lb):
    return lb._proc_status("VmHWM")


def self_signed(d, user):
    key, crt = os.path.join(d, "server.key"), os.path.join(d, "server.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", crt, "-subj", "/CN=localhost", "-days", "2"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for p in (key, crt):
        os.chown(p, user.pw_uid, user.pw_gid)
        os.chmod(p, 0o600)
    return key, crt


def hostile_case():
    h.section("a server answering a 200 MB ErrorResponse, streamed")
    fake = HostileServer()
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http-hostile.sock"},
        "probe big_error": pg65.probe(pg65.tcp(fake.port)),
    }, name="lbagent-hostile",
        # libpq sizes its buffer to the length the server announces (200 MB,
        # address space only: what is written there is what the relay let
        # through); glibc's MALLOC_PERTURB_, which meson sets for tests,
        # would write all of it and make it resident.
        extra_env={"MALLOC_PERTURB_": "0"})
    pg65.wait_probe(lb, "big_error", "crit", "answer over 1 MiB: read stopped")
    # Replies while the fake streams its next errors, run after run.
    streams0 = fake.streams

    def ask_and_count():
        h.expect(h.well_formed(lb.ask()), "a well-formed reply while the error streams")
        return fake.streams
    h.wait_until(ask_and_count, 3 * pg65.BOUND_S, "two more errors streamed, replies "
                 "coming meanwhile", ok=lambda n: n >= streams0 + 2)
    r = h.wait_reply(lb, h.starts(b"down #big_error: answer over 1 MiB"),
                     "the bound's reason in the reply")
    pg65.wait_probe(lb, "big_error", "crit", "answer over 1 MiB: read stopped",
                    "still crit with the bound's reason, run after run")
    if h.asan_enabled():
        print("ASan build: VmHWM not judged (its shadow memory counts)")
    else:
        hwm = hwm_kb(lb)
        h.expect(hwm < HWM_LIMIT_KB, f"lbagent's VmHWM {hwm} KiB, at most {HWM_LIMIT_KB}")
        print(f"VmHWM {hwm} KiB after {fake.streams} streamed errors, {r!r}")
    lb.stop()
    h.env().forget(lb)


def stalled_count(pg):
    return pg.sql(f"SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                  f"'%{MARK}%' AND pid <> pg_backend_pid() AND "
                  f"now() - query_start > interval '4 seconds'")


def main():
    h.require_kinds("postgres")
    bindir, user = pg65.pg_bin(), pg65.pg_user()
    os.chmod(h.tmpdir(), 0o755)
    hostile_case()

    port = h.free_port()
    h.section(f"a real server on 127.0.0.1:{port}, with TLS")
    pg = pg65.PgServer("bounds", port, user, bindir)
    key, crt = self_signed(pg.dir, user)
    pg.sql(f"ALTER SYSTEM SET ssl_cert_file = '{crt}'")
    pg.sql(f"ALTER SYSTEM SET ssl_key_file = '{key}'")
    pg.sql("ALTER SYSTEM SET ssl = on")
    pg.sql("SELECT pg_reload_conf()")
    tls = pg65.tcp(port, sslmode="require")
    stall = f"SET statement_timeout = 0; SELECT pg_sleep(60) AS {MARK}"
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http-bounds.sock"},
        "probe rows": pg65.probe(pg65.tcp(port), query="SELECT repeat('x', 100) || "
                                 "generate_series(1, 1000000000)"),
        "probe wide": pg65.probe(pg65.tcp(port), query="SELECT repeat('x', 4000000)"),
        "probe tls_ok": pg65.probe(tls),
        "probe tls_wide": pg65.probe(tls, query="SELECT repeat('x', 4000000)"),
        "probe stall": pg65.probe(pg65.tcp(port), query=stall),
    }, name="lbagent-bounds")

    h.section("endless rows, a wide row, the same over TLS")
    pg65.wait_probe(lb, "rows", "crit", "over 1000 rows: read stopped")
    pg65.wait_probe(lb, "wide", "crit", "answer over 1 MiB: read stopped")
    pg65.wait_probe(lb, "tls_ok", "ok", "query ok in ")
    pg65.wait_probe(lb, "tls_wide", "crit", "answer over 1 MiB: read stopped")

    h.section("a query past the probe's timeout is cancelled on the server")
    pg65.wait_probe(lb, "stall", "crit", "timed out after ")
    h.wait_until(lambda: pg.sql(f"SELECT count(*) FROM pg_stat_activity WHERE query "
                                f"LIKE '%{MARK}%' AND pid <> pg_backend_pid()"),
                 pg65.BOUND_S, "the probe's pg_sleep on the server", ok=lambda n: n != "0")
    # Each run's sleep is cancelled at its timeout (800 ms): none lives to
    # 4 s by the server's clock. Abandoned, each would live 60 s.
    h.hold_for(lambda: stalled_count(pg), 8, "no pg_sleep of the probe older than 4 s",
               ok=lambda n: n == "0")
    h.expect("cancel request failed" not in lb.log(), "a failed cancel request in the log")
    lb.stop()


if __name__ == "__main__":
    h.run(main)
