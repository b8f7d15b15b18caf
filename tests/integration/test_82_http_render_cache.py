"""/metrics and the public /status are rendered once per change of what
they show, not per request.

lbagent_http_renders_total{document} (in /metrics, counted as each
request is answered) says how many times each was rendered. With nothing
moving (no probes, no agent checks), 100 requests of /metrics and 100 of
the public /status leave both counts as they were after the first of
each; the bodies stay the same. A drain marker changes what both show:
the next /status says drain and the next /metrics says so too, each
rendered once more. The detail of /status (unix socket) is not cached."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

REQUESTS = 100


def renders(port):
    status, _, body = h.http_request(port, "/metrics")
    h.expect_equal(status, 200, "/metrics")
    text = body.decode()
    found = dict(re.findall(r'^lbagent_http_renders_total\{document="(\w+)"\} (\d+)$',
                            text, re.M))
    h.expect(set(found) == {"metrics", "status"},
             f"lbagent_http_renders_total for metrics and status: {found}")
    # The rest of the body is the cached document.
    cached = re.sub(r"(?ms)^# HELP lbagent_http_.*", "", text)
    return {k: int(v) for k, v in found.items()}, cached


def main():
    port = h.free_port()
    sock = os.path.join(h.tmpdir(), "http.sock")
    lb = h.Lbagent({"http": {"listen": f"127.0.0.1:{port}, unix:{sock}"}})
    h.wait_until(lambda: h.http_json(port, "/status")[1]["state"], h.startup_bound_s(),
                 "/status up", ok=lambda s: s == "up")

    h.section(f"{REQUESTS} requests of each: no rendering")
    first, body = renders(port)
    _, pub = h.http_json(port, "/status")
    start, _ = renders(port)
    h.expect(start["metrics"] == first["metrics"],
             f"renders after a second /metrics: {start} (first {first})")
    for _ in range(REQUESTS):
        seen, again = renders(port)
        h.expect_equal(seen, start, "lbagent_http_renders_total during the requests")
        h.expect_equal(again, body, "the cached /metrics body")
    for _ in range(REQUESTS):
        h.expect_equal(h.http_json(port, "/status"), (200, pub), "the public /status")
    h.expect_equal(renders(port)[0], start, "lbagent_http_renders_total after them")
    for _ in range(3):
        h.expect(h.http_json(f"unix:{sock}", "/status")[1]["detail"] is True,
                 "the detail on the unix socket")
    h.expect_equal(renders(port)[0], start, "renders after reading the detail")

    h.section("a drain marker: both rendered once more")
    lb.set_marker("drain", "for the test\n")
    h.wait_until(lambda: h.http_json(port, "/status")[1]["state"], h.marker_bound_s(),
                 "/status to say drain", ok=lambda s: s == "drain")
    after, body2 = renders(port)
    h.expect(after["status"] > start["status"] and after["metrics"] > start["metrics"],
             f"renders after the marker: {after} (before {start})")
    h.expect('lbagent_state{service="default",state="drain"} 1' in body2,
             "/metrics says drain")
    h.expect_equal(renders(port)[0], after, "renders on the next /metrics")
    lb.stop(expect_rc=0)


h.run(main)
