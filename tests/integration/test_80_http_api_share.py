"""One address cannot take every HTTP API slot.

[http] max_connections 16: one address may hold 4 (16 / 8, and 4 at
least). An address opens 16 connections that send nothing and opens a
new one each time lbagent closes one, so that on its own it would keep
every slot (each held up to the 5 s request deadline); meanwhile:

- /health from another address is answered 200 at once (within 3 s,
  before any of the hog's connections reaches its deadline: before, it
  waited in the kernel's queue until one did);
- the flooding address's connections beyond its share get a 503 (those
  the kernel hands over before the client is gone), and lbagent counts
  them in lbagent_http_refused_total;
- the log says so, at most once per 10 s.

Then with [http] per_address = 10 the same address holds 10, not 4, and
another address is still answered."""

import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

FLOOD = "127.0.80.9"
OTHER = "127.0.80.1"
MAX = 16
SHARE = 4
PER_ADDRESS = 10


class Hog:
    """MAX idle connections from FLOOD, each replaced once lbagent closes it;
    records what the closed ones got."""

    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()
        self.got = []
        self.stop = threading.Event()
        self.socks = [self._open() for _ in range(MAX)]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self):
        s = socket.socket()
        s.bind((FLOOD, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", self.port))
        s.setblocking(False)
        return s

    def _run(self):
        while not self.stop.is_set():
            for i, s in enumerate(self.socks):
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b"(reset)"
                s.close()
                with self.lock:
                    self.got.append(data[:40])
                try:
                    self.socks[i] = self._open()
                except OSError:
                    self.socks[i] = socket.socket()     # retried next round
            self.stop.wait(0.05)

    def close(self):
        self.stop.set()
        self.thread.join(timeout=5)
        for s in self.socks:
            s.close()

    def diagnostics(self):
        with self.lock:
            return f"== hog: {len(self.got)} closed, first {self.got[:3]}"


def main():
    port = h.free_port()
    # A probe (a file that is there): /health's plain 200, not the 203
    # of a node without probes.
    lb = h.Lbagent({"http": {"listen": f"127.0.0.1:{port}",
                             "max_connections": str(MAX)}, "probe up": {"type": "file", "path": h.tmpdir()}})
    h.wait_until(lambda: h.http_request(port, "/health")[0], h.startup_bound_s(),
                 "/health", ok=lambda s: s == 200)
    mark = lb.log_mark()

    h.section(f"{FLOOD} keeps {MAX} idle connections open")
    hog = Hog(port)
    h.env().register(hog)
    time.sleep(0.5)     # lbagent takes the hog's connections (or refuses them)

    h.section(f"/health from {OTHER} while the hog holds its share")
    for _ in range(5):
        conn = socket.create_connection(("127.0.0.1", port), timeout=3,
                                        source_address=(OTHER, 0))
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        data = h.read_to_eof(conn)
        conn.close()
        h.expect(data.startswith(b"HTTP/1.1 200 OK"),
                 f"/health from another address: {data[:80]!r}")
    h.wait_until(lambda: list(hog.got), 10, "lbagent to refuse the hog's extra connections",
                 ok=lambda g: any(x.startswith(b"HTTP/1.1 503") for x in g))
    status, _, body = h.http_request(port, "/metrics")
    h.expect_equal(status, 200, "/metrics while the hog holds its share")
    refused = [line for line in body.decode().splitlines()
               if line.startswith("lbagent_http_refused_total ")]
    h.expect(refused and int(refused[0].split()[1]) > 0,
             f"lbagent_http_refused_total: {refused}")
    hog.close()
    h.env().forget(hog)

    log = lb.log_since(mark)
    said = [line for line in log.splitlines() if "its share of max_connections" in line]
    h.expect(said and f"127.0.80.9 holds {SHARE} connections" in said[0],
             f"the refusal in the log: {said[:2]}")
    h.expect(len(said) <= 2, f"refusals logged {len(said)} times (at most once per 10 s)")
    lb.stop(expect_rc=0)

    h.section(f"[http] per_address = {PER_ADDRESS}: the share set by hand")
    port = h.free_port()
    lb = h.Lbagent({"http": {"listen": f"127.0.0.1:{port}",
                             "max_connections": str(MAX),
                             "per_address": str(PER_ADDRESS)}, "probe up": {"type": "file", "path": h.tmpdir()}},
                   name="per_address")
    h.wait_until(lambda: h.http_request(port, "/health")[0], h.startup_bound_s(),
                 "/health", ok=lambda s: s == 200)
    mark = lb.log_mark()
    hog = Hog(port)
    h.env().register(hog)
    said = h.wait_until(lambda: [line for line in lb.log_since(mark).splitlines()
                                 if "its share of max_connections" in line],
                        10, "the refusal in the log", ok=bool)
    h.expect(f"127.0.80.9 holds {PER_ADDRESS} connections" in said[0],
             f"the hog holds {PER_ADDRESS}, not {SHARE}: {said[:2]}")
    conn = socket.create_connection(("127.0.0.1", port), timeout=3,
                                    source_address=(OTHER, 0))
    conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    data = h.read_to_eof(conn)
    conn.close()
    h.expect(data.startswith(b"HTTP/1.1 200 OK"),
             f"/health from another address: {data[:80]!r}")
    hog.close()
    h.env().forget(hog)
    lb.stop(expect_rc=0)


h.run(main)
