"""A node's application server with a fixed service capacity, for the
capacity scenarios (tests/qualify/capacity.py). Run with /usr/bin/python3:

    capapp.py --name n1 --capacity 120 --workers 4 --port PORT

It completes at most CAPACITY requests a second: WORKERS workers, each
request holding one for WORKERS / CAPACITY seconds; the excess waits in
one FIFO queue (an M/D/K server). Plain HTTP/1.1 on loopback, keep-alive
as HAProxy asks:

  GET /work          served by a worker; 200 with X-Node: NAME
  GET /alive         200 at once (HAProxy's own check)
  GET /health        200 at once (lbagent's probe)
  GET /load          the ORCA-style load report, JSON:
                     {"utilization": busy fraction of the workers over
                      the last 1 s, "qps": requests completed in the last
                      1 s, "latency_ms": their mean latency (queue and
                      service), "inflight": queued + in service,
                      "capacity": CAPACITY, "completed": since start,
                      "busy_s": worker-seconds busy since start}
                     503 while reporting is off (a fault)
  GET /counters      the same, always (the harness reads it)
  GET /set?capacity=N     the capacity from now on (requests already in
                          service keep theirs); &report=on|off

One process, one event loop, no threads: the service time is an
asyncio sleep, so the capacity is the model's, not the machine's."""

import argparse
import asyncio
import collections
import json
import os
import sys
import time
import urllib.parse

WINDOW_S = 1.0


class Model:
    def __init__(self, name, capacity, workers):
        self.name = name
        self.capacity = float(capacity)
        self.workers = workers
        self.free = workers
        self.queue = collections.deque()    # futures waiting for a worker
        self.busy = {}                      # token -> service start
        self.done = collections.deque()     # (end, start_busy, latency_s)
        self.completed = 0
        self.busy_closed_s = 0.0
        self.report = True

    def service_s(self):
        return self.workers / self.capacity

    async def serve(self):
        t0 = time.monotonic()
        if self.free > 0 and not self.queue:
            self.free -= 1
        else:
            fut = asyncio.get_running_loop().create_future()
            self.queue.append(fut)
            await fut                       # a worker handed over
        token = object()
        start = time.monotonic()
        self.busy[token] = start
        try:
            await asyncio.sleep(self.service_s())
        finally:
            end = time.monotonic()
            del self.busy[token]
            self.busy_closed_s += end - start
            self.completed += 1
            self.done.append((end, start, end - t0))
            self._release()

    def _release(self):
        while self.queue:
            fut = self.queue.popleft()
            if not fut.done():
                fut.set_result(None)        # the worker passes on
                return
        self.free += 1

    def load(self):
        now = time.monotonic()
        lo = now - WINDOW_S
        while self.done and self.done[0][0] < now - 2 * WINDOW_S - 60 * self.service_s():
            self.done.popleft()
        busy = 0.0
        n = 0
        lat = 0.0
        for end, start, latency in self.done:
            if end >= lo:
                n += 1
                lat += latency
            busy += max(0.0, end - max(start, lo))
        for start in self.busy.values():
            busy += now - max(start, lo)
        busy_now = sum(now - s for s in self.busy.values())
        return {"utilization": round(min(1.0, busy / (WINDOW_S * self.workers)), 4),
                "qps": round(n / WINDOW_S, 2),
                "latency_ms": round(lat * 1000.0 / n, 2) if n else None,
                "inflight": len(self.busy) + len(self.queue),
                "capacity": self.capacity, "workers": self.workers,
                "completed": self.completed,
                "busy_s": round(self.busy_closed_s + busy_now, 4)}


async def read_request(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = (lines[0].split(" ") + ["", ""])[:3]
    headers = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return method, target, version, headers


def response(status, body, name, close, ctype="text/plain"):
    reason = {200: "OK", 404: "Not Found", 503: "Service Unavailable",
              400: "Bad Request"}.get(status, "OK")
    data = body.encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(data)}\r\nX-Node: {name}\r\n"
            f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n")
    return head.encode() + data


async def handle(model, reader, writer):
    try:
        while True:
            try:
                method, target, version, headers = await read_request(reader)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    ConnectionError):
                return
            close = headers.get("connection", "").lower() == "close" or version == "HTTP/1.0"
            url = urllib.parse.urlsplit(target)
            status, body, ctype = route(model, url)
            if url.path == "/work":
                await model.serve()
            writer.write(response(status, body, model.name, close, ctype))
            await writer.drain()
            if close:
                return
    except ConnectionError:
        pass
    finally:
        try:
            writer.close()
        except Exception:  # noqa: BLE001 - closing
            pass


def route(model, url):
    if url.path == "/work":
        return 200, f"{model.name}\n", "text/plain"
    if url.path in ("/alive", "/health"):
        return 200, "ok\n", "text/plain"
    if url.path == "/counters":                 # the harness's own reading
        return 200, json.dumps(model.load()) + "\n", "application/json"
    if url.path == "/load":
        if not model.report:
            return 503, "no report\n", "text/plain"
        return 200, json.dumps(model.load()) + "\n", "application/json"
    if url.path == "/set":
        q = urllib.parse.parse_qs(url.query)
        if "capacity" in q:
            model.capacity = float(q["capacity"][0])
        if "report" in q:
            model.report = q["report"][0] == "on"
        return 200, json.dumps({"capacity": model.capacity, "report": model.report}) + "\n", \
            "application/json"
    return 404, "no such path\n", "text/plain"


async def main_async(args):
    model = Model(args.name, args.capacity, args.workers)
    server = await asyncio.start_server(lambda r, w: handle(model, r, w), "127.0.0.1",
                                        args.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.rename(tmp, args.port_file)
    async with server:
        await server.serve_forever()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--capacity", type=float, required=True, help="requests a second")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", default=None, help="where to write the port bound")
    args = ap.parse_args()
    try:
        asyncio.run(main_async(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
