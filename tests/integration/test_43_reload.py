"""Reload (SIGHUP) against a running lbagent:

- a broken configuration changes nothing: the replies stay as they were,
  every error is logged as file:line, and /status says the reload failed
  with the same errors;
- a valid one is swapped in: a changed probe takes effect, an unchanged
  one keeps running with its state (its run count goes on, a fall=3 probe
  that counts as failing never counts as ok across the reload), an added
  listen address answers, a removed one stops, the kept one never stops
  answering, and the HTTP API answers with the new reload count."""

import os
import re
import sys
import threading

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 150
BOUND_S = h.probe_bound_s(INTERVAL_MS, 100, fall=3)


def config(d, ports, http_port, change_path):
    return h.ini_text({
        "agent": {**h.IMMEDIATE, "listen": ", ".join(f"127.0.0.1:{p}" for p in ports),
                  "state_dir": os.path.join(d, "state"), "reply_reasons": "yes"},
        "http": {"listen": f"127.0.0.1:{http_port}, unix:{os.path.join(d, 'api.sock')}"},
        "probe keep": {"type": "file", "path": os.path.join(d, "keep.ok"),
                       "interval": f"{INTERVAL_MS}ms", "timeout": "100ms", "fall": "3"},
        "probe change": {"type": "file", "path": change_path,
                         "interval": f"{INTERVAL_MS}ms", "timeout": "100ms",
                         "on_crit": "50%"},
    })


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    keep, present = os.path.join(d, "keep.ok"), os.path.join(d, "present.ok")
    h.write_atomic(keep, "ok\n")
    h.write_atomic(present, "ok\n")
    a, b, c, http_port = h.free_port(), h.free_port(), h.free_port(), h.free_port()
    lb = h.Lbagent(config(d, [a, b], http_port, present), port=a)

    sock = "unix:" + os.path.join(d, "api.sock")

    def status():
        return h.http_json(sock, "/status")[1]

    def keep_runs():
        return status()["services"][0]["probes"][0]["runs"]["crit"]

    h.section("keep fails (fall 3): down")
    os.unlink(keep)
    h.wait_reply(lb, re.compile(rb"^down #keep: does not exist\n$"), "down by keep",
                 timeout_s=BOUND_S)
    seen, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            for port in (a,):
                seen.append(h.ask(port))
            stop.wait(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        h.section("a broken configuration: nothing changes")
        with open(lb.config_path, "a") as f:
            f.write("[probe broken]\ntype = nosuch\ninterval = soon\n")
        mark = lb.log_mark()
        os.kill(lb.pid, 1)
        h.wait_until(lambda: status().get("incarnation"), 5, "the API after SIGHUP")
        log = h.wait_until(lambda: lb.log_since(mark), 5, "the reload's verdict in the log",
                           ok=lambda t: "reload failed" in t)
        errs = re.findall(re.escape(lb.config_path) + r":(\d+): (.*)", log)
        print(f"   errors: {errs}", flush=True)
        h.expect(len(errs) >= 2 and all(int(n) > 0 for n, _ in errs),
                 f"every error as file:line in the log:\n{log}")
        h.expect("keeping the running configuration" in log, "says it kept the old one")
        st = status()
        h.expect(st["reloads"] == 1 and st["last_reload"]["ok"] is False and
                 st["last_reload"]["errors"] == [f"{lb.config_path}:{n}: {m}" for n, m in errs],
                 f"/status tells the failed reload: {st['reloads']}, {st['last_reload']}")
        h.hold_for(lambda: h.ask(a), 1.0, "the same reply after the failed reload",
                   ok=lambda r: r == b"down #keep: does not exist\n")
        h.expect_equal(h.ask(b), b"down #keep: does not exist\n", "port b still answers")

        h.section("a valid one: the changed probe acts, the unchanged keeps its state")
        with open(lb.config_path, "w") as f:
            f.write(config(d, [a, c], http_port, os.path.join(d, "missing.ok")))
        runs_before = keep_runs()
        mark = lb.log_mark()
        os.kill(lb.pid, 1)
        h.wait_until(lambda: lb.log_since(mark), 5, "reloaded", ok=lambda t: "reloaded" in t)
        log = lb.log_since(mark)
        runs_after = keep_runs()
        print(f"   keep's crit runs: {runs_before} before, {runs_after} after", flush=True)
        h.expect(runs_after >= runs_before, "the unchanged probe's run count goes on")
        st = status()
        h.expect(st["reloads"] == 2 and st["last_reload"]["ok"] is True and
                 st["last_reload"]["errors"] == [], f"/status: {st['last_reload']}")
        h.expect("reload: 1 probe(s) kept with their state, 1 new, 1 gone" in log,
                 f"the reload's summary:\n{log}")
        h.wait_reply(lb, b"down #keep: does not exist; change: does not exist\n",
                     "the changed probe's verdict in the reason", timeout_s=BOUND_S)
        h.hold_for(lambda: h.ask(c), 1.0, "the new address answers",
                   ok=lambda r: r == b"down #keep: does not exist; change: does not exist\n")
        try:
            h.ask(b, timeout_s=2)
            h.expect(False, f"port {b} was removed from listen but still answers")
        except OSError:
            pass
    finally:
        stop.set()
        watcher.join()
    bad = [r for r in seen if not r.startswith(b"down")]
    h.expect(not bad, f"the kept port said something else than down across the reloads "
                      f"(state lost?): {bad[:5]}")
    h.expect(len(seen) > 10, f"checks during the reloads: {len(seen)}")
    _, pub = h.http_json(http_port, "/status")
    h.expect_equal(pub["state"], "down", "public state over TCP after the reload")


h.run(main)
