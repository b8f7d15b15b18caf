"""The HTTP API: /status, /metrics, /health, on TCP and on a unix socket.

- /status without a token: exactly the public fields (node id, state,
  weight, serving, automation, incarnation, and the same per service);
- with the right bearer token, or on the unix socket: the detail, checked
  field by field (version, pid, config, probes, markers, load balancers and
  the line each last got, the hysteresis in words, history); a wrong token
  or another scheme: 401; no token file: detail only on the unix socket;
- a failing probe: `pending` says "failing for ..., goes down at 2s", then
  down: serving false, /health 503, the history and the metrics say so;
- a drain marker on a service: /health/web 503, the marker in /status;
- /metrics parsed by the Prometheus client's own text parser, types and
  labels checked;
- 404 for unknown paths and services, 405 (with Allow) for other methods;
- bounds: 16 KiB of headers refused, a client that sends half a request
  is dropped after the deadline, and agent checks are answered at once
  meanwhile;
- malformed requests (request line, headers, Content-Length) get a 4xx
  status and the API goes on."""

import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

TOKEN = "t0ken-for-the-test"
INTERVAL_MS = 200
BOUND_S = h.probe_bound_s(INTERVAL_MS, 100) + 2.0


def main():
    h.require_kinds("file")
    from prometheus_client.parser import text_string_to_metric_families

    d = h.tmpdir()
    dep, web = os.path.join(d, "dep.ok"), os.path.join(d, "web.ok")
    for p in (dep, web):
        h.write_atomic(p, "ok\n")
    token_file = os.path.join(d, "token")
    h.write_atomic(token_file, TOKEN + "\n", mode=0o600)
    sock = os.path.join(d, "http.sock")
    port = h.free_port()
    lb = h.Lbagent({
        "agent": {"reply_reasons": "yes", "node_id": "node-a", "down_after": "2s",
                  "up_after": "2s", "ramp": "0", "degrade_after": "0",
                  "restore_after": "0"},
        "http": {"listen": f"127.0.0.1:{port}, unix:{sock}", "token_file": token_file},
        "probe dep": {"type": "file", "path": dep, "interval": f"{INTERVAL_MS}ms",
                      "timeout": "100ms"},
        "probe wdep": {"type": "file", "path": web, "interval": f"{INTERVAL_MS}ms",
                       "timeout": "100ms", "on_crit": "50%"},
        "service web": {"probes": "wdep"},
    })
    auth = {"Authorization": f"Bearer {TOKEN}"}
    h.wait_until(lambda: h.http_json(port, "/status", auth)[1]["services"][0]["probes"][0]
                 ["settled"], BOUND_S, "the probes' first verdicts")

    h.section("public /status: exactly the public fields")
    status, pub = h.http_json(port, "/status")
    h.expect_equal(status, 200, "status code")
    h.expect_equal(set(pub), {"node_id", "incarnation", "state", "weight", "serving",
                              "automation", "detail", "services"}, "public keys")
    h.expect_equal((pub["node_id"], pub["state"], pub["weight"], pub["serving"],
                    pub["automation"], pub["detail"]),
                   ("node-a", "up", 100, True, "auto", False), "public values")
    h.expect(isinstance(pub["incarnation"], int) and pub["incarnation"] >= 1,
             f"incarnation {pub['incarnation']!r}")
    h.expect_equal([sorted(s) for s in pub["services"]],
                   [["automation", "capacity", "name", "no_probes", "server", "serving",
                     "state", "weight"]] * 2,
                   "public service keys")
    h.expect_equal([s["capacity"] for s in pub["services"]], [None] * 2,
                   "no capacity estimate yet")
    h.expect_equal([s["server"] for s in pub["services"]], ["node-a"] * 2,
                   "server names: node_id without [peers] server")
    h.expect_equal([s["name"] for s in pub["services"]], ["", "web"], "service names")

    h.section("the detail: bearer token, unix socket; wrong token 401")
    lb.ask(source="127.0.0.2")
    lb.ask(source="127.0.0.3", send=b"web\n")
    _, det = h.http_json(port, "/status", auth)
    _, det_unix = h.http_json(f"unix:{sock}", "/status")
    for doc, how in ((det, "token"), (det_unix, "unix socket")):
        h.expect(doc["detail"] is True, f"detail over the {how}")
    version = subprocess.run([h.lbagent_exe(), "-V"], capture_output=True,
                             text=True).stdout.split()[1]
    h.expect_equal((det["version"], det["pid"], det["config"], det["reloads"],
                    det["last_reload"]), (version, lb.pid, lb.config_path, 0, None),
                   "daemon fields")
    h.expect(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", det["started_at"]),
             f"started_at {det['started_at']!r} is ISO 8601 UTC")
    s0, sw = det["services"]
    h.expect_equal((s0["reply"], s0["reason"], s0["automation_off_by"], s0["target"]),
                   ("up", "", None, {"state": "up", "weight": 100, "reason": ""}),
                   "default service")
    p = s0["probes"][0]
    h.expect_equal((p["name"], p["type"], p["counted"], p["settled"], p["last"]["result"]),
                   ("dep", "file", "ok", True, "ok"), "probe dep")
    h.expect(p["runs"]["ok"] >= 1 and p["runs"]["crit"] == 0 and
             p["last"]["duration_ms"] >= 0 and p["last"]["ago_s"] >= 0,
             f"probe runs and timings: {p}")
    lbs = {x["address"]: x for x in s0["load_balancers"]}
    h.expect("127.0.0.2" in lbs and lbs["127.0.0.2"]["last_reply"] == "up" and
             lbs["127.0.0.2"]["owed"] == [] and lbs["127.0.0.2"]["checks"] == 1,
             f"the load balancer 127.0.0.2 and the line it got: {s0['load_balancers']}")
    web_lbs = {(x["address"], x["text"]) for x in sw["load_balancers"]}
    h.expect(("127.0.0.3", "web\\x0a") in web_lbs or ("127.0.0.3", "web") in web_lbs,
             f"web's load balancer with its text: {web_lbs}")
    h.expect_equal(s0["transition"]["pending"], None, "nothing pending")
    h.expect_equal((s0["peer_guard"], det["peers"], det["haproxy"]),
                   ({"state": "off"}, [], []), "no peer guard without [peers]")
    h.expect_equal(s0["history"][-1]["to"], "up", "history starts up")
    for headers, what in (({"Authorization": "Bearer nope"}, "wrong token"),
                          ({"Authorization": f"Basic {TOKEN}"}, "another scheme"),
                          ({"Authorization": f"Bearer {TOKEN}x"}, "a longer token"),
                          ({"Authorization": f"Bearer {TOKEN[:-1]}"}, "a shorter token")):
        status, body = h.http_json(port, "/status", headers)
        h.expect_equal((status, body), (401, {"error": "wrong token"}), what)

    h.section("failing: pending in words, then down, health 503")
    os.unlink(dep)

    def pending():
        return h.http_json(port, "/status", auth)[1]["services"][0]["transition"]["pending"]

    pend = h.wait_until(pending, BOUND_S, "a pending change", ok=lambda x: x is not None)
    h.expect(pend["towards"] == "down" and pend["after_s"] == 2.0 and
             re.match(r"^failing for [0-9.]+s, goes down at 2s$", pend["text"]),
             f"pending: {pend}")
    hs = h.wait_until(lambda: h.http_request(port, "/health"), BOUND_S, "/health 503",
                      ok=lambda r: r[0] == 503)
    h.expect_equal(h.json.loads(hs[2]), {"service": "", "state": "down", "weight": 0,
                                         "serving": False, "no_probes": False},
                   "/health body when down")
    _, pub = h.http_json(port, "/status")
    h.expect_equal((pub["state"], pub["serving"]), ("down", False), "public: down")
    _, det = h.http_json(f"unix:{sock}", "/status")
    s0 = det["services"][0]
    h.expect(s0["reply"].startswith("down #dep: ") and s0["history"][-1]["from"] == "up"
             and s0["history"][-1]["to"] == "down", f"reply and history: {s0['reply']!r}, "
             f"{s0['history'][-1]}")
    h.expect_equal(h.http_request(port, "/health/web")[0], 200, "/health/web still 200")

    h.section("a drain marker on web: /health/web 503, the marker in /status")
    os.makedirs(os.path.join(lb.state_dir, "web"), exist_ok=True)
    h.write_atomic(os.path.join(lb.state_dir, "web", "drain"), "deploy\n")
    h.wait_until(lambda: h.http_request(port, "/health/web")[0], h.marker_bound_s(),
                 "/health/web 503", ok=lambda c: c == 503)
    _, det = h.http_json(port, "/status", auth)
    sw = det["services"][1]
    h.expect_equal((sw["state"], sw["serving"], sw["markers"]),
                   ("drain", False, [{"kind": "drain", "scope": "service",
                                      "reason": "deploy", "unreadable": False,
                                      "owner": None, "host": None, "since": None,
                                      "until": None, "note": None}]),
                   "web under its drain marker")

    h.section("/metrics through the Prometheus text parser")
    status, hdrs, body = h.http_request(port, "/metrics")
    h.expect(status == 200 and hdrs["content-type"].startswith("text/plain; version=0.0.4"),
             f"metrics: {status} {hdrs.get('content-type')}")
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    types = {n: f.type for n, f in fams.items()}
    for name, typ in (("lbagent_build_info", "gauge"), ("lbagent_state", "gauge"),
                      ("lbagent_weight_ratio", "gauge"),
                      ("lbagent_probe_status", "gauge"),
                      ("lbagent_probe_duration_seconds", "gauge"),
                      ("lbagent_probe_runs", "counter"), ("lbagent_replies", "counter"),
                      ("lbagent_transitions", "counter")):
        h.expect(types.get(name) == typ, f"{name} should be a {typ}: {types}")

    def sample(fam, **labels):
        for s in fams[fam].samples:
            if all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
        raise h.TestFailure(f"no {fam} sample with {labels}")

    h.expect_equal(sample("lbagent_build_info", version=version), 1.0, "build info")
    h.expect_equal(sample("lbagent_state", service="default", state="down"), 1.0, "state down")
    h.expect_equal(sample("lbagent_state", service="default", state="up"), 0.0, "state up")
    h.expect_equal(sample("lbagent_state", service="web", state="drain"), 1.0, "web drain")
    h.expect_equal(sample("lbagent_weight_ratio", service="default"), 0.0, "weight when down")
    h.expect_equal(sample("lbagent_probe_status", probe="dep", service="default"), 2.0,
                   "dep crit")
    h.expect_equal(sample("lbagent_probe_status", probe="wdep", service="web"), 0.0,
                   "wdep ok")
    h.expect(sample("lbagent_probe_runs", probe="dep", result="crit") >= 1,
             "crit runs counted")
    h.expect(sample("lbagent_replies", service="default") >= 1, "replies counted")
    h.expect_equal(sample("lbagent_transitions", service="default", to="down"), 1.0,
                   "one transition to down")

    h.section("404, 405")
    h.expect_equal(h.http_json(port, "/nope")[0], 404, "unknown path")
    h.expect_equal(h.http_json(port, "/health/nosuch")[0], 404, "unknown service")
    # The default service by its name in the metrics.
    h.expect_equal(h.http_json(port, "/health/default"), h.http_json(port, "/health"),
                   "/health/default is /health")
    # fresh (wait for a round of the peers) is 1 or 0, nothing else.
    h.expect_equal(h.http_request(port, "/status?fresh=yes", headers=auth)[0], 400, "fresh=yes")
    h.expect_equal(h.http_json(port, "/status?fresh=0", auth)[1].get("detail"), True,
                   "fresh=0: the detail")
    status, hdrs, _ = h.http_request(port, "/status", method="POST")
    h.expect_equal((status, hdrs.get("allow")), (405, "GET, HEAD"), "POST")
    h.expect_equal(h.http_request(port, "/metrics", method="DELETE")[0], 405, "DELETE")

    h.section("bounds: huge headers refused; half a request dropped; agent unaffected")
    status = None
    try:
        status = h.http_request(port, "/status", headers={"X-Big": "a" * 16384})[0]
    except (ConnectionError, h.http.client.HTTPException, OSError):
        status = "closed"
    h.expect(status in (400, 413, 431, "closed"), f"16 KiB of headers: {status}")
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
    t0 = time.monotonic()
    for _ in range(20):
        r = lb.ask(send=b"web\n")
        h.expect(r.startswith(b"drain"), f"agent reply while an HTTP client hangs: {r!r}")
    h.expect(time.monotonic() - t0 < 5.0, "agent checks answered at once meanwhile")
    slow.settimeout(15 * h._time_scale())
    try:
        data = slow.recv(1000)
    except OSError:
        data = b""
    took = time.monotonic() - t0
    slow.close()
    print(f"   half a request dropped after {took:.1f} s ({data[:40]!r})", flush=True)
    h.expect(took < 12 * h._time_scale(), f"the half request was dropped ({took:.1f} s)")

    h.section("malformed requests: a 4xx status, and the API goes on")
    for raw, code in ((b"GET  /status HTTP/1.1\r\n\r\n", 400),
                      (b"GET /status HTTP/2.0\r\n\r\n", 400),
                      (b"GET /status\r\n\r\n", 400),
                      (b"\r\n\r\n", 400),
                      (b"GET /status HTTP/1.1\r\n folded: line\r\n\r\n", 400),
                      (b"GET /status HTTP/1.1\r\nno colon\r\n\r\n", 400),
                      (b"G\x00T /status HTTP/1.1\r\n\r\n", 400),
                      (b"GET /status HTTP/1.1\r\nContent-Length: 99999999999999999999999"
                       b"\r\n\r\n", 400),
                      (b"GET /status HTTP/1.1\r\nContent-Length: 2000\r\n\r\n", 413),
                      (b"GET /status HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", 431),
                      (b"POST /status HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 405),
                      (b"HEAD /status HTTP/1.0\n\n", 400),  # bare LF: test_81
                      (b"GET http://node/health/web HTTP/1.1\r\n\r\n", 503)):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(raw)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        h.expect(data.startswith(f"HTTP/1.1 {code} ".encode()),
                 f"{raw[:50]!r}: expected {code}, got {data[:80]!r}")
    h.expect_equal(h.http_request(port, "/health/web")[0], 503, "the API after them")

    h.section("no readable token file: detail only on the unix socket")
    lb.stop()
    os.unlink(token_file)
    mark = lb.log_mark()
    lb.start()
    _, doc = h.http_json(port, "/status", auth)
    h.expect_equal((h.http_json(port, "/status", auth)[0], doc.get("error")),
                   (401, "no token is configured ([http] token_file)"), "token missing")
    h.expect(h.http_json(f"unix:{sock}", "/status")[1]["detail"], "unix still detailed")
    h.expect("token_file" in lb.log_since(mark), "the missing token file is logged")
    h.expect(TOKEN not in lb.log(), "the token never appears in the log")
    lb.stop()
    h.expect(not os.path.exists(sock), "the unix socket is removed at exit")


h.run(main)
