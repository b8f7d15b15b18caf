"""The HTTP API's parser is strict: what proxies and servers read in two
ways is refused, 400 and the connection closed, with the reason.

- a NUL in a header value, in a header name, in the request line;
- a bare LF (the whole head, or one line), a bare CR inside a line or as a
  line end;
- obsolete line folding: a header line that begins with a space or a tab;
- and the same requests with CR LF line ends are answered 200; the API
  goes on after the refusals."""

import socket
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

CASES = [
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n", "NUL"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-\0A: ab\r\n\r\n", "NUL"),
    (b"GET /health\0 HTTP/1.1\r\nHost: x\r\n\r\n", "NUL"),
    (b"GET /health HTTP/1.1\nHost: x\n\n", "bare LF"),
    (b"GET /health HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", "bare LF"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", "bare CR"),
    (b"GET /health HTTP/1.1\r\nHost: x\rX-A: b\r\n\r\n", "bare CR"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", "folding"),
    (b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb: c\r\n\r\n", "folding"),
]


def send(port, raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(raw)
    data = h.read_to_eof(s)
    s.close()
    return data


def main():
    port = h.free_port()
    # A probe (a file that is there): /health's plain 200, not the 203
    # of a node without probes.
    lb = h.Lbagent({"http": {"listen": f"127.0.0.1:{port}"}, "probe up": {"type": "file", "path": h.tmpdir()}})
    h.wait_until(lambda: h.http_request(port, "/health")[0], h.startup_bound_s(),
                 "/health", ok=lambda s: s == 200)

    for raw, why in CASES:
        h.section(repr(raw))
        data = send(port, raw)
        h.expect(data.startswith(b"HTTP/1.1 400 Bad Request\r\n"),
                 f"{raw!r}: expected 400, got {data[:80]!r}")
        body = data.split(b"\r\n\r\n", 1)[-1]
        h.expect(why.encode() in body, f"{raw!r}: the error says {why!r}: {body!r}")
        h.expect(b"Connection: close\r\n" in data, f"{raw!r}: closed after the 400")

    h.section("clean requests are answered, and the API goes on")
    for raw in (b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: a b\r\n\r\n",
                b"\r\nGET /health HTTP/1.0\r\n\r\n"):
        data = send(port, raw)
        h.expect(data.startswith(b"HTTP/1.1 200 OK\r\n"), f"{raw!r}: {data[:80]!r}")
    h.expect(lb.alive(), "lbagent died")
    lb.stop(expect_rc=0)


h.run(main)
