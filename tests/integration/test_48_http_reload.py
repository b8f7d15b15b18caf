"""Reloads keep the HTTP API's sockets and the requests in flight.

- A request half sent on TCP and on the unix socket before a reload is
  answered after it (its connection is not closed by the reload);
- a storm of 30 reloads while clients loop on /health (TCP) and /status
  (unix): every request succeeds;
- a changed address moves: the new port answers, the old one is refused,
  and requests in flight on the old one still complete, those waiting in
  its backlog (not accepted yet when the reload came) too; a token file
  added by the reload applies to the detail of /status."""

import os
import signal
import socket
import sys
import threading

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

RELOADS = 30
# More than one turn of the loop accepts (HTTP_ACCEPT_BATCH, 16), fewer
# than the backlog (64).
QUEUED = 24
TOKEN = "reload-token"


def config(lb, d, port, token_file=None):
    return h.ini_text({
        "agent": {**h.IMMEDIATE, "listen": f"127.0.0.1:{lb.port}",
                  "state_dir": lb.state_dir},
        "http": {"listen": f"127.0.0.1:{port}, unix:{os.path.join(d, 'api.sock')}",
                 "token_file": token_file},
        "probe ok": {"type": "file", "path": os.path.join(d, "ok"), "interval": "200ms",
                     "timeout": "100ms"},
    })


def half_request(where):
    """A connection with the request line and one header sent, no end."""
    if isinstance(where, str):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(where)
    else:
        s = socket.create_connection(("127.0.0.1", where))
    s.settimeout(10 * h._time_scale())
    s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
    return s


def finish(s):
    """Ends the request; returns the status line, or what went wrong."""
    try:
        s.sendall(b"\r\n")
    except OSError as e:
        s.close()
        return f"{type(e).__name__}: {e}"
    return h.http_status_line(s)


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    h.write_atomic(os.path.join(d, "ok"), "ok\n")
    sock = os.path.join(d, "api.sock")
    p1, p2 = h.free_port(), h.free_port()
    lb = h.Lbagent(start=False)
    with open(lb.config_path, "w") as f:
        f.write(config(lb, d, p1))
    lb.start()
    h.wait_until(lambda: h.http_request(p1, "/health")[0], 10, "/health", ok=lambda s: s == 200)
    reloads = [0]

    def reload():
        mark = lb.log_mark()
        os.kill(lb.pid, signal.SIGHUP)
        h.wait_until(lambda: lb.log_since(mark), 10, "the reload to finish",
                     ok=lambda t: "reloaded " in t or "reload failed" in t)
        h.expect("reload failed" not in lb.log_since(mark), "the reload failed")
        reloads[0] += 1

    h.section("a request in flight across a reload is answered")
    tcp, unix = half_request(p1), half_request(sock)
    reload()
    h.expect_equal((finish(tcp), finish(unix)), ("HTTP/1.1 200 OK",) * 2,
                   "requests half sent before the reload (TCP, unix)")

    h.section(f"{RELOADS} reloads while clients loop on /health and /status")
    stop = threading.Event()
    results = {"tcp": [], "unix": []}

    def loop(where, path, out):
        while not stop.is_set():
            try:
                out.append(h.http_request(where, path, timeout_s=5)[0])
            except Exception as e:  # noqa: BLE001 - every failure is reported
                out.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=loop, args=(p1, "/health", results["tcp"]),
                                daemon=True),
               threading.Thread(target=loop, args=(f"unix:{sock}", "/status",
                                                   results["unix"]), daemon=True)]
    for t in threads:
        t.start()
    try:
        for _ in range(RELOADS):
            before = len(results["tcp"]) + len(results["unix"])
            reload()
            # Requests were made around each reload, not only between them.
            h.wait_until(lambda: len(results["tcp"]) + len(results["unix"]) > before + 2,
                         10, "requests between reloads")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    for name, seen in results.items():
        bad = [r for r in seen if r != 200]
        print(f"   {name}: {len(seen)} requests, {len(bad)} failed", flush=True)
        h.expect(not bad, f"{name} requests that failed during reloads: {bad[:5]}")

    h.section("a changed address moves; requests in flight on the old one complete")
    token_file = os.path.join(d, "token")
    h.write_atomic(token_file, TOKEN + "\n", mode=0o600)
    old = half_request(p1)
    with open(lb.config_path, "w") as f:
        f.write(config(lb, d, p2, token_file))
    # Connections the kernel completed while lbagent was stopped wait in
    # the old port's backlog, more than one turn of the loop accepts: the
    # reload closes that port, and must serve them rather than reset them.
    os.kill(lb.pid, signal.SIGSTOP)
    try:
        queued = [half_request(p1) for _ in range(QUEUED)]
        mark = lb.log_mark()
        os.kill(lb.pid, signal.SIGHUP)
    finally:
        os.kill(lb.pid, signal.SIGCONT)
    h.wait_until(lambda: lb.log_since(mark), 10, "the reload to finish",
                 ok=lambda t: "reloaded " in t or "reload failed" in t)
    h.expect("reload failed" not in lb.log_since(mark), "the reload failed")
    reloads[0] += 1
    h.expect_equal(finish(old), "HTTP/1.1 200 OK", "the request in flight on the old port")
    h.expect_equal([finish(q) for q in queued], ["HTTP/1.1 200 OK"] * QUEUED,
                   "the requests queued on the old port when it closed")
    h.expect_equal(h.http_request(p2, "/health")[0], 200, "/health on the new port")
    try:
        h.http_request(p1, "/health", timeout_s=2)
        refused = False
    except ConnectionRefusedError:
        refused = True
    h.expect(refused, "the old port still answers after the reload")
    status, doc = h.http_json(p2, "/status", {"Authorization": f"Bearer {TOKEN}"})
    h.expect_equal((status, doc.get("detail"), doc.get("reloads")), (200, True, reloads[0]),
                   "the token file the reload added, and the reload count")
    h.expect_equal(h.http_json(f"unix:{sock}", "/status")[0], 200, "the unix socket stays")
    lb.stop(expect_rc=0)
    h.expect(not os.path.exists(sock), "the unix socket is removed at exit")


h.run(main)
