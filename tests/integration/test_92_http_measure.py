"""A measure-only http probe (json_field without expect_value, warn or
crit) against a real local HTTP server giving an application's load
report, ORCA-style ({"utilization": 0.42, "qps": 123.5}):

- lbagent -c accepts it;
- the run is ok, its value the field's number without a unit, in the
  status detail and as lbagent_probe_value in /metrics; the reply stays
  `up`;
- the report changing moves the value;
- a field that is absent, or not a number, is crit with the reason."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)


def probe(url, field, **keys):
    return {"type": "http", "url": url, "json_field": field,
            "interval": f"{INTERVAL_MS}ms", "timeout": f"{TIMEOUT_MS}ms", **keys}


def main():
    h.require_kinds("http")
    srv = h.HttpStub()
    srv.set_json("/load", {"utilization": 0.42, "qps": 123.5, "state": "busy"})
    d = h.tmpdir()
    sock = os.path.join(d, "api.sock")
    port = h.free_port()
    text = h.ini_text({
        "agent": {"listen": "127.0.0.1:{port}", "state_dir": "{state_dir}",
                  "reply_reasons": "yes", **h.IMMEDIATE},
        "http": {"listen": f"127.0.0.1:{port}, unix:{sock}"},
        "probe util": probe(srv.url("/load"), "utilization"),
        "probe qps": probe(srv.url("/load"), "qps"),
        "probe lat": probe(srv.url("/load"), "latency_ms", on_crit="ignore"),
        "probe state": probe(srv.url("/load"), "state", on_crit="ignore"),
    })
    lb = h.Lbagent(text)

    h.section("lbagent -c accepts json_field alone")
    rc, out, _ = h.check_config(lb.config_text)
    h.expect_equal(rc, 0, f"lbagent -c: {out!r}")

    def last(name):
        for p in h.http_json("unix:" + sock, "/status")[1]["services"][0]["probes"]:
            if p["name"] == name:
                return p["last"]
        raise h.TestFailure(f"no probe {name} in the detail")

    def metric(name):
        body = h.http_request(port, "/metrics")[2].decode()
        m = re.search(r'^lbagent_probe_value\{probe="%s",service="default"\} (\S+)$'
                      % name, body, re.M)
        return float(m.group(1)) if m else None

    h.section("ok, the field's number as the value, no unit")
    for name, want in (("util", 0.42), ("qps", 123.5)):
        got = h.wait_until(lambda: last(name), BOUND_S, f"{name} ok at {want}",
                           ok=lambda x: x and x.get("result") == "ok" and
                           x.get("value") == want)
        h.expect_equal(got.get("unit"), "", f"{name}'s unit")
        h.expect_equal(metric(name), want, f"lbagent_probe_value of {name}")
    h.expect_equal(lb.ask(), b"up\n", "the reply with the failing ones ignored")

    h.section("the report moves, the value follows")
    srv.set_json("/load", {"utilization": 0.9, "qps": 300, "state": "busy"})
    h.wait_until(lambda: metric("qps"), BOUND_S, "qps 300 in /metrics",
                 ok=lambda v: v == 300)
    h.wait_until(lambda: metric("util"), BOUND_S, "util 0.9 in /metrics",
                 ok=lambda v: v == 0.9)

    h.section("absent, or not a number: crit with the reason")
    for name, why in (("lat", "no JSON field latency_ms"),
                      ("state", "state is not a number")):
        got = h.wait_until(lambda: last(name), BOUND_S, f"{name} crit",
                           ok=lambda x: x and x.get("result") == "crit")
        h.expect_equal(got.get("reason"), why, f"{name}'s reason")
        h.expect_equal(metric(name), None, f"no lbagent_probe_value of {name}")
    lb.stop()


h.run(main)
