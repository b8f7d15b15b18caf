"""The http probe against a real local HTTP server whose answers the test
flips, checked through raw agent replies and the real HAProxy (weight 100):

- 200 -> `up`; 503 -> `down #api: HTTP 503` and HAProxy DOWN; 200 -> UP;
  a redirect is ok under the default expect_status (200-399);
- an answer slower than the timeout -> `down #api: timed out after 400ms`;
- a server that accepts and never answers -> crit at the timeout, while raw
  agent checks asked all along keep getting well-formed replies;
- nothing listening -> `connection refused`, several failing probes listed
  in config order within the 100-byte reason;
- JSON: json_field with expect_value, numeric warn/crit thresholds (warn ->
  `up 50%`, and HAProxy's weight 50 of 100), a body that is not JSON, a
  missing field; expect_status lists; expect_body; headers and method;
- user:password in a URL is sent (the server demands it) and never appears
  in the log, in any reply, in state.json or in HAProxy's view."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)

USER, PASSWORD = "lbuser7q", "Pa55-s3cr3t-x9Z"
USER2, PASSWORD2 = "lbuser8q", "An0ther-s3cr3t-k4W"
SECRETS = [USER, PASSWORD, USER2, PASSWORD2]

SEEN = []        # every raw reply of the scenario, checked for secrets at the end


def probe(url, **keys):
    base = {"type": "http", "url": url, "interval": f"{INTERVAL_MS}ms",
            "timeout": f"{TIMEOUT_MS}ms"}
    base.update(keys)
    return base


def reply(lb, want, what, **kw):
    return h.wait_reply(lb, want, what, timeout_s=kw.pop("timeout_s", BOUND_S), seen=SEEN, **kw)


def healthy(lb, what):
    return reply(lb, b"up\n", what)


def expect_reason_fits(r):
    reason = h.reply_reason(r)
    h.expect(reason is not None and len(reason) <= h.REASON_MAX,
             f"reason missing or longer than {h.REASON_MAX} bytes: {r!r}")


def main():
    h.require_kinds("http")
    srv = h.HttpStub()
    closed_port = h.free_port()         # nothing listens there
    srv.set("/api", 200, "ok\n")
    srv.set_json("/json", {"status": "ok", "version": "1.2.3"})
    srv.set_json("/queues", [{"name": "orders", "messages_ready": 5},
                             {"name": "audit", "messages_ready": 7000}])
    srv.set("/body", 200, "service: ALIVE since 09:00\n")
    srv.set("/secret", 200, "fine\n", auth=(USER, PASSWORD))

    sections = {
        "agent": {"listen": "127.0.0.1:{port}", "state_dir": "{state_dir}",
                  "reply_reasons": "yes", **h.IMMEDIATE},
        "probe api": probe(srv.url("/api")),
        "probe json": probe(srv.url("/json"), method="POST", json_field="status",
                            expect_value="ok", expect_status="200, 202"),
        "probe jnum": probe(srv.url("/queues"), json_field="0.messages_ready",
                            warn=100, crit=1000, on_warn="50%"),
        "probe body": probe(srv.url("/body"), expect_body="ALIVE"),
        "probe secret": probe(srv.url("/secret", f"{USER}:{PASSWORD}")),
        "probe gone": probe(f"http://{USER2}:{PASSWORD2}@127.0.0.1:{closed_port}/x",
                            on_crit="ignore"),
    }
    # `header` is repeatable: two lines in [probe body].
    text = h.ini_text(sections).replace(
        "expect_body = ALIVE\n",
        "expect_body = ALIVE\nheader = X-Check-One: first-value\n"
        "header = X-Check-Two: second-value\n")
    lb = h.Lbagent(text)

    h.section("everything answers 200: up")
    healthy(lb, "`up` with every endpoint healthy")
    hap = h.Haproxy([lb])
    hap.wait_status("be", "s1", "UP", h.startup_bound_s(), "s1 UP at start",
                    ok=lambda st: h.agent_result(st) == "L7OK")
    h.expect_equal(hap.stat("be", "s1")["weight"], "100", "HAProxy weight at start")

    h.section("the secret endpoint got the credentials from the URL")
    h.wait_until(lambda: srv.requests("/secret"), BOUND_S, "a request to /secret")
    auths = {r[2].get("authorization") for r in srv.requests("/secret")}
    h.expect(any(a and a.startswith("Basic ") for a in auths),
             f"/secret was asked without Basic authorization: {auths!r}")
    h.section("method and headers")
    h.expect(all(m == "POST" for m, _, _ in srv.requests("/json")),
             f"method = POST, but /json saw {[m for m, _, _ in srv.requests('/json')]}")
    hdrs = srv.requests("/body")[-1][2]
    h.expect(hdrs.get("x-check-one") == "first-value" and
             hdrs.get("x-check-two") == "second-value",
             f"both `header` lines sent: /body saw headers {hdrs!r}")

    h.section("503 -> down, HAProxy DOWN")
    srv.set("/api", 503, "unavailable\n")
    reply(lb, b"down #api: HTTP 503\n", "`down #api: HTTP 503`")
    h.wait_until(lambda: hap.stat("be", "s1"), BOUND_S, "HAProxy s1 DOWN after the 503",
                 ok=lambda st: st["status"].startswith("DOWN"), describe=h.describe_stat)

    h.section("200 again -> up, HAProxy UP")
    srv.set("/api", 200, "ok\n")
    healthy(lb, "`up` after the 503 ended")
    hap.wait_status("be", "s1", "UP", BOUND_S, "HAProxy s1 UP again")

    h.section("302 is ok by the default expect_status 200-399")
    srv.set("/api", 302, "", headers={"Location": "/elsewhere"})
    n0 = srv.count("/api")
    h.hold_for(lambda: lb.ask(), 1.0, "`up` while /api answers 302",
               ok=lambda r: r == b"up\n", until=lambda: srv.count("/api") >= n0 + 3,
               until_what="three runs of the api probe against the 302")
    srv.set("/api", 200, "ok\n")

    h.section("slow answer beyond the timeout -> timed out")
    srv.set("/api", 200, "late\n", delay_s=3.0)
    reply(lb, f"down #api: timed out after {TIMEOUT_MS}ms\n".encode(),
          "`down #api: timed out after 400ms` for a slow answer")
    srv.set("/api", 200, "ok\n")
    healthy(lb, "`up` after the slow answers")

    h.section("accepted and never answered: crit at the timeout, replies keep coming")
    srv.set("/api", hang=True)
    crit = f"down #api: timed out after {TIMEOUT_MS}ms\n".encode()
    reply(lb, crit, "`down #api: timed out ...` for a server that never answers")
    n0 = srv.count("/api")
    count = 0

    def steady():
        nonlocal count
        r = lb.ask()
        SEEN.append(r)
        count += 1
        return r

    # Liveness: every check gets its reply (ask() gives up after 5 s) and
    # each is the crit line, while more runs hang and are cancelled.
    h.hold_for(steady, 2.0, "replies during the hanging runs",
               ok=lambda r: r == crit, until=lambda: srv.count("/api") >= n0 + 3,
               until_what="three more hanging runs of the api probe")
    print(f"   {count} raw replies during the hang, all {crit!r}; "
          f"{srv.count('/api') - n0} hanging requests", flush=True)
    h.expect(count >= 10, f"only {count} replies in 2 s of asking")
    srv.set("/api", 200, "ok\n")
    healthy(lb, "`up` after the hang ended")

    h.section("nothing listening: connection refused, every failing probe listed")
    # Closing a listening socket resets the connections queued on it, and a
    # probe caught by that would (rightly) say something else; a failing
    # probe keeps its first reason. So lbagent starts afresh with nothing
    # listening: every probe's first run meets a refused connection.
    srv.stop_listening()
    lb.restart()
    r = reply(lb, h.starts(b"down #api: connection refused; json: connection refused"),
              "`down #api: connection refused; json: connection refused...`")
    expect_reason_fits(r)
    print(f"   reply: {r!r}", flush=True)
    srv.start()
    healthy(lb, "`up` once the server listens again")

    h.section("JSON expect_value")
    # Each failure from a healthy state: while a probe fails, its reason may
    # stay the one it started failing with.
    for what, answer in [
            ("status degraded", lambda: srv.set_json("/json", {"status": "degraded"})),
            ("a body that is not JSON",
             lambda: srv.set("/json", 200, "<html>oops</html>", content_type="text/html")),
            ("a missing field", lambda: srv.set_json("/json", {"version": "1.2.3"})),
            ("status as a number", lambda: srv.set_json("/json", {"status": 1}))]:
        answer()
        r = reply(lb, h.starts(b"down #json: "), f"`down #json: ...` for {what}")
        print(f"   {what}: {r!r}", flush=True)
        srv.set_json("/json", {"status": "ok", "version": "1.2.3"})
        healthy(lb, f"`up` with status ok again (after {what})")
    srv.set_json("/json", {"status": "ok"}, status=202)
    n0 = srv.count("/json")
    h.hold_for(lambda: lb.ask(), 1.0, "`up` while /json answers 202 (in expect_status 200, 202)",
               ok=lambda r: r == b"up\n", until=lambda: srv.count("/json") >= n0 + 3,
               until_what="three runs of the json probe against the 202")
    srv.set_json("/json", {"status": "ok"}, status=204)
    reply(lb, b"down #json: HTTP 204\n", "`down #json: HTTP 204` (not in 200, 202)")
    srv.set_json("/json", {"status": "ok", "version": "1.2.3"})
    healthy(lb, "`up` with status ok again")

    h.section("JSON thresholds: warn -> 50%, crit -> down")
    srv.set_json("/queues", [{"name": "orders", "messages_ready": 150}])
    r = reply(lb, h.starts(b"up 50% #jnum: "), "`up 50% #jnum: ...` at 150 (warn 100)")
    print(f"   reply: {r!r}", flush=True)
    h.wait_until(lambda: hap.stat("be", "s1"), BOUND_S, "HAProxy weight 50 of 100",
                 ok=lambda st: st["weight"] == "50" and st["status"] == "UP",
                 describe=h.describe_stat)
    srv.set_json("/queues", [{"name": "orders", "messages_ready": 5000}])
    r = reply(lb, h.starts(b"down #jnum: "), "`down #jnum: ...` at 5000 (crit 1000)")
    print(f"   reply: {r!r}", flush=True)
    srv.set_json("/queues", [{"name": "orders", "messages_ready": 3}])
    healthy(lb, "`up` at 3 messages")
    h.wait_until(lambda: hap.stat("be", "s1"), BOUND_S, "HAProxy UP, weight 100 again",
                 ok=lambda st: st["weight"] == "100" and st["status"] == "UP",
                 describe=h.describe_stat)

    h.section("expect_body")
    srv.set("/body", 200, "service: DEAD\n")
    r = reply(lb, h.starts(b"down #body: "), "`down #body: ...` without ALIVE")
    print(f"   reply: {r!r}", flush=True)
    srv.set("/body", 200, "ALIVE\n")
    healthy(lb, "`up` with ALIVE back")

    h.section("credentials: a failure of the probe with user:password in its URL")
    srv.set("/secret", 503, "no\n", auth=(USER, PASSWORD))
    reply(lb, b"down #secret: HTTP 503\n", "`down #secret: HTTP 503`")
    srv.set("/secret", 200, "fine\n", auth=(USER, PASSWORD))
    healthy(lb, "`up` with the secret endpoint fine")
    hap.wait_status("be", "s1", "UP", BOUND_S, "HAProxy s1 UP at the end")

    h.section("no user name or password anywhere")
    log = lb.log()
    h.expect("secret" in log, "the log names the secret probe at least once "
             "(its failure), so the search below is not vacuous")
    places = {"lbagent log": log}
    sj = os.path.join(lb.state_dir, "state.json")
    if os.path.exists(sj):
        with open(sj) as f:
            places["state.json"] = f.read()
    places["raw replies"] = b"".join(SEEN).decode(errors="replace")
    st = hap.stat("be", "s1")
    places["HAProxy agent_desc"] = st.get("agent_desc", "")
    for where, text in places.items():
        for s in SECRETS:
            h.expect(s not in text, f"{s!r} (from a probe URL) appears in the {where}")
    print(f"   checked {len(SEEN)} replies, {len(log)} bytes of log, "
          f"{'state.json' if 'state.json' in places else 'no state.json'}", flush=True)


h.run(main)
