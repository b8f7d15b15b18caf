"""The shipped haproxy.cfg (conf/examples/haproxy.cfg), run as it is.

1. docs/haproxy.md shows the same text, byte for byte, as the block under
   its "A complete haproxy.cfg" heading: the documentation cannot drift
   from the file that is tested here.
2. A real HAProxy runs that file with only addresses, ports and paths
   replaced (the nodes' service addresses 10.0.1.1N by loopback stand-ins,
   their management addresses 10.0.0.1N by 127.0.2.1N where each node's
   lbagent listens, agent-port 9505 by a free port, the socket and the
   state file by temporary paths, the frontends' ports by free ones);
   every keyword and timer stays, agent-inter 2s included. Two lbagent
   nodes, each with [service web] and [service api] on the one agent port:
   - all four servers come UP at weight 100;
   - node1's web drain marker: web/node1 goes DRAIN, api/node1 and both of
     node2's servers stay UP at 100 (agent-send picks the service);
   - node2's api probe fails with on_crit = 50%: api/node2 goes to weight
     50, web/node2 stays at 100;
   - both undone: all four UP at weight 100 again."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EXAMPLE = os.path.join(ROOT, "conf", "examples", "haproxy.cfg")
DOC = os.path.join(ROOT, "docs", "haproxy.md")
HEADING = "## A complete haproxy.cfg"
NODES = ("node1", "node2")
SERVERS = [(be, n) for be in ("web", "api") for n in NODES]
# agent-inter 2s as shipped: a marker shows within 1 s, HAProxy acts at its
# next check.
BOUND_S = h.marker_bound_s(2000) + h.probe_bound_s(300, 200)


def doc_block():
    """The indented block that follows HEADING in docs/haproxy.md, dedented."""
    with open(DOC) as f:
        lines = f.read().split("\n")
    try:
        i = lines.index(HEADING)
    except ValueError:
        raise h.TestFailure(f"{DOC} has no line {HEADING!r}") from None
    i += 1
    while i < len(lines) and not lines[i].startswith("    "):
        i += 1
    block = []
    while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
        block.append(lines[i][4:])
        i += 1
    while block and not block[-1].strip():
        block.pop()
    return "\n".join(block) + "\n"


def main():
    h.section("docs/haproxy.md shows conf/examples/haproxy.cfg as it is")
    with open(EXAMPLE) as f:
        example = f.read()
    h.expect_equal(doc_block(), example, f"the block under {HEADING!r} in {DOC}")

    h.require_kinds("file")
    agent_port = h.free_port()
    lbs, ok_files, stubs = {}, {}, {}
    for i, node in enumerate(NODES, 1):
        mgmt, svc = f"127.0.2.1{i}", f"127.0.1.1{i}"
        h.require_source(mgmt)
        h.require_source(svc)
        stubs[node] = h.BackendStub(svc)
        files = {s: os.path.join(h.tmpdir(), f"{node}-{s}.ok") for s in ("web", "api")}
        for p in files.values():
            h.write_atomic(p, "ok\n")
        ok_files[node] = files
        port = h.free_port()

        def probe(path, **kw):
            return {"type": "file", "path": path, "interval": "300ms", "timeout": "200ms", **kw}

        lbs[node] = h.Lbagent({
            "agent": {**h.IMMEDIATE, "reply_reasons": "yes",
                      "listen": f"127.0.0.1:{port}, {mgmt}:{agent_port}"},
            "probe web-http": probe(files["web"]),
            "probe api-http": probe(files["api"], on_crit="50%"),
            "service web": {"probes": "web-http"},
            "service api": {"probes": "api-http"},
        }, name=node, port=port)

    text = example
    subs = [("/run/haproxy/admin.sock", "{socket}"),
            ("/var/lib/haproxy/server-state", os.path.join(h.tmpdir(), "server-state")),
            ("bind :80\n", f"bind 127.0.0.1:{h.free_port()}\n"),
            ("bind :8000\n", f"bind 127.0.0.1:{h.free_port()}\n"),
            ("agent-port 9505", f"agent-port {agent_port}")]
    for i, node in enumerate(NODES, 1):
        for port in ("8080", "8081"):
            subs.append((f"10.0.1.1{i}:{port}", f"127.0.1.1{i}:{stubs[node].port}"))
        subs.append((f"agent-addr 10.0.0.1{i} ", f"agent-addr 127.0.2.1{i} "))
    for old, new in subs:
        h.expect(old in text, f"the example no longer has {old!r}: update this test's "
                 f"substitutions")
        text = text.replace(old, new)
    h.expect("10.0." not in text, f"an address left unreplaced:\n{text}")
    hap = h.Haproxy(backends={be: [] for be in ("web", "api")}, config_text=text)
    hap.backends = {be: [h.Server(n, 0) for n in NODES] for be in ("web", "api")}

    def seen():
        return {f"{be}/{n}": (st["status"], st["weight"])
                for (be, n), st in hap.stat_many(SERVERS).items()}

    def wait_seen(want, what):
        return h.wait_until(seen, BOUND_S, what, ok=lambda s: s == want)

    all_up = {f"{be}/{n}": ("UP", "100") for be, n in SERVERS}
    h.section("all four servers UP at weight 100")
    wait_seen(all_up, "every server UP at weight 100")

    h.section("node1's web drained: web/node1 alone goes DRAIN")
    os.makedirs(os.path.join(lbs["node1"].state_dir, "web"), exist_ok=True)
    h.write_atomic(os.path.join(lbs["node1"].state_dir, "web", "drain"), "release 4.2\n")
    drained = dict(all_up, **{"web/node1": ("DRAIN (agent)", "100")})
    wait_seen(drained, "web/node1 DRAIN, the others UP at 100")

    h.section("node2's api degraded: api/node2 at weight 50")
    os.unlink(ok_files["node2"]["api"])
    degraded = dict(drained, **{"api/node2": ("UP", "50")})
    wait_seen(degraded, "api/node2 at 50, web/node1 DRAIN, the others UP at 100")

    h.section("both undone: all four UP at weight 100")
    os.unlink(os.path.join(lbs["node1"].state_dir, "web", "drain"))
    h.write_atomic(ok_files["node2"]["api"], "ok\n")
    wait_seen(all_up, "every server UP at weight 100 again")
    for node, lb in lbs.items():
        h.expect(lb.alive(), f"{node}'s lbagent died")


h.run(main)
