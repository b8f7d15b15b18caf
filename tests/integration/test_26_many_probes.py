"""200 probes at interval 1s: 50 file, 50 tcp (to a local listener that
records what each connection sends), 50 http (to the local server, one path
each), 50 exec. lbagent starts, answers `up`, keeps answering, and every
probe runs:

- http: the server saw each probe's own path;
- tcp: the listener received each probe's own `send` text;
- exec: each runs `/usr/bin/touch FILE`, an exit-0 command like /bin/true
  whose runs leave a mark: each probe's own file exists;
- file: each watches a missing file at first (on_crit = ignore: logged,
  changes nothing): each is named in the log (its crit result).
Every http, tcp and exec probe is then seen running a second time.

After 20 s it prints (does not assert) lbagent's RSS and CPU time:
`many_probes: rss_kb=... cpu_s=...`."""

import os
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

N = 50
RUN_S = 20.0
PROBE_KEYS = {"interval": "1s", "timeout": "800ms"}
BOUND_S = h.probe_bound_s(1000, 800) + 10     # 200 probes start jittered


def main():
    h.require_kinds("file", "tcp", "http", "exec")
    h.raise_nofile(4096)
    d = h.tmpdir()
    ran = os.path.join(d, "ran")
    watched = os.path.join(d, "watched")
    os.makedirs(ran)
    os.makedirs(watched)
    srv = h.HttpStub()
    srv.set_matcher(lambda path: h._Answer(200, b"ok\n") if path.startswith("/many/") else None)
    rec = h.LineRecorder()

    sections = {"agent": {"reply_reasons": "yes"}}
    names = {"file": [], "tcp": [], "http": [], "exec": []}
    for i in range(N):
        n = f"file-{i:03d}"
        names["file"].append(n)
        sections[f"probe {n}"] = dict(PROBE_KEYS, type="file", path=os.path.join(watched, n),
                                      on_crit="ignore")
        n = f"tcp-{i:03d}"
        names["tcp"].append(n)
        sections[f"probe {n}"] = dict(PROBE_KEYS, type="tcp", address=f"127.0.0.1:{rec.port}",
                                      send=f"hello {n}")
        n = f"http-{i:03d}"
        names["http"].append(n)
        sections[f"probe {n}"] = dict(PROBE_KEYS, type="http", url=srv.url(f"/many/{n}"))
        n = f"exec-{i:03d}"
        names["exec"].append(n)
        sections[f"probe {n}"] = dict(PROBE_KEYS, type="exec",
                                      command=f"/usr/bin/touch {os.path.join(ran, n)}")
    h.section(f"start with {len(sections) - 1} probes")
    started = time.monotonic()
    lb = h.Lbagent(sections, ready_timeout_s=30)
    h.wait_reply(lb, b"up\n", "`up` with 200 probes (the file ones ignored)",
                 timeout_s=BOUND_S)

    h.section("every probe runs")

    def missing():
        http_seen = {p for _, p, _ in srv.requests()}
        tcp_seen = b"\n".join(rec.seen()).decode(errors="replace")
        log = lb.log()
        out = []
        out += [n for n in names["http"] if f"/many/{n}" not in http_seen]
        out += [n for n in names["tcp"] if f"hello {n}" not in tcp_seen]
        out += [n for n in names["exec"] if not os.path.exists(os.path.join(ran, n))]
        out += [n for n in names["file"] if n not in log]
        return out

    def describe(m):
        return f"{len(m)} probes not seen running, e.g. {m[:8]}"

    h.wait_until(missing, BOUND_S, "every probe's first run", ok=lambda m: not m,
                 describe=describe)
    mtimes = {n: os.stat(os.path.join(ran, n)).st_mtime_ns for n in names["exec"]}
    mark = lb.log_mark()
    for n in names["file"]:
        h.write_atomic(os.path.join(watched, n), "here\n")

    h.section("answering all along")
    replies = 0
    while time.monotonic() - started < RUN_S:
        r = lb.ask()
        replies += 1
        h.expect(r == b"up\n", f"reply with 200 healthy probes: {r!r}")
        time.sleep(0.2)
    h.expect(lb.alive(), "lbagent running after 20 s")
    rss, cpu = h.proc_usage(lb.pid)
    elapsed = time.monotonic() - started
    fds = lb.fd_count()

    h.section("and every probe keeps running")

    def not_again():
        per_path = {}
        for _, p, _ in srv.requests():
            per_path[p] = per_path.get(p, 0) + 1
        tcp_seen = [x.decode(errors="replace") for x in rec.seen()]
        out = [n for n in names["http"] if per_path.get(f"/many/{n}", 0) < 2]
        out += [n for n in names["tcp"] if sum(f"hello {n}" in x for x in tcp_seen) < 2]
        out += [n for n in names["exec"]
                if os.stat(os.path.join(ran, n)).st_mtime_ns == mtimes[n]]
        return out

    h.wait_until(not_again, BOUND_S, "a second run of every http, tcp and exec probe",
                 ok=lambda m: not m, describe=describe)
    log = lb.log_since(mark)
    again = sum(n in log for n in names["file"])
    print(f"   file probes logged again after their files appeared: {again} of {N}", flush=True)
    print(f"   {replies} replies, all `up`; http requests {srv.count()}, "
          f"tcp connections {rec.connections}, over {elapsed:.1f} s", flush=True)
    print(f"many_probes: rss_kb={rss} cpu_s={cpu:.2f} elapsed_s={elapsed:.1f} "
          f"fds={fds}", flush=True)


h.run(main)
