#!/usr/bin/python3
"""The misbehaving (and well-behaved) dependencies of the hostile rows of
scripts/bench-full, and the checker that measures the agent port while
they act. Each runs as its own process, so that its CPU and its Python
lock are not the bench's:

  hostile_peers.py check PORT RATE SECONDS WARMUP [TEXT]
      agent checks at a fixed RATE a second, each on its own connection
      started at its time whatever the others do (as HAProxy's checks of
      many servers come: a late reply does not delay the next check);
      the latency is from the check's planned start to its reply's
      newline, so a stall of the loop counts for every check it held.
      TEXT (\n for a newline) is the agent-send text written first.
      Prints one JSON line: n, errors, p50_us, p99_us, max_us.
  hostile_peers.py pg PORT MODE
      a PostgreSQL server as far as the probe needs: SSL and GSS
      requests refused, any startup trusted (AuthenticationOk), SET
      answered; the probe's query answered by MODE: ok (one row, "1"),
      error (a 200 MB ErrorResponse), rows (rows of 1000 bytes without
      end) or stall (nothing, until the client goes).
  hostile_peers.py csv PORT BYTES SERVER
      an HTTP server of HAProxy's stats CSV: backend "be" with SERVER UP
      and as many other servers as make at most BYTES (at least 4 rows). Prints requests=N
      when stopped.
  hostile_peers.py flood PORT CLIENTS PATH SOURCES [PAUSE]
      CLIENTS HTTP clients on PORT, each asking PATH again the moment its
      answer is in (or PAUSE seconds after), from the comma-separated
      SOURCES addresses in turn.
      Prints requests=N bytes=B errors=E when stopped.

No mocks of lbagent: these stand in for what lbagent talks to."""

import errno
import json
import selectors
import signal
import socket
import struct
import sys
import threading
import time

# ---- the checker -------------------------------------------------------

CHECK_TIMEOUT_S = 2.0


def check(port, rate, duration_s, warmup_s, text=b""):
    addr = ("127.0.0.1", port)
    sel = selectors.DefaultSelector()
    period = 1.0 / rate
    t0 = time.monotonic() + 0.05
    measure_from = t0 + warmup_s
    end = measure_from + duration_s
    lat, errors, i = [], 0, 0
    live = {}

    def finish(s, ok):
        nonlocal errors
        sched = live.pop(s)[0]
        sel.unregister(s)
        s.close()
        if sched < measure_from:
            return
        took = time.monotonic() - sched
        lat.append(took)
        if not ok:
            errors += 1

    while True:
        now = time.monotonic()
        while t0 + i * period <= now and t0 + i * period < end:
            sched = t0 + i * period
            i += 1
            s = socket.socket()
            s.setblocking(False)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            e = s.connect_ex(addr)
            if e not in (0, errno.EINPROGRESS):
                s.close()
                if sched >= measure_from:
                    errors += 1
                continue
            live[s] = [sched, b""]
            sel.register(s, selectors.EVENT_WRITE if text else selectors.EVENT_READ)
        nxt = t0 + i * period
        if nxt >= end and not live:
            break
        wait = max(0.0, min(nxt - now, 0.02)) if nxt < end else 0.02
        for key, ev in sel.select(wait):
            s = key.fileobj
            try:
                if ev & selectors.EVENT_WRITE:
                    s.send(text)        # a few bytes: the socket takes them whole
                    sel.modify(s, selectors.EVENT_READ)
                    continue
                chunk = s.recv(512)
            except OSError:
                finish(s, False)
                continue
            live[s][1] += chunk
            if not chunk:
                finish(s, bool(live[s][1]))
            elif b"\n" in live[s][1]:
                finish(s, True)
        now = time.monotonic()
        for s in [s for s, v in live.items() if now - v[0] > CHECK_TIMEOUT_S]:
            finish(s, False)
    lat.sort()

    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1e6 if lat else float("nan")
    print(json.dumps({"n": len(lat), "errors": errors, "p50_us": pct(0.50),
                      "p99_us": pct(0.99), "max_us": lat[-1] * 1e6 if lat else float("nan")}),
          flush=True)


# ---- PostgreSQL as far as the probe goes ------------------------------

ERROR_BYTES = 200 * 1024 * 1024
ROW_BYTES = 1000


def msg(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body


def cstr(s):
    return s.encode() + b"\0"


def recv_exact(c, n):
    buf = b""
    while len(buf) < n:
        chunk = c.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


READY = msg(b"Z", b"I")
OK_ROW = (msg(b"T", struct.pack("!H", 1) + cstr("?column?") +
              struct.pack("!IHIhih", 0, 0, 23, 4, -1, 0)) +
          msg(b"D", struct.pack("!HI", 1, 1) + b"1") + msg(b"C", cstr("SELECT 1")) + READY)
ROWS_HEAD = msg(b"T", struct.pack("!H", 1) + cstr("repeat") +
                struct.pack("!IHIhih", 0, 0, 25, -1, -1, 0))
ROWS_CHUNK = msg(b"D", struct.pack("!HI", 1, ROW_BYTES) + b"x" * ROW_BYTES) * 1024
big_error = None


def pg_session(c, mode):
    while True:
        n, code = struct.unpack("!II", recv_exact(c, 8))
        if code in (80877103, 80877104):    # SSLRequest, GSSENCRequest
            c.sendall(b"N")
            continue
        if code == 80877102:                # CancelRequest: nothing to cancel here
            return
        recv_exact(c, n - 8)
        break
    c.sendall(msg(b"R", struct.pack("!I", 0)) +
              b"".join(msg(b"S", cstr(k) + cstr(v)) for k, v in (
                  ("server_version", "16.0"), ("client_encoding", "UTF8"),
                  ("standard_conforming_strings", "on"), ("integer_datetimes", "on"),
                  ("DateStyle", "ISO, MDY"))) +
              msg(b"K", struct.pack("!II", 1, 2)) + READY)
    while True:
        kind = recv_exact(c, 1)
        (n,) = struct.unpack("!I", recv_exact(c, 4))
        body = recv_exact(c, n - 4)
        if kind == b"X":
            return
        if kind != b"Q":
            continue
        q = body.rstrip(b"\0").decode(errors="replace").strip().lower()
        if q.startswith("set ") or mode == "ok":
            c.sendall(msg(b"C", cstr("SET")) + READY if q.startswith("set ") else OK_ROW)
        elif mode == "error":
            c.sendall(big_error)
        elif mode == "rows":
            c.sendall(ROWS_HEAD)
            while True:
                c.sendall(ROWS_CHUNK)
        else:                               # stall: until the client goes
            while c.recv(4096):
                pass
            return


def pg(port, mode):
    global big_error
    if mode == "error":
        big_error = (msg(b"E", b"SERROR\0VERROR\0CXX000\0M" + b"x" * ERROR_BYTES + b"\0\0") +
                     READY)
    srv = listener(port)

    def serve(c):
        try:
            pg_session(c, mode)
        except (EOFError, OSError):
            pass
        finally:
            c.close()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


# ---- HAProxy's stats CSV ---------------------------------------------

CSV_COLS = ("pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,"
            "eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,"
            "qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,"
            "check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,"
            "hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,"
            "comp_in,comp_out,comp_byp,comp_rsp,lastsess,last_chk,last_agt,qtime,ctime,"
            "rtime,ttime,agent_status,agent_code,agent_duration,check_desc,agent_desc,"
            "check_rise,check_fall,check_health,agent_rise,agent_fall,agent_health,addr,"
            "cookie,mode,algo,conn_rate,conn_rate_max,conn_tot,intercepted,dcon,dses,"
            "wrew,connect,reuse,cache_lookups,cache_hits,srv_icur,src_ilim,qtime_max,"
            "ctime_max,rtime_max,ttime_max,eint,idle_conn_cur,safe_conn_cur,"
            "used_conn_cur,need_conn_est,uweight,agg_server_status,agg_server_check_status,"
            "agg_check_status,-,").split(",")


def csv_row(px, sv, status, weight, kind):
    v = dict.fromkeys(CSV_COLS, "")
    v.update(pxname=px, svname=sv, qcur="0", scur="0", stot="12345", status=status,
             weight=str(weight), uweight=str(weight), act="1", bck="0", type=kind,
             check_status="L4OK", agent_status="L7OK", agent_desc="up",
             addr=f"10.{hash(sv) % 250}.0.1:80", mode="http", lastchg="600")
    return ",".join(v[c] for c in CSV_COLS[:-1]) + ",\n"


def csv_doc(size, server):
    out = ["# " + ",".join(CSV_COLS[:-1]) + ",\n",
           csv_row("fe", "FRONTEND", "OPEN", 0, "0"),
           csv_row("be", server, "UP", 100, "2"),
           csv_row("be", "other", "UP", 100, "2")]
    last = csv_row("be", "BACKEND", "UP", 200, "1")
    total, i = sum(map(len, out)) + len(last), 0
    while True:
        r = csv_row("be", f"filler{i:06d}", "UP" if i % 3 else "DRAIN", 100, "2")
        if total + len(r) > size:
            break
        out.append(r)
        total += len(r)
        i += 1
    out.append(last)
    return "".join(out).encode()


def csv(port, size, server):
    doc = csv_doc(size, server)
    head = (b"HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nConnection: close\r\n"
            b"Content-Length: " + str(len(doc)).encode() + b"\r\n\r\n")
    srv = listener(port)
    count = [0]
    stop_prints(lambda: f"requests={count[0]}")

    def serve(c):
        try:
            c.settimeout(10)
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = c.recv(4096)
                if not chunk:
                    return
                buf += chunk
            count[0] += 1
            c.sendall(head + doc)
        except OSError:
            pass
        finally:
            c.close()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


# ---- HTTP clients without pause --------------------------------------

def flood(port, clients, path, sources, pause_s=0.0):
    req = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").encode()
    sel = selectors.DefaultSelector()
    stats = {"requests": 0, "bytes": 0, "errors": 0}
    stop_prints(lambda: " ".join(f"{k}={v}" for k, v in stats.items()))
    nth = [0]

    def start():
        s = socket.socket()
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.bind((sources[nth[0] % len(sources)], 0))
        nth[0] += 1
        e = s.connect_ex(("127.0.0.1", port))
        if e not in (0, errno.EINPROGRESS):
            stats["errors"] += 1
            s.close()
            time.sleep(0.01)
            return
        sel.register(s, selectors.EVENT_WRITE, [False, 0, time.monotonic()])

    for _ in range(clients):
        start()
    due = []
    while True:
        now = time.monotonic()
        while due and due[0] <= now:
            due.pop(0)
            start()
        for key, _ in sel.select(0.1 if not due else max(0.0, min(0.1, due[0] - now))):
            s, d = key.fileobj, key.data
            try:
                if not d[0]:
                    s.sendall(req)
                    d[0] = True
                    sel.modify(s, selectors.EVENT_READ, d)
                    continue
                chunk = s.recv(262144)
            except OSError:
                chunk, d[1] = b"", -1
            if chunk:
                d[1] += len(chunk)
                continue
            sel.unregister(s)
            s.close()
            if d[1] > 0:
                stats["requests"] += 1
                stats["bytes"] += d[1]
            else:
                stats["errors"] += 1
            if pause_s:
                due.append(time.monotonic() + pause_s)
            else:
                start()
        now = time.monotonic()
        for key in list(sel.get_map().values()):
            if now - key.data[2] > 5:       # a client held past 5 s: a new one
                sel.unregister(key.fileobj)
                key.fileobj.close()
                stats["errors"] += 1
                start()


# ---- shared ----------------------------------------------------------

def listener(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(1024)
    return s


def stop_prints(what):
    def on_term(_sig, _frame):
        print(what(), flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "check":
        text = args[4].replace("\\n", "\n").encode() if len(args) > 4 else b""
        check(int(args[0]), float(args[1]), float(args[2]), float(args[3]), text)
    elif cmd == "pg":
        pg(int(args[0]), args[1])
    elif cmd == "csv":
        csv(int(args[0]), int(args[1]), args[2])
    elif cmd == "flood":
        flood(int(args[0]), int(args[1]), args[2], args[3].split(","),
              float(args[4]) if len(args) > 4 else 0.0)
    else:
        sys.exit(f"hostile_peers.py: unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
