"""Only this node's backend (issue 34): a real HAProxy that also carries 20
other backends of 50 servers each (1,000 servers lbagent has no business
with) checks the node (backend `be`, server s1) and answers its stats two
ways: its TCP Runtime API, and a stats page per backend, the very
`listen stats-web` block docs/haproxy.md shows ("Only this node's
backend"), its address and backend name replaced. lbagent reads both
through a tap (a second HAProxy, one TCP `listen` each), whose frontends
count the connections (one question each) and the bytes sent back to
lbagent (`bout`): what the load balancer answered, counted outside it.

1. the detail, read repeatedly (each read gets a round begun within an
   interval), shows s1 as HAProxy does on both sources (UP, weight 100),
   with the configured weight from the servers state on the Runtime API;
   a service judged against a backend this HAProxy does not have reads as
   no server there, the other's rows still read;
2. over those rounds, each answer through either tap is at most 64 KiB
   (the issue's target), where the whole `show stat;show servers state`
   of the same HAProxy is several times that."""

import os
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(ROOT, "docs", "haproxy.md")
HEADING = "### Only this node's backend"
OTHERS, PER = 20, 50
INTERVAL_MS = 200
READS = 10
TARGET = 64 * 1024


def doc_listen():
    """The indented block under HEADING that starts with `listen`."""
    with open(DOC) as f:
        lines = f.read().split("\n")
    try:
        i = lines.index(HEADING)
    except ValueError:
        raise h.TestFailure(f"{DOC} has no line {HEADING!r}") from None
    while i < len(lines) and not lines[i].startswith("    listen "):
        i += 1
    block = []
    while i < len(lines) and lines[i].startswith("    "):
        block.append(lines[i][4:])
        i += 1
    if not block:
        raise h.TestFailure(f"no `listen` block under {HEADING!r} in {DOC}")
    return block


def tap_counts(tap, name):
    for r in tap.stats():
        if r["pxname"] == name and r["svname"] == "FRONTEND":
            return int(r["stot"]), int(r["bout"])
    raise h.TestFailure(f"no {name} FRONTEND in the tap's show stat")


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    page_port, api_tap, page_tap = h.free_port(), h.free_port(), h.free_port()
    block = doc_listen()
    text = "\n".join(block)
    h.expect("10.0.0.2:8405" in text and "stats scope web" in text,
             f"the documented block binds 10.0.0.2:8405 and scopes web:\n{text}")
    # The node's service is in `be` here: the block's address and scope.
    page = [ln.replace("10.0.0.2:8405", f"127.0.0.1:{page_port}")
              .replace("stats scope web", "stats scope be") for ln in block]
    others = {f"other{k}": [] for k in range(OTHERS)}
    other_lines = {f"other{k}": [f"server o{k}x{j} 127.0.0.1:9 weight 3"
                                 for j in range(PER)] for k in range(OTHERS)}
    sock = os.path.join(d, "api.sock")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE},
        "http": {"listen": f"unix:{sock}"},
        "peers": {"interval": f"{INTERVAL_MS}ms", "timeout": "2s"},
        "haproxy": {"sources": f"tcp:127.0.0.1:{api_tap}, "
                               f"http://127.0.0.1:{page_tap}/stats;csv",
                    "backend": "be", "server": "s1"},
        "probe p": {"type": "file", "path": "/", "interval": "200ms", "timeout": "150ms"},
        "service web": {"probes": "p", "backend": "be"},
        "service ghost": {"probes": "p", "backend": "nosuch"},
    })
    hap = h.Haproxy(backends={"be": [h.Server("s1", lb)], **others}, stats_tcp=True,
                    backend_lines=other_lines, start=False)
    hap.config_text += "\n" + "\n".join(page) + "\n"
    with open(hap.config_path, "w") as f:
        f.write(hap.config_text)
    hap.start()
    tap = h.Haproxy(backends={"tap_api": []}, name="tap", config_text="\n".join([
        "global", "    stats socket {socket} level admin", "",
        "defaults", "    mode tcp", "    timeout connect 1s",
        "    timeout client 5s", "    timeout server 5s", "",
        "listen tap_api", f"    bind 127.0.0.1:{api_tap}",
        f"    server lb {hap.stats_tcp_address()}", "",
        "listen tap_page", f"    bind 127.0.0.1:{page_tap}",
        f"    server lb 127.0.0.1:{page_port}", ""]))
    h.wait_all_status([hap], "UP", h.startup_bound_s(), "s1 UP")

    whole = hap.cmd("show stat;show servers state")
    h.expect(len(whole) > 2 * TARGET,
             f"the whole answer is well over {TARGET} bytes: {len(whole)}")

    def detail():
        code, _, body = h.http_request(f"unix:{sock}", "/status?fresh=1")
        h.expect_equal(code, 200, "the detail over the unix socket")
        import json
        return json.loads(body)

    def mine(doc, service):
        out = {}
        for src in doc.get("haproxy") or []:
            for row in src.get("this_node") or []:
                if row.get("service") == service:
                    out[src["source"]] = (src, row)
        return out

    def both_up(doc):
        rows = mine(doc, "web")
        return len(rows) == 2 and all(s["ok"] and r["found"] and r["status"] == "UP"
                                      for s, r in rows.values())

    h.section("the detail shows s1 from both filtered sources")
    doc = h.wait_until(detail, h.startup_bound_s(), "s1 UP on both sources",
                       ok=both_up, describe=lambda doc: mine(doc, "web"))
    rows = mine(doc, "web")
    api = next(r for s, r in rows.values() if s["source"].startswith("tcp:"))
    pg = next(r for s, r in rows.values() if s["source"].startswith("http:"))
    h.expect_equal(api["weight"], 100, "s1's weight on the Runtime API")
    h.expect_equal(api["initial_weight"], 100, "s1's configured weight (servers state)")
    h.expect_equal(pg["weight"], 100, "s1's weight on the scoped stats page")
    ghost = mine(doc, "ghost")
    h.expect(len(ghost) == 2 and all(s["ok"] and not r["found"] and
                                     "no server nosuch/s1" in (r["error"] or "")
                                     for s, r in ghost.values()),
             f"the backend HAProxy lacks reads as no server there: {ghost}")

    h.section("each answer holds the backend's servers, not the load balancer")
    a0, p0 = tap_counts(tap, "tap_api"), tap_counts(tap, "tap_page")
    for _ in range(READS):
        doc = detail()
        h.expect(both_up(doc), f"s1 UP on both sources: {mine(doc, 'web')}")
        time.sleep(2 * INTERVAL_MS / 1000.0)
    a1, p1 = tap_counts(tap, "tap_api"), tap_counts(tap, "tap_page")
    for what, (q0, b0), (q1, b1) in (("Runtime API", a0, a1), ("stats page", p0, p1)):
        q, b = q1 - q0, b1 - b0
        h.expect(q >= READS // 2, f"{what}: {q} questions over {READS} detail reads")
        h.expect(b / q <= TARGET,
                 f"{what}: {b} bytes over {q} answers, {b / q:.0f} each (at most {TARGET}; "
                 f"the whole is {len(whole)})")
        print(f"  {what}: {q} answers, {b / q:.0f} bytes each "
              f"(the whole show stat;show servers state: {len(whole)})")
    h.expect(lb.alive(), "lbagent still running")


if __name__ == "__main__":
    h.run(main)
