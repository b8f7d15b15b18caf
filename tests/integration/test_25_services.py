"""Several services on one node: [service web] and [service api] on the
shared port, selected by agent-send (`web\\n`, `api\\n`); [service batch]
with a `listen` port of its own (nothing sent there); probes named by no
service, and the node-wide markers, make the default service (nothing sent,
or an unknown name). Probes are `file` probes the test breaks by removing
their file.

- each service follows its own probes only; the default follows the
  unnamed probe, for no text and for an unknown name alike;
- a node-wide drain (state_dir/drain) drains every service;
  state_dir/web/drain drains web alone; state_dir/api/maint puts api alone
  in maint; state_dir/batch/drain drains batch alone;
- the real HAProxy with a backend per service (agent-send web, api,
  nothing on the shared port, nothing on batch's port): each server follows
  its own service;
- last: `batch\\n` on the shared port selects batch too (the issue: "HAProxy
  selects a service with agent-send "NAME\\n", or by connecting to the
  service's own listen port")."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 300
TIMEOUT_MS = 200
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
MARKER_S = h.marker_bound_s()
KEYS = ("web", "api", "batch-port", "default", "unknown")
UP = {k: b"up\n" for k in KEYS}


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    files = {n: os.path.join(d, f"{n}.ok") for n in ("webf", "apif", "batchf", "deff")}
    for f in files.values():
        h.write_atomic(f, "ok\n")
    batch_port = h.free_port()

    def fp(name, **keys):
        base = {"type": "file", "path": files[name], "interval": f"{INTERVAL_MS}ms",
                "timeout": f"{TIMEOUT_MS}ms"}
        base.update(keys)
        return base

    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes", "request_timeout": "300ms"},
        "probe webf": fp("webf"),
        "probe apif": fp("apif", on_crit="50%"),
        "probe batchf": fp("batchf", on_crit="60%"),
        "probe deff": fp("deff"),
        "service web": {"probes": "webf"},
        "service api": {"probes": "apif"},
        "service batch": {"probes": "batchf", "listen": f"127.0.0.1:{batch_port}"},
    })

    def ask_all():
        seen = {
            "web": lb.ask(send=b"web\n"),
            "api": lb.ask(send=b"api\n"),
            "batch-port": lb.ask(port=batch_port),
            "default": lb.ask(),
            "unknown": lb.ask(send=b"nosuch\n"),
        }
        for k, r in seen.items():
            if not h.well_formed(r):
                raise h.TestFailure(f"{k}: malformed reply {r!r}")
        return seen

    def wait_all(what, bound=BOUND_S, **want):
        """Waits until every reply is as given: bytes exact, a tuple
        (prefix,) a prefix; keys not given must be `up`."""
        def match(k, r):
            w = want.get(k.replace("-", "_"), b"up\n")
            return r.startswith(w[0]) if isinstance(w, tuple) else r == w
        seen = h.wait_until(ask_all, bound, what,
                            ok=lambda s: all(match(k, r) for k, r in s.items()))
        for k in want:
            print(f"   {k}: {seen[k.replace('_', '-')]!r}", flush=True)
        return seen

    h.section("every service up")
    wait_all("`up` from every service")
    hap = h.Haproxy(backends={
        "bweb": [h.Server("s1", lb, agent_send="web")],
        "bapi": [h.Server("s1", lb, agent_send="api")],
        "bdef": [h.Server("s1", lb, agent_send=None)],
        "bbatch": [h.Server("s1", batch_port, agent_send=None)],
    })
    for be in hap.backends:
        hap.wait_status(be, "s1", "UP", h.startup_bound_s(), f"{be}/s1 UP at start",
                        ok=lambda st: h.agent_result(st) == "L7OK")

    def hap_view():
        """{backend: (status, weight)}, any DOWN ("DOWN (agent)") as "DOWN"."""
        out = {}
        rows = hap.stat_many([(be, "s1") for be in hap.backends])
        for be in hap.backends:
            st = rows[(be, "s1")]
            status = "DOWN" if st["status"].startswith("DOWN") else st["status"]
            out[be] = (status, st["weight"])
        return out

    def wait_hap(what, bound=BOUND_S, **want):
        """Waits until each backend shows want[be] ((status, weight)), the
        others ("UP", "100")."""
        full = {be: want.get(be, ("UP", "100")) for be in hap.backends}
        return h.wait_until(hap_view, bound, what, ok=lambda v: v == full)

    h.section("web's probe fails: web alone down")
    os.unlink(files["webf"])
    wait_all("web down, the others up", web=(b"down #webf: ",))
    wait_hap("HAProxy: bweb down, the others UP", bweb=("DOWN", "100"))
    h.write_atomic(files["webf"], "ok\n")
    wait_all("`up` everywhere after webf is back")

    h.section("api's probe fails: api alone at 50%")
    os.unlink(files["apif"])
    wait_all("api at 50%, the others up", api=(b"up 50% #apif: ",))
    wait_hap("HAProxy: bapi at weight 50, the others 100", bapi=("UP", "50"))
    h.write_atomic(files["apif"], "ok\n")
    wait_all("`up` everywhere after apif is back", bound=BOUND_S + 10)
    wait_hap("HAProxy: every server back to UP, 100")

    h.section("batch's probe fails: batch alone at 60%, on its own port")
    os.unlink(files["batchf"])
    wait_all("batch at 60%, the others up", batch_port=(b"up 60% #batchf: ",))
    wait_hap("HAProxy: bbatch at weight 60, the others 100", bbatch=("UP", "60"))
    h.write_atomic(files["batchf"], "ok\n")
    wait_all("`up` everywhere after batchf is back", bound=BOUND_S + 10)
    wait_hap("HAProxy: every server back to UP, 100")

    h.section("the default service's probe fails: default (and unknown names) down")
    os.unlink(files["deff"])
    wait_all("default down, the services up", default=(b"down #deff: ",),
             unknown=(b"down #deff: ",))
    wait_hap("HAProxy: bdef down, the others UP", bdef=("DOWN", "100"))
    h.write_atomic(files["deff"], "ok\n")
    wait_all("`up` everywhere after deff is back")

    h.section("node-wide drain: every service drains")
    lb.set_marker("drain", "node work\n")
    wait_all("`drain up #node work` from every service", bound=MARKER_S,
             **{k.replace("-", "_"): b"drain up #node work\n" for k in KEYS})
    h.wait_until(hap_view, MARKER_S, "HAProxy: every server DRAIN (agent)",
                 ok=lambda v: all(s == "DRAIN (agent)" for s, _ in v.values()))
    lb.clear_marker("drain")
    h.wait_until(hap_view, MARKER_S + 5, "HAProxy: every server UP after the node drain",
                 ok=lambda v: all(s == "UP" for s, _ in v.values()))
    for be in hap.backends:
        ss = hap.server_state(be, "s1")
        h.expect(ss["srv_admin_state"] == 0, f"{be}/s1 left with an admin flag: {ss}")
    wait_all("`up` everywhere after the node drain", bound=MARKER_S + 10)

    def service_marker(service, kind, text, want, be, status):
        h.section(f"state_dir/{service}/{kind}: {service} alone")
        # lbagent made the service's marker directory at start-up.
        h.expect(os.path.isdir(os.path.join(lb.state_dir, service)),
                 f"state_dir/{service}/ should exist for its markers")
        path = os.path.join(lb.state_dir, service, kind)
        h.write_atomic(path, text + "\n")
        wait_all(f"{service} {kind}, the others up", bound=MARKER_S,
                 **{want: f"{kind} up #{text}\n".encode()})
        h.wait_until(hap_view, MARKER_S, f"HAProxy: {be} {status}, the others UP",
                     ok=lambda v: v[be][0] == status and
                     all(v[b][0] == "UP" for b in v if b != be))
        h.hold_for(hap_view, 10 * h.AGENT_INTER_MS / 1000, "the other servers staying UP",
                   ok=lambda v: all(v[b][0] == "UP" for b in v if b != be))
        os.unlink(path)
        h.wait_until(hap_view, MARKER_S + 5, f"HAProxy: every server UP after {service}'s {kind}",
                     ok=lambda v: all(s == "UP" for s, _ in v.values()))
        ss = hap.server_state(be, "s1")
        h.expect(ss["srv_admin_state"] == 0, f"{be}/s1 left with an admin flag: {ss}")
        wait_all(f"`up` everywhere after {service}'s {kind}", bound=MARKER_S + 10)

    service_marker("web", "drain", "web deploy", "web", "bweb", "DRAIN (agent)")
    service_marker("api", "maint", "api migration", "api", "bapi", "MAINT")
    service_marker("batch", "drain", "batch pause", "batch_port", "bbatch", "DRAIN (agent)")

    h.section("`batch\\n` on the shared port selects batch as well as its own port does")
    os.unlink(files["batchf"])
    want = wait_all("batch at 60% on its own port", batch_port=(b"up 60% #batchf: ",))
    shared = lb.ask(send=b"batch\n")
    h.expect_equal(shared, want["batch-port"],
                   "reply to `batch\\n` on the shared port (agent-send selects a service), "
                   "compared with the reply on batch's own port")


h.run(main)
