"""The client workload: a few threads sending requests through both
HAProxy frontends the whole time, each on a new connection (so each
request is balanced on its own), recording every request: when it
started, how long it took, its HTTP status or error, which node served it
(X-Node) and through which load balancer. Per load balancer, two threads
of short requests and one of long ones (several seconds), so a drain that
cuts in-flight requests shows."""

import http.client
import threading
import time

CLIENT_TIMEOUT_S = 20.0


class Request:
    __slots__ = ("lb", "kind", "start", "end", "status", "error", "node")

    def __init__(self, lb, kind, start):
        self.lb, self.kind, self.start = lb, kind, start
        self.end = None
        self.status = None
        self.error = None
        self.node = None

    @property
    def ok(self):
        return self.error is None and self.status == 200

    @property
    def duration(self):
        return None if self.end is None else self.end - self.start

    def as_dict(self, t0):
        return {"lb": self.lb, "kind": self.kind, "start_s": round(self.start - t0, 4),
                "duration_ms": None if self.end is None else round(self.duration * 1000, 1),
                "status": self.status, "error": self.error, "node": self.node}

    def describe(self, t0):
        what = self.error or f"HTTP {self.status}"
        d = "in flight" if self.end is None else f"{self.duration * 1000:.0f} ms"
        return (f"{self.kind} request via {self.lb} to {self.node or '?'} at "
                f"+{self.start - t0:.2f}s: {what} ({d})")


class Workload:
    def __init__(self, fe_ports, t, short_threads=2, long_threads=1):
        self.fe_ports = dict(fe_ports)
        self.t = t
        self.requests = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []
        self.short_threads = short_threads
        self.long_threads = long_threads

    def start(self):
        for lb, port in self.fe_ports.items():
            for i in range(self.short_threads):
                self._spawn(lb, port, "short", self.t.short_ms, 0.01)
            for i in range(self.long_threads):
                self._spawn(lb, port, "long", self.t.long_ms, 0.0)

    def _spawn(self, lb, port, kind, ms, pause_s):
        th = threading.Thread(target=self._loop, args=(lb, port, kind, ms, pause_s),
                              daemon=True, name=f"client-{lb}-{kind}")
        th.start()
        self._threads.append(th)

    def _loop(self, lb, port, kind, ms, pause_s):
        while not self._stop.is_set():
            r = Request(lb, kind, time.monotonic())
            with self._lock:
                self.requests.append(r)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT_S)
            try:
                conn.request("GET", f"/work?ms={ms}", headers={"Connection": "close"})
                resp = conn.getresponse()
                resp.read()
                r.status = resp.status
                r.node = resp.getheader("X-Node")
            except (OSError, http.client.HTTPException) as e:
                r.error = f"{type(e).__name__}: {e}"[:200]
            finally:
                conn.close()
                r.end = time.monotonic()
            # A failed request comes back at once: pausing longer after
            # one keeps the workload from spinning on a load balancer with
            # nothing to serve (and from starving the processes it tests).
            pause = pause_s if r.ok else max(pause_s, 0.05)
            if pause:
                self._stop.wait(pause)

    def stop(self):
        """Stops sending; the requests in flight finish (bounded)."""
        self._stop.set()
        for th in self._threads:
            th.join(timeout=CLIENT_TIMEOUT_S + 5)

    def snapshot(self):
        with self._lock:
            return list(self.requests)

    def in_flight(self, kind=None, node=None):
        """Requests started and not finished (node is known only at the end)."""
        return [r for r in self.snapshot() if r.end is None and
                (kind is None or r.kind == kind)]


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]
