#!/usr/bin/python3
"""metrics_flood: what a flood of public /metrics scrapes costs agent checks.

Starts lbagent (LBAGENT, or build/lbagent) with SERVICES services on
loopback, then measures one checker's agent-check latency (connect, read
the line, close; one at a time) for DURATION_S without load, and again
while CLIENTS connections keep GET /metrics in flight (a process of its
own, closed loop: each reply read, the next request sent at once).
Prints p50/p99 of both and their ratio, and the scrapes per second:

    metrics_flood: quiet p50_ms=.. p99_ms=.. | flood p50_ms=.. p99_ms=.. \
        ratio_p99=.. scrapes_per_s=..

Usage: metrics_flood.py [--services 200] [--clients 256] [--duration 10]
The target (issue 30): p99 under the flood at most 1.5 times the quiet one.
"""

import argparse
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


AGENT_PORT = free_port()
HTTP_PORT = free_port()


def config(d, services):
    lines = ["[agent]", f"listen = 127.0.0.1:{AGENT_PORT}", f"state_dir = {d}/state",
             "", "[http]", f"listen = 127.0.0.1:{HTTP_PORT}", "max_connections = 512", ""]
    with open(f"{d}/ok", "w") as f:
        f.write("ok\n")
    for i in range(services):
        lines += [f"[probe p{i}]", "type = file", f"path = {d}/ok", "interval = 2s", "timeout = 1s", "",
                  f"[service s{i}]", f"probes = p{i}", ""]
    os.makedirs(f"{d}/state")
    path = f"{d}/lbagent.conf"
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def check_once():
    t0 = time.perf_counter()
    s = socket.create_connection(("127.0.0.1", AGENT_PORT), timeout=5)
    s.sendall(b"s0\n")     # agent-send text, as HAProxy's for one service
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(512)
        if not chunk:
            break
        data += chunk
    s.close()
    return (time.perf_counter() - t0) * 1000.0


def checker(duration_s):
    lat = []
    end = time.monotonic() + duration_s
    while time.monotonic() < end:
        lat.append(check_once())
        time.sleep(0.002)
    lat.sort()
    return lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))], len(lat)


def flood(clients, duration_s):
    """Child: clients connections, each GET /metrics again once answered."""
    sel = selectors.DefaultSelector()
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    done = 0

    def start():
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", HTTP_PORT))
        sel.register(s, selectors.EVENT_WRITE, [False])

    for _ in range(clients):
        start()
    end = time.monotonic() + duration_s
    while time.monotonic() < end:
        for key, ev in sel.select(0.5):
            s, sent = key.fileobj, key.data
            if not sent[0]:
                try:
                    s.send(req)
                except OSError:
                    sel.unregister(s)
                    s.close()
                    start()
                    continue
                sent[0] = True
                sel.modify(s, selectors.EVENT_READ, sent)
                continue
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                s.close()
                done += 1
                start()
    print(done, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--services", type=int, default=200)
    ap.add_argument("--clients", type=int, default=256)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--flood-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.flood_child:
        global HTTP_PORT
        HTTP_PORT = a.port
        flood(a.clients, a.duration)
        return
    exe = os.environ.get("LBAGENT", os.path.join(os.path.dirname(__file__),
                                                 "../../build/lbagent"))
    d = tempfile.mkdtemp(prefix="metrics_flood.")
    proc = subprocess.Popen([exe, "-f", config(d, a.services)],
                            stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
    try:
        for _ in range(100):
            try:
                check_once()
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit("lbagent did not start:\n" + open(f"{d}/log").read()[-2000:])
        q50, q99, qn = checker(a.duration)
        child = subprocess.Popen([sys.executable, __file__, "--flood-child", "--clients",
                                  str(a.clients), "--duration", str(a.duration + 1),
                                  "--port", str(HTTP_PORT)],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        f50, f99, fn = checker(a.duration)
        scrapes = int(child.communicate()[0].strip() or 0)
        print(f"metrics_flood: quiet p50_ms={q50:.3f} p99_ms={q99:.3f} ({qn} checks) | "
              f"flood p50_ms={f50:.3f} p99_ms={f99:.3f} ({fn} checks) "
              f"ratio_p99={f99 / q99:.2f} scrapes_per_s={scrapes / (a.duration + 1):.0f}",
              flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
