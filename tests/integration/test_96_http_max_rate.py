"""[http] max_rate: TCP connections past the rate wait in the kernel's
queue; none is lost, unix sockets are not counted.

[http] max_rate 10 (a burst of 2 at once). lbagent is stopped (SIGSTOP)
while 30 clients connect over TCP and send `GET /health`: the kernel
completes their connections into the listening socket's queue. Then it
goes on (SIGCONT), and:

- every one of the 30 is answered 200 (none reset or dropped: the queue
  holds 64);
- the k-th answer comes no sooner than (k - 2) / 10 s after lbagent went
  on: the rate holds (a lower bound, which a slow machine only makes
  easier to meet);
- a request on the unix socket, made once lbagent went on, is answered
  while TCP clients still wait (unix callers are not counted);
- lbagent_http_rate_waits_total counts the waits, and the log says why
  accepting waited, once."""

import os
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

RATE = 10
BURST = 2           # RATE / 4
CLIENTS = 30


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    h.write_atomic(os.path.join(d, "ok"), "ok\n")
    sock = os.path.join(d, "api.sock")
    port = h.free_port()
    lb = h.Lbagent(start=False)
    with open(lb.config_path, "w") as f:
        f.write(h.ini_text({
            "agent": {**h.IMMEDIATE, "listen": f"127.0.0.1:{lb.port}",
                      "state_dir": lb.state_dir},
            "http": {"listen": f"127.0.0.1:{port}, unix:{sock}", "max_rate": str(RATE)},
            "probe ok": {"type": "file", "path": os.path.join(d, "ok"),
                         "interval": "1s", "timeout": "500ms"},
        }))
    lb.start()
    h.wait_until(lambda: h.http_request(f"unix:{sock}", "/health")[0], 10, "/health",
                 ok=lambda s: s == 200)

    h.section(f"{CLIENTS} TCP clients queued while lbagent is stopped")
    mark = lb.log_mark()
    os.kill(lb.pid, signal.SIGSTOP)
    try:
        clients = []
        for _ in range(CLIENTS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            clients.append(s)
        went_on = time.monotonic()
    finally:
        os.kill(lb.pid, signal.SIGCONT)
    answers = [None] * CLIENTS
    done = []
    lock = threading.Lock()

    def read(i, s):
        s.settimeout(30 * h._time_scale())
        line = h.http_status_line(s)
        with lock:
            answers[i] = line
            done.append(time.monotonic() - went_on)

    threads = [threading.Thread(target=read, args=(i, s), daemon=True)
               for i, s in enumerate(clients)]
    for t in threads:
        t.start()

    h.section("a unix caller is answered while TCP clients wait")
    status = h.http_request(f"unix:{sock}", "/health")[0]
    with lock:
        answered_tcp = len(done)
    print(f"   unix /health {status} with {answered_tcp} of {CLIENTS} TCP answered", flush=True)
    h.expect_equal(status, 200, "/health on the unix socket")
    h.expect(answered_tcp < CLIENTS,
             f"the unix caller waited for every TCP client ({answered_tcp} answered)")

    for t in threads:
        t.join()
    h.expect_equal(answers, ["HTTP/1.1 200 OK"] * CLIENTS, "every queued TCP client's answer")
    done.sort()
    print(f"   answers at (s): {' '.join(f'{x:.2f}' for x in done)}", flush=True)
    early = [(k, at) for k, at in enumerate(done, 1) if at < (k - BURST) / RATE - 0.005]
    h.expect(not early, f"answers sooner than max_rate {RATE} allows: {early[:5]}")

    h.section("the waits are counted and logged")
    text = h.http_request(f"unix:{sock}", "/metrics")[2].decode()
    waits = [int(line.split()[1]) for line in text.splitlines()
             if line.startswith("lbagent_http_rate_waits_total ")]
    print(f"   lbagent_http_rate_waits_total {waits}", flush=True)
    h.expect(len(waits) == 1 and waits[0] >= 1, f"the waits counted: {waits}")
    logged = lb.log_since(mark).count("[http] max_rate (10)")
    h.expect_equal(logged, 1, "warnings about the rate (at most one per 10 s)")
    lb.stop(expect_rc=0)


h.run(main)
