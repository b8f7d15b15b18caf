"""Hostile dependencies cost lbagent a bounded read, bounded memory and no
stall of the agent port. A server the test runs on loopback answers:

- `/endless`: 200 and a chunked body that never ends, to an http probe
  that reads no body: the probe stops at 1 MiB and is ok on the status
  (`HTTP 200 in ...`), long before its 20 s timeout; the server could
  send lbagent only a bounded amount (its socket buffers and 1 MiB);
- `/headers`: a header block that never ends: crit `headers larger than
  64 KiB`;
- `/bomb`: a 1 MiB JSON body of `[{},{},...]` (about 80 MB as jansson's
  tree) to a json_field probe: crit `JSON body would take over 16 MiB to
  parse`, and lbagent's peak RSS (VmHWM) stays under 40 MB;
- a fake Docker daemon answering the same kind of body (to a second
  lbagent, so that one bomb at a time is measured): crit, VmHWM bounded;
- an exec probe running `yes`: unknown `output larger than 4 MiB,
  killed`, and what lbagent read (rchar, since it started) stays under
  64 MiB.

Meanwhile every raw agent check gets a well-formed reply."""

import os
import socket
import sys
import threading

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

TIMEOUT = "20s"          # far past what a bounded read takes
BOUND_S = 15             # a result within this, not the timeout's
HWM_MAX_KB = 40 * 1024  # one bomb at a time; a bomb parsed whole: 80 MB
# AddressSanitizer's redzones and quarantine make RSS say nothing here.
CHECK_HWM = not h.asan_enabled()
BOMB = b"[" + b"{}," * 349000 + b"{}]"   # just under 1 MiB


class HostileServer(threading.Thread):
    """One thread per connection; counts the body bytes sent on /endless."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.endless_sent = 0
        self.lock = threading.Lock()
        self.start()

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        try:
            req = b""
            while b"\r\n\r\n" not in req and len(req) < 65536:
                d = c.recv(4096)
                if not d:
                    return
                req += d
            path = req.split(b" ", 2)[1]
            if path == b"/endless":
                c.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                chunk = b"%x\r\n" % 65536 + b"e" * 65536 + b"\r\n"
                while True:
                    c.sendall(chunk)
                    with self.lock:
                        self.endless_sent += len(chunk)
            elif path == b"/headers":
                c.sendall(b"HTTP/1.1 200 OK\r\n")
                line = b"X-Filler: " + b"h" * 1000 + b"\r\n"
                while True:
                    c.sendall(line * 64)
            elif path == b"/bomb":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n" % len(BOMB) + BOMB)
        except OSError:
            pass
        finally:
            c.close()

    def sent(self):
        with self.lock:
            return self.endless_sent


def rchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise RuntimeError("no rchar")


def main():
    h.require_kinds("http", "exec", "docker")
    srv = HostileServer()
    docker = h.DockerStub()
    docker.set_container("bomb", [{}] * 262000)   # "[{}, {}, ...]": ~1 MB
    d = h.tmpdir()
    sock = os.path.join(d, "http.sock")
    url = f"http://127.0.0.1:{srv.port}"

    def probe(**keys):
        return {"interval": "60s", "timeout": TIMEOUT, "on_crit": "ignore", **keys}

    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{sock}"},
        "probe endless": probe(type="http", url=url + "/endless"),
        "probe headers": probe(type="http", url=url + "/headers"),
        "probe bomb": probe(type="http", url=url + "/bomb", json_field="0.x",
                            expect_value="y"),
        "probe flood": probe(type="exec", command="yes"),
    })

    def last(name):
        _, doc = h.http_json("unix:" + sock, "/status")
        probes = {p["name"]: p for s in doc["services"] for p in s["probes"]}
        return probes[name]["last"] or {}

    def settled(name):
        return h.wait_until(lambda: last(name), BOUND_S, f"a result of {name}",
                            ok=lambda p: p.get("result") is not None)

    h.section("an endless body nothing reads: ok at 1 MiB, not the timeout")
    p = settled("endless")
    print(f"   endless: {p}; the server sent {srv.sent()} bytes", flush=True)
    h.expect_equal(p.get("result"), "ok", "the endless body's result")
    h.expect(p.get("reason", "").startswith("HTTP 200 in "), f"its reason: {p}")

    h.section("endless headers: crit")
    p = settled("headers")
    h.expect_equal((p.get("result"), p.get("reason")),
                   ("crit", "headers larger than 64 KiB"), "endless headers")

    h.section("a JSON bomb: crit, memory bounded")
    p = settled("bomb")
    h.expect_equal((p.get("result"), p.get("reason")),
                   ("crit", "JSON body would take over 16 MiB to parse"), "the http bomb")

    h.section("a program writing for ever: killed at 4 MiB")
    p = settled("flood")
    h.expect_equal((p.get("result"), p.get("reason")),
                   ("unknown", "output larger than 4 MiB, killed"), "yes")

    h.section("what it all cost lbagent")
    for _ in range(20):
        r = lb.ask()
        h.expect(h.well_formed(r), f"a well-formed reply: {r!r}")
    hwm = lb._proc_status("VmHWM")
    read = rchar(lb.pid)    # since it started: the config, /proc, yes's pipe
    sent = srv.sent()
    print(f"   VmHWM {hwm} kB, rchar {read} bytes, endless body sent {sent} bytes",
          flush=True)
    h.expect(not CHECK_HWM or hwm < HWM_MAX_KB, f"VmHWM {hwm} kB, not under {HWM_MAX_KB} kB")
    h.expect(read < 64 * 1024 * 1024, f"lbagent read {read} bytes (rchar)")
    h.expect(sent < 64 * 1024 * 1024, f"the endless body got {sent} bytes to lbagent")
    lb.stop()

    h.section("the Docker daemon's answer as a JSON bomb: crit, memory bounded")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{sock}"},
        "probe dockerbomb": probe(type="docker", container="bomb", socket=docker.path),
    })
    p = settled("dockerbomb")
    h.expect_equal((p.get("result"), p.get("reason")),
                   ("crit", "docker API: answer would take over 16 MiB to parse"),
                   "the docker bomb")
    h.expect(h.well_formed(lb.ask()), "a well-formed reply")
    hwm = lb._proc_status("VmHWM")
    print(f"   VmHWM {hwm} kB", flush=True)
    h.expect(not CHECK_HWM or hwm < HWM_MAX_KB, f"VmHWM {hwm} kB, not under {HWM_MAX_KB} kB")
    lb.stop()


h.run(main)
