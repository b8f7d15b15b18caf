"""A big statistics CSV (issue 30): a load balancer with thousands of
backends answers 8 MB every round; lbagent reads it as it comes, keeps only
its backend's rows, and stays bounded. A real HAProxy checks the node
(backend `be`, server s1) and serves its stats page; a test server on
loopback serves lbagent that page's real header and `be` rows, after
about 8 MB of rows of other backends (the real rows of `be`, renamed),
every [peers] interval (200 ms), while the detail is read so that rounds
go on.

1. while the big CSV is served, round after round, the agent port keeps
   answering (replies counted, each well-formed; no timing bound), the
   detail shows s1 as HAProxy itself shows it (status, weight), and the
   daemon's peak memory (VmHWM) grows by less than the CSV's size: it
   never holds the answer whole;
2. over a limit, the source is reported failed in the detail, never read
   in part: 9 MB (over 8 MiB), one line longer than 64 KiB, more than
   8192 rows of the backend read."""

import csv
import http.server
import io
import re
import socketserver
import sys
import threading
import time
import urllib.request

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

TOKEN = "big-stats-test-token"
BIG_BYTES = 8 * 1000 * 1000
INTERVAL_MS = 200
ROUNDS = 10          # big answers served in scenario 1
CHUNK = 64 * 1024


class StatsServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Stats:
    """Serves self.body at any path; counts the answers served whole."""

    def __init__(self):
        self.body = b""
        self.served = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = owner.body
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    for i in range(0, len(body), CHUNK):
                        self.wfile.write(body[i:i + CHUNK])
                except OSError:
                    return     # lbagent stopped reading: over a limit
                with owner.lock:
                    owner.served += 1

            def log_message(self, *args):
                pass

        self.srv = StatsServer(("127.0.0.1", 0), Handler)
        self.port = self.srv.server_address[1]
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        h.env().register(self)

    def url(self):
        return f"http://127.0.0.1:{self.port}/stats;csv"

    def count(self):
        with self.lock:
            return self.served

    def close(self):
        if self.srv is not None:
            self.srv.shutdown()
            self.srv.server_close()
            self.srv = None

    def diagnostics(self):
        return f"== stats server: {self.served} answers served whole"


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise h.TestFailure("no VmHWM in /proc/PID/status")


def detail(port):
    status, doc = h.http_json(port, "/status?fresh=1", {"Authorization": f"Bearer {TOKEN}"})
    h.expect_equal(status, 200, "detail /status code")
    return doc


def lb_row(doc):
    rows = doc.get("haproxy")
    h.expect(isinstance(rows, list) and len(rows) == 1,
             f"one load balancer in the detail: {rows}")
    return rows[0]


def this_node(row):
    for t in row.get("this_node") or []:
        return t
    return {}


def big_csv(real, total, *, extra_line=b"", be_rows=None):
    """The real CSV's header, then rows of other backends (be's rows
    renamed) up to about total bytes, then be's real rows (or be_rows)."""
    lines = real.split(b"\n")
    head = lines[0] + b"\n"
    be = [ln + b"\n" for ln in lines[1:] if ln.startswith(b"be,")]
    h.expect(be, f"backend be in the real CSV: {real[:300]!r}")
    tail = b"".join(be_rows if be_rows is not None else be)
    parts, size, i = [head, extra_line], len(head) + len(extra_line) + len(tail), 0
    while size < total:
        name = b"filler%05d" % i
        block = b"".join(name + ln[2:] for ln in be)
        parts.append(block)
        size += len(block)
        i += 1
    parts.append(tail)
    return b"".join(parts), i


def main():
    h.require_haproxy()
    stats = Stats()
    token = h.env().path(h.env().unique_name("token"))
    h.write_atomic(token, TOKEN + "\n", mode=0o600)
    http_port = h.free_port()
    lb = h.Lbagent({
        "agent": {"node_id": "s1"},
        "http": {"listen": f"127.0.0.1:{http_port}", "token_file": token},
        "peers": {"interval": f"{INTERVAL_MS}ms", "timeout": "3s"},
        "haproxy": {"sources": [stats.url()], "backend": "be"},
    }, asan_quarantine_mb=1)    # under ASan: freed memory reused, as without
    hap = h.Haproxy([lb], stats_http=True)
    h.wait_all_status([hap], "UP", h.startup_bound_s() + h.marker_bound_s(),
                      "s1 UP in HAProxy")
    with urllib.request.urlopen(hap.stats_csv_url(), timeout=10) as r:
        real = r.read()
    rows = csv.DictReader(io.StringIO(real.decode()[2:]))
    real_s1 = [r for r in rows if r["pxname"] == "be" and r["svname"] == "s1"][0]

    h.section("a small answer first: the baseline")
    stats.body = real
    h.wait_until(lambda: this_node(lb_row(detail(http_port))).get("status") == "UP",
                 h.startup_bound_s(), "s1 UP in the detail from the real CSV",
                 describe=lambda _: lb_row(detail(http_port)))
    for _ in range(5):
        detail(http_port)
    base_kb = vm_hwm_kb(lb.pid)

    h.section(f"{BIG_BYTES} bytes every round: answers go on, memory bounded")
    body, fillers = big_csv(real, BIG_BYTES)
    h.expect(len(body) <= 8 * 1024 * 1024 and len(body) >= BIG_BYTES,
             f"the big CSV is {len(body)} bytes")
    print(f"big CSV: {len(body)} bytes, {fillers} other backends", flush=True)
    stats.body = body
    start = stats.count()
    replies, bad, stop = [0], [], threading.Event()

    def checker():
        while not stop.is_set():
            rep = h.ask(lb.port)
            if h.well_formed(rep):
                replies[0] += 1
            else:
                bad.append(rep)

    t = threading.Thread(target=checker, daemon=True)
    t.start()
    seen = None
    deadline = time.monotonic() + 60 * h._time_scale()
    while stats.count() - start < ROUNDS and time.monotonic() < deadline:
        seen = lb_row(detail(http_port))   # keeps rounds going
        time.sleep(0.1)
    served = stats.count() - start
    at_end = replies[0]
    stop.set()
    t.join(10)
    h.expect(served >= ROUNDS, f"{ROUNDS} big answers served (got {served})")
    h.expect(not bad, f"replies well-formed: {bad[:3]}")
    h.expect(at_end >= ROUNDS, f"the agent port answered while the big CSV was "
             f"served: {at_end} replies over {served} answers")
    row = lb_row(detail(http_port))
    me = this_node(row)
    h.expect(row.get("ok") is True and me.get("status") == real_s1["status"] and
             str(me.get("weight")) == real_s1["weight"],
             f"s1 read from the end of the big CSV as HAProxy shows it "
             f"({real_s1['status']}, weight {real_s1['weight']}): {row}")
    grown_kb = vm_hwm_kb(lb.pid) - base_kb
    print(f"VmHWM grew by {grown_kb} kB over {served} big answers; "
          f"{at_end} agent replies", flush=True)
    # Holding the answer once, whole, would grow it by the CSV's size.
    # Under AddressSanitizer the peak is its own (shadow memory, redzones,
    # quarantine, per-size-class regions: 2.3 MB here with gcc 12's, 9 MB
    # with gcc 15's for the same run), so the bound is the plain build's;
    # everything else is checked in both.
    if h.asan_enabled():
        print("under ASan: the peak memory bound is left to the plain build",
              flush=True)
    else:
        h.expect(grown_kb * 1024 < len(body),
                 f"peak memory grew by {grown_kb} kB, less than the CSV "
                 f"({len(body) // 1024} kB)")

    def fails_with(text, what):
        h.wait_until(lambda: lb_row(detail(http_port)), h.startup_bound_s(),
                     f"the source failed: {what}",
                     ok=lambda r: r.get("ok") is False and text in (r.get("error") or ""),
                     describe=lambda r: {k: r.get(k) for k in ("ok", "error", "this_node")})
        stats.body = real
        h.wait_until(lambda: lb_row(detail(http_port)), h.startup_bound_s(),
                     "the source answers again", ok=lambda r: r.get("ok") is True)

    h.section("over a limit: the source failed, never read in part")
    stats.body, _ = big_csv(real, 9 * 1000 * 1000)
    fails_with("larger than 8 MiB", "9 MB")
    line = b"zz,x," + b"y" * (70 * 1024) + b"\n"
    stats.body, _ = big_csv(real, 0, extra_line=line)
    fails_with("longer than 64 KiB", "a line of 70 KiB")
    first = [ln for ln in real.split(b"\n") if ln.startswith(b"be,s1,")][0]
    many = [re.sub(rb"^be,s1,", b"be,n%d," % i, first) + b"\n" for i in range(8200)]
    stats.body, _ = big_csv(real, 0, be_rows=many + [first + b"\n"])
    fails_with("more than 8192 rows", "8201 rows of be")
    stats.close()


if __name__ == "__main__":
    h.run(main)
