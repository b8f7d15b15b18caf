"""The loop-latency rows of scripts/bench-full: the agent port measured
while one dependency misbehaves, against the same lbagent with that
dependency well-behaved, in alternating rounds of one run (the hostile
rows); and one checker beside 10,000 idle connections against the floor
that waits, with the floor against itself for the noise band (the idle
row). scripts/bench-full imports it and hands over its own helpers (bf:
processes, servers, fixtures, /proc readers), so that every process
started here is stopped with the rest. docs/benchmarks.md explains each
row and what it is judged against."""

import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "hostile_peers.py")
PY = "/usr/bin/python3"

CHECK_RATE = 500          # agent checks a second, each on its own connection
CHECK_WARMUP_S = 0.5
WARM_S = 2.0              # from lbagent's start to the checks: its probes have run
PROBE_INTERVAL = "1s"     # the postgres probes: a run a second
PROBE_TIMEOUT = "500ms"
STALL_S = 10              # pg_sleep, far past the probe's timeout
CSV_BYTES = 8000000       # 8 MB, under the 8 MiB that lbagent takes at most
CSV_INTERVAL = "200ms"    # [peers] interval and steady_interval: a round every 200 ms
FLOOD_CLIENTS = 256
FLOOD_SOURCES = [f"127.0.0.{n}" for n in range(10, 18)]
SERVICES = 200
TARGET_RATIO = 1.5
TARGET_MAX_MS = 50
TARGET_HWM_KIB = 32 * 1024
TARGET_IDLE = 1.2
TARGET_AFTER_KIB = 4 * 1024
AFTER_IDLE_S = 60

ROWS = ("pg-error", "pg-rows", "pg-stall", "csv", "metrics")
DESCR = {
    "pg-error": "PostgreSQL answering the query with a 200 MB ErrorResponse (fake server)",
    "pg-rows": "PostgreSQL returning rows without end",
    "pg-stall": f"PostgreSQL stalling the query (pg_sleep({STALL_S}), timeout {PROBE_TIMEOUT})",
    "csv": f"HAProxy stats CSV of 8 MB, a round every {CSV_INTERVAL}",
    "metrics": f"{FLOOD_CLIENTS} clients on public /metrics, {SERVICES} services; "
               "well-behaved: one scrape a second",
}


def peer(bf, *args):
    return bf.spawn([PY, PEERS] + [str(a) for a in args], stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)


def stop_peer(bf, p):
    """SIGTERM; what it printed (its counts), if anything."""
    if p.poll() is None:
        p.terminate()
    try:
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    if p in bf.procs:
        bf.procs.remove(p)
    return dict(kv.split("=", 1) for kv in out.split()) if out else {}


def wait_port(port, p, what):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise Exception(f"{what} exited: {p.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise Exception(f"{what} did not listen on {port}")


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# ---- a real PostgreSQL, when installed ---------------------------------

class RealPg:
    def __init__(self, bf):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        self.bin = os.path.dirname(found[-1])
        self.user = pwd.getpwnam("postgres")
        os.chmod(bf.work, 0o711)
        self.dir = os.path.join(bf.work, "pg")
        os.makedirs(self.dir)
        os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        self.data = os.path.join(self.dir, "data")
        self.port = bf.free_port()
        self.run("initdb", "-N", "-A", "trust", "-U", "postgres", "-D", self.data)
        self.run("pg_ctl", "start", "-w", "-t", "60", "-D", self.data,
                 "-l", os.path.join(self.dir, "log"), "-o",
                 f"-c port={self.port} -c listen_addresses=127.0.0.1 "
                 f"-c unix_socket_directories={self.dir} -c fsync=off "
                 "-c max_connections=100 -c shared_buffers=16MB")

    def run(self, prog, *args):
        r = subprocess.run(["setpriv", f"--reuid={self.user.pw_uid}",
                            f"--regid={self.user.pw_gid}", "--clear-groups",
                            os.path.join(self.bin, prog), *args], cwd=self.dir,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        if r.returncode:
            raise Exception(f"{prog}: {r.stdout.decode(errors='replace')}")

    def close(self):
        try:
            self.run("pg_ctl", "stop", "-m", "immediate", "-D", self.data)
        except Exception:  # noqa: BLE001 - cleanup goes on
            pass


def real_pg_available():
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) and shutil.which("setpriv")


# ---- lbagent's configuration for each row --------------------------------

def head(bf, name, port, http=None):
    state = os.path.join(bf.work, f"state-{name}")
    os.makedirs(state, exist_ok=True)
    http = http or f"unix:{bf.work}/{name}.sock"
    return (f"[agent]\nlisten = 127.0.0.1:{port}\nstate_dir = {state}\nnode_id = n1\n"
            f"max_connections = 4096\n\n[http]\nlisten = {http}\n\n")


def pg_probe(port, query):
    return (f"[probe db]\ntype = postgres\nconninfo = host=127.0.0.1 port={port} "
            "user=postgres dbname=postgres sslmode=disable gssencmode=disable\n"
            f"query = {query}\ninterval = {PROBE_INTERVAL}\ntimeout = {PROBE_TIMEOUT}\n"
            "on_warn = ignore\non_crit = ignore\n")


def file_probe(bf, name):
    path = os.path.join(bf.work, f"f-{name}")
    open(path, "a").close()
    return f"[probe {name}]\ntype = file\npath = {path}\n"


class Row:
    """One hostile row: its fixtures, and for each variant the lbagent
    configuration, the side load and what the agent checks send."""

    def __init__(self, bf, name, real_pg):
        self.bf, self.name, self.real_pg = bf, name, real_pg
        self.fixtures, self.ports, self.send = [], {}, ""
        self.http_port = None
        if name.startswith("pg-"):
            if name == "pg-error" or real_pg is None:
                mode = {"pg-error": "error", "pg-rows": "rows", "pg-stall": "stall"}[name]
                self.ports["hostile"] = self.fake_pg(mode)
                self.query = {"hostile": "SELECT 1", "well": "SELECT 1"}
            else:
                self.ports["hostile"] = real_pg.port
                # generate_series in a select list streams its rows (in
                # FROM it would make all 10 million before the first)
                self.query = {"hostile": ("SELECT repeat('x', 1000) FROM "
                                          "(SELECT generate_series(1, 10000000)) AS s"
                                          if name == "pg-rows" else
                                          f"SELECT pg_sleep({STALL_S})"),
                              "well": "SELECT 1"}
            self.ports["well"] = self.fake_pg("ok") if real_pg is None or \
                name == "pg-error" else real_pg.port
            self.kind = ("fake server" if self.ports["hostile"] != getattr(real_pg, "port", 0)
                         else "real PostgreSQL")
        elif name == "csv":
            for v, size in (("hostile", CSV_BYTES), ("well", 0)):
                port = bf.free_port()
                p = peer(bf, "csv", port, size, "n1")
                wait_port(port, p, "the stats server")
                self.fixtures.append(p)
                self.ports[v] = port
                self.csv_procs = getattr(self, "csv_procs", {})
                self.csv_procs[v] = p
            self.kind = "HTTP stats server"
        elif name == "metrics":
            self.send = "s0\n"
            self.kind = "HTTP clients"

    def fake_pg(self, mode):
        port = self.bf.free_port()
        p = peer(self.bf, "pg", port, mode)
        wait_port(port, p, f"the fake PostgreSQL ({mode})")
        self.fixtures.append(p)
        return port

    def config(self, variant, sname, port):
        bf = self.bf
        if self.name.startswith("pg-"):
            return head(bf, sname, port) + pg_probe(self.ports[variant], self.query[variant])
        if self.name == "csv":
            return (head(bf, sname, port) + file_probe(bf, "f") +
                    f"\n[peers]\ninterval = {CSV_INTERVAL}\nsteady_interval = {CSV_INTERVAL}\n"
                    "\n[haproxy]\n"
                    f"sources = http://127.0.0.1:{self.ports[variant]}/stats;csv\n"
                    "backend = be\nserver = n1\n")
        self.http_port = bf.free_port()
        out = [head(bf, sname, port, f"127.0.0.1:{self.http_port}"), file_probe(bf, "dflt")]
        for i in range(SERVICES):
            out.append(file_probe(bf, f"f{i}") + f"\n[service s{i}]\nprobes = f{i}\n")
        return "\n".join(out)

    def side_load(self, variant, server):
        """What runs beside the checks: a thread reading the /status detail
        (the csv row: so that the stats rounds go on), or the clients."""
        if self.name == "csv":
            stop = threading.Event()

            def reader():
                while not stop.wait(0 if not reader.n else 2.0):
                    reader.n += 1
                    try:
                        self.bf.probes_seen(server.name)
                    except Exception:  # noqa: BLE001 - the next read tries again
                        pass
            reader.n = 0
            t = threading.Thread(target=reader, daemon=True)
            t.start()
            return lambda: (stop.set(), t.join(10), {})[-1]
        if self.name == "metrics":
            # well-behaved: one scraper, a scrape a second
            p = peer(self.bf, "flood", self.http_port,
                     FLOOD_CLIENTS if variant == "hostile" else 1, "/metrics",
                     ",".join(FLOOD_SOURCES), 0 if variant == "hostile" else 1)
            return lambda: stop_peer(self.bf, p)
        return lambda: {}

    def close(self):
        for p in self.fixtures:
            out = stop_peer(self.bf, p)
            for v, q in getattr(self, "csv_procs", {}).items():
                if q is p:
                    self.csv_requests = getattr(self, "csv_requests", {})
                    self.csv_requests[v] = int(out.get("requests", 0))


def lb_read(bf, name):
    """Whether the load balancer's CSV was read (this node found), or why not."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(os.path.join(bf.work, f"{name}.sock"))
        s.sendall(b"GET /status HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        doc = json.loads(data.split(b"\r\n\r\n", 1)[1])
        lb = doc["haproxy"][0]
        return "read" if lb.get("ok") else f"not read: {lb.get('error')}"
    except (OSError, ValueError, KeyError, IndexError) as e:
        return f"status unreadable: {e}"
    finally:
        s.close()


def measure(bf, row, variant, duration_s):
    sname = f"{row.name}-{variant}"
    conf = os.path.join(bf.work, f"{sname}.conf")

    def args_for_port(p):
        with open(conf, "w") as f:
            f.write(row.config(variant, sname, p))
        return [bf.tools["lbagent"], "-f", conf]
    server = bf.Server(sname, args_for_port)
    server.start()
    time.sleep(WARM_S)
    side_stop = row.side_load(variant, server)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.wait(0.1):
            try:
                peak[0] = max(peak[0], status_kib(server.pid, "RssAnon"))
            except OSError:
                return
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    p = peer(bf, "check", server.port, CHECK_RATE, duration_s, CHECK_WARMUP_S, row.send)
    try:
        out, err = p.communicate(timeout=duration_s + 60)
    finally:
        done.set()
        sampler.join()
    bf.procs.remove(p)
    if p.returncode:
        raise bf.Failed(f"the checker failed: {err}")
    r = json.loads(out)
    server.alive()
    r["hwm"] = status_kib(server.pid, "VmHWM")
    r["anon_peak"] = peak[0]
    r["side"] = side_stop()
    if row.name == "csv":
        r["lb_read"] = lb_read(bf, sname)
    server.stop()
    return r


def raise_priority(bf):
    """nice -10 for the bench and all it starts (the dependencies, lbagent,
    the checker): other work on a shared machine then moves the figures
    less, and both variants alike. Left as it is when not allowed."""
    try:
        os.nice(-10)
    except OSError:
        bf.log("could not raise the priority (nice -10); measuring at the usual one")


def hostile(bf, a):
    raise_priority(bf)
    names = [n for n in (a.rows.split(",") if a.rows else ROWS)]
    for n in names:
        if n not in ROWS:
            raise bf.Failed(f"no hostile row {n} (rows: {', '.join(ROWS)})")
    real_pg = None
    if any(n in ("pg-rows", "pg-stall") for n in names) and real_pg_available():
        bf.log("starting a PostgreSQL server for the pg-rows and pg-stall rows")
        real_pg = RealPg(bf)
    results = {}
    try:
        for n in names:
            t0 = time.monotonic()
            row = Row(bf, n, real_pg)
            res = {"hostile": [], "well": []}
            try:
                for r in range(a.hostile_rounds):
                    order = ("hostile", "well") if r % 2 == 0 else ("well", "hostile")
                    for v in order:
                        res[v].append(measure(bf, row, v, a.hostile_duration))
            finally:
                row.close()
            results[n] = (row, res)
            bf.log(f"row {n} done in {time.monotonic() - t0:.0f}s")
    finally:
        if real_pg:
            real_pg.close()
    report(bf, a, names, results)


def below(x, target):
    return "PASS" if x == x and x < target else "MISS"


def ms(us):
    return "nan" if us != us else f"{us / 1000:.2f}"


def report(bf, a, names, results):
    print()
    print(f"machine: {bf.machine()}")
    print(f"hostile rows: {a.hostile_rounds} rounds, hostile and well-behaved in turn, "
          f"{a.hostile_duration:g}s of agent checks each at {CHECK_RATE} a second (each "
          "its own connection, at its time whatever the others do); latencies in ms "
          "from each check's planned start; p99 and max over every round's checks, "
          "peak RSS (VmHWM) and RssAnon the highest of any round")
    print()
    print(f"{'row':<9} {'variant':<8} {'checks':>7} {'errors':>6} {'p50':>8} {'p99':>8} "
          f"{'max':>9} {'peak RSS':>9} {'RssAnon':>8}  per-round p99")
    summary = []
    for n in names:
        row, res = results[n]
        agg = {}
        for v in ("hostile", "well"):
            rs = res[v]
            p99s = [x["p99_us"] for x in rs]
            m = {"n": sum(x["n"] for x in rs), "errors": sum(x["errors"] for x in rs),
                 "p50": bf.median([x["p50_us"] for x in rs]), "p99": bf.median(p99s),
                 "max": max(x["max_us"] for x in rs), "hwm": max(x["hwm"] for x in rs),
                 "anon": max(x["anon_peak"] for x in rs)}
            agg[v] = m
            print(f"{n:<9} {v:<8} {m['n']:>7} {m['errors']:>6} {ms(m['p50']):>8} "
                  f"{ms(m['p99']):>8} {ms(m['max']):>9} {m['hwm'] / 1024:>7.1f}MB "
                  f"{m['anon'] / 1024:>6.1f}MB  {' '.join(ms(x) for x in p99s)}")
        extra = ""
        if n == "csv":
            rq = getattr(row, "csv_requests", {})
            extra = "; stats requests, CSV at the end of each round: " + "; ".join(
                f"{v} {rq.get(v, 0)}, " + ", ".join(x.get("lb_read", "?") for x in res[v])
                for v in ("hostile", "well"))
        if n == "metrics":
            side = {v: [x["side"] for x in res[v]] for v in res}
            rq = {v: sum(int(s.get("requests", 0)) for s in side[v]) for v in side}
            er = {v: sum(int(s.get("errors", 0)) for s in side[v]) for v in side}
            extra = (f"; /metrics answers: {rq['hostile']} to the {FLOOD_CLIENTS} clients "
                     f"({er['hostile']} failed), {rq['well']} to the one scraper "
                     f"({er['well']} failed)")
        print(f"{'':<9} ({DESCR[n]}; {row.kind}{extra})")
        summary.append((n, agg))
    print("(p99: the median of the rounds' p99s; max: the highest of any check)")
    print()
    print(f"{'row':<9} {'p99 hostile':>11} {'p99 well':>9} {'ratio':>13} {'max reply':>16} "
          f"{'peak RSS':>16}")
    for n, agg in summary:
        h, w = agg["hostile"], agg["well"]
        r = bf.ratio(h["p99"], w["p99"])
        mx = max(h["max"], w["max"])
        print(f"{n:<9} {ms(h['p99']):>11} {ms(w['p99']):>9} {r:>7.2f} "
              f"{bf.verdict(r, 'le', TARGET_RATIO):>5} {ms(h['max']):>9} "
              f"{below(mx / 1000, TARGET_MAX_MS):>6} "
              f"{h['hwm'] / 1024:>7.1f}MB {bf.verdict(h['hwm'], 'le', TARGET_HWM_KIB):>6}")
    print(f"(targets: p99 hostile / well-behaved <= {TARGET_RATIO}; no reply, hostile or "
          f"well-behaved, later than {TARGET_MAX_MS} ms; peak RSS under the hostile "
          f"dependency <= {TARGET_HWM_KIB // 1024} MB)")


# ---- the idle row -------------------------------------------------------

def idle_row(bf, a):
    """1 checker beside IDLE idle connections: lbagent (the 20 probes)
    against the floor that waits, run twice a round (A and B) so that the
    floor against itself gives the band; then lbagent's RssAnon 60 s after
    the idle connections of its last round closed."""
    raise_priority(bf)
    tools, fx = bf.tools, bf.start_fixtures()
    names = ["waitA", "lb20", "waitB"]
    res = {n: [] for n in names}
    after = None
    for r in range(a.idle_rounds):
        order = names[r % 3:] + names[:r % 3]
        for n in order:
            if n == "lb20":
                s = bf.Server("lb20", lambda p: [tools["lbagent"], "-f",
                                                bf.lbagent_config("lb20", p, 20, True, fx)])
            else:
                s = bf.Server(n, lambda p: [tools["floor"], str(p), "wait"])
            s.start()
            holder = bf.Idle(tools, s, a.idle)
            res[n].append(bf.run_load(tools, s, 1, a.duration))
            holder.stop()
            if n == "lb20" and r == a.idle_rounds - 1:
                at_close = status_kib(s.pid, "RssAnon")
                bf.log(f"idle row: lbagent RssAnon {at_close} KiB as the idle connections "
                       f"closed; {AFTER_IDLE_S}s more")
                time.sleep(AFTER_IDLE_S)
                after = (at_close, status_kib(s.pid, "RssAnon"), status_kib(s.pid, "VmHWM"))
            s.stop()
        bf.log(f"idle row: round {r + 1}/{a.idle_rounds} done")
    print()
    print(f"idle row: 1 checker, {a.idle} idle connections, {a.idle_rounds} rounds of "
          f"{a.duration:g}s, the order turning; latencies in microseconds")
    print(f"{'server':<7} {'rps':>8} {'p50':>7} {'p99':>7} {'max':>8}  per-round p99")
    med = {}
    for n in names:
        rs = res[n]
        med[n] = {k: bf.median([x[k] for x in rs]) for k in ("rps", "p50_us", "p99_us", "max_us")}
        print(f"{n:<7} {bf.fmt(med[n]['rps']):>8} {bf.fmt(med[n]['p50_us']):>7} "
              f"{bf.fmt(med[n]['p99_us']):>7} {bf.fmt(med[n]['max_us']):>8}  "
              + " ".join(bf.fmt(x["p99_us"]) for x in rs))
    wait_p99 = bf.median([x["p99_us"] for x in res["waitA"] + res["waitB"]])
    selfr = [bf.ratio(x["p99_us"], y["p99_us"]) for x, y in zip(res["waitA"], res["waitB"])]
    selfr = [x for x in selfr if x == x]
    lo = min(selfr + [1 / x for x in selfr]) if selfr else float("nan")
    hi = max(selfr + [1 / x for x in selfr]) if selfr else float("nan")
    r = bf.ratio(med["lb20"]["p99_us"], wait_p99)
    ok = r == r and (r <= TARGET_IDLE or r <= hi)
    print(f"p99 lb20 / the floor that waits (A and B together) = {r:.3f}; "
          f"self-vs-self band (waitA / waitB, each round, both ways) "
          f"{lo:.3f} to {hi:.3f}: {'PASS' if ok else 'MISS'} "
          f"(target: within {TARGET_IDLE} of the floor, or inside the band)")
    if after:
        print(f"lb20 RssAnon: {after[0]} KiB as the idle connections closed, {after[1]} KiB "
              f"{AFTER_IDLE_S}s after: {below(after[1], TARGET_AFTER_KIB)} "
              f"(target < {TARGET_AFTER_KIB // 1024} MB); peak RSS (VmHWM) {after[2]} KiB")

