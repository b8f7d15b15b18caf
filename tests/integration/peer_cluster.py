"""What the peer-guard scenarios (test_45, test_46) share: three nodes,
each its own lbagent with its own HTTP API and a local HTTP dependency the
test flips (a real HTTP server answering /dep with 200 or 503), checked by
one or two real HAProxy instances whose servers are named after the nodes;
a lagged view of a peer's status; and, in one place, the field names of the
peer guard's status (they are the one thing most likely to move).

A scenario builds a Cluster, starts it, acts on it and closes it: every
scenario runs on fresh processes."""

import json
import os
import re
import threading
import time

import harness as h

# ------------------------------------------------------------------ settings
# Short windows, so that a scenario takes seconds; every bound below is
# derived from them with a generous margin (a liveness bound, never a speed
# requirement).

DOWN_AFTER_S = 1.0
UP_AFTER_S = 2.0
PROBE_INTERVAL_MS = 100
PROBE_TIMEOUT_MS = 90
PEER_INTERVAL_MS = 200
PEER_TIMEOUT_MS = 500
ALONE_GRACE_S = 3.0
RECHECK_AFTER_S = 0.5
JUST_OUT_S = 3.0
TOKEN = "peer-guard-test-token"
SERVICE = ""            # the default service
PROBE = "dep"           # the failing probe's name, as the hold reason gives it

# A fresh round of questions: all sources are asked at once, each within
# the peer timeout; a decision may wait for the round in flight and then a
# new one. Four timeouts and an interval leave a wide margin over that.
ROUND_S = 4 * PEER_TIMEOUT_MS / 1000.0 + PEER_INTERVAL_MS / 1000.0
# A probe's change counted; HAProxy applying a changed reply.
PROBE_S = h.probe_bound_s(PROBE_INTERVAL_MS, PROBE_TIMEOUT_MS)
HAP_S = h.marker_bound_s()
# From the dependency failing to HAProxy showing the node out.
OUT_S = PROBE_S + DOWN_AFTER_S + ROUND_S + HAP_S
# Holds: long enough that a wrong going-out (down_after, a round, HAProxy's
# agent check) would have shown.
HOLD_S = DOWN_AFTER_S + ROUND_S + 2.0

HOLD_REASON_RE = re.compile(
    rb"^up( [0-9]+%)? #peer-guard: " + PROBE.encode() +
    rb" failing but no other node serving\n$")


def peer_guard_config(**over):
    """The [peers] keys every node gets (agents and haproxy are added).
    The steady pace is the fast one: every bound here counts rounds at
    PEER_INTERVAL_MS, whatever the state (test_91 sets them apart)."""
    keys = {"timeout": f"{PEER_TIMEOUT_MS}ms", "interval": f"{PEER_INTERVAL_MS}ms",
            "steady_interval": f"{PEER_INTERVAL_MS}ms",
            "alone_grace": f"{ALONE_GRACE_S:g}s",
            "recheck_after": f"{int(RECHECK_AFTER_S * 1000)}ms",
            "just_out": f"{JUST_OUT_S:g}s"}
    keys.update(over)
    return keys


# ------------------------------------------- the status fields, in one place
# Field names of the peer guard's part of GET /status (issue 6). Everything
# the scenarios read from that document goes through these helpers. A part
# that is not there raises Missing: "not yet" inside wait_doc(), an error
# (with the document) anywhere else.

class Missing(LookupError):
    """A part of the status document is not there (yet)."""

def service_doc(doc, service=SERVICE):
    for s in doc.get("services") or []:
        if s.get("name") == service:
            return s
    raise Missing(f"no service {service!r} in /status: {short(doc)}")


def guard(doc, service=SERVICE):
    """The service's peer_guard object: state, reason, other_serving, ..."""
    g = service_doc(doc, service).get("peer_guard")
    if not isinstance(g, dict):
        raise Missing(f"no peer_guard object for service {service!r}: "
                            f"{short(service_doc(doc, service))}")
    return g


def guard_state(doc, service=SERVICE):
    return guard(doc, service).get("state")


def other_serving(doc, service=SERVICE):
    return guard(doc, service).get("other_serving")


def round_started_at(doc, fetched_at, service=SERVICE):
    """When (time.monotonic(), fetched_at being when the document was
    asked for) the round the guard rests on started; None before any."""
    age = guard(doc, service).get("asked_s")
    return None if age is None else fetched_at - age


def marker_warning(doc, service=SERVICE):
    return guard(doc, service).get("marker_warning")


def peer_rows(doc):
    """The detail's peers: [{agent, node_id, self, serving, why_not, ...}]."""
    rows = doc.get("peers")
    if not isinstance(rows, list):
        raise Missing(f"no `peers` list in the detail /status: {short(doc)}")
    return rows


def _base(url):
    """A peer's base URL, as configured ("/status" is appended to it)."""
    url = url.rstrip("/")
    return url[:-len("/status")] if url.endswith("/status") else url


def peer_row(doc, agent_url):
    """The peer listed by agent_url (the status gives it with /status)."""
    for r in peer_rows(doc):
        if _base(r.get("agent") or "") == _base(agent_url):
            return r
    raise Missing(f"no peer {agent_url} in /status peers: {peer_rows(doc)}")


def peer_serving(row):
    return row.get("serving")


def peer_is_self(row):
    return row.get("self")


def peer_why_not(row):
    return row.get("why_not")


def lb_rows(doc):
    """The detail's load balancers: [{source, ok, error, this_node: [...]}]."""
    rows = doc.get("haproxy")
    if not isinstance(rows, list):
        raise Missing(f"no `haproxy` list in the detail /status: {short(doc)}")
    return rows


def lb_ok(row):
    return row.get("ok")


def this_node(row, service=SERVICE):
    """This node's server as one load balancer shows it: found, status,
    weight, initial_weight, agent_status, warnings."""
    for t in row.get("this_node") or []:
        if t.get("service", SERVICE) == service:
            return t
    raise Missing(f"no this_node entry for service {service!r} in {row}")


def lb_row(doc, source):
    for r in lb_rows(doc):
        if r.get("source") == source:
            return r
    raise Missing(f"no load balancer {source} in /status haproxy: {lb_rows(doc)}")


def level_age_s(doc, service=SERVICE):
    """(state, seconds) of the service's transition: "down", "up"... and
    how long it has been in that level by lbagent's own clock, from the
    same read of the detail."""
    t = service_doc(doc, service).get("transition")
    if not isinstance(t, dict) or not isinstance(t.get("since_s"), (int, float)):
        raise Missing(f"no transition with since_s for service {service!r}: "
                      f"{short(service_doc(doc, service))}")
    return t.get("state"), t["since_s"]


def past_just_out(doc, service=SERVICE):
    """Out for longer than just_out by lbagent's own clock: its look-again
    is over, so nothing brings it back latched any more (alone_grace
    still may)."""
    state, age = level_age_s(doc, service)
    return state == "down" and age > JUST_OUT_S


def wait_past_just_out(node, what=None, timeout_s=None):
    """Waits until node is out and past just_out (see past_just_out)."""
    return wait_doc(node, past_just_out, timeout_s or (JUST_OUT_S + ROUND_S + 2.0),
                    what or f"{node.name} out for longer than just_out")


def public_server(doc, service=SERVICE):
    """The server name a node publishes for peers (public /status)."""
    return service_doc(doc, service).get("server")


def wait_doc(node, pred, timeout_s, what, public=False):
    """Polls the node's detail (public: its public) /status until pred(doc)
    is true; a Missing part, or a failed request, is "not yet", and so is
    any other exception from pred (a null field it did not expect): the
    timeout names it. Returns the document."""
    timeout_s *= h._time_scale()
    deadline = time.monotonic() + timeout_s
    last = "<nothing observed>"
    slip = None
    while True:
        doc = None
        try:
            doc = node.public() if public else node.detail()
            if pred(doc):
                return doc
            last = short(doc)
        except h.Skip:
            raise
        except (Missing, OSError, ValueError, h.TestFailure) as e:
            last = f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 - a predicate bug, kept
            slip = f"{type(e).__name__}: {e} on {short(doc)}"
            last = slip
        if time.monotonic() >= deadline:
            also = f"\n  and earlier {slip}" if slip is not None and slip != last else ""
            raise h.TestFailure(f"timed out after {timeout_s:.1f} s waiting for {what}\n"
                                f"  last observed: {last}{also}")
        time.sleep(h.POLL_S)


def short(obj, limit=1500):
    text = json.dumps(obj, sort_keys=True) if not isinstance(obj, str) else obj
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------ the nodes

class Node:
    """One node: its dependency (HTTP /dep, 200 or 503), its lbagent (agent
    port, HTTP API with a token, state dir) and its name (node_id, and the
    HAProxy server name)."""

    def __init__(self, name, weight=100, probes=None):
        self.name = name
        self.weight = weight
        # Probe name -> extra keys (e.g. on_crit); each checks /NAME on dep.
        self.probes = probes or {PROBE: {}}
        self.dep = h.HttpStub(name=f"dep-{name}")
        for p in self.probes:
            self.dep.set(f"/{p}", 200, "ok\n")
        self.agent_port = h.free_port()
        self.http_port = h.free_port()
        self.token_file = h.env().path(h.env().unique_name(f"token-{name}"))
        h.write_atomic(self.token_file, TOKEN + "\n", mode=0o600)
        self.lb = None
        self.peers_keys = None

    def url(self):
        """This node's HTTP API base URL, as peers list it."""
        return f"http://127.0.0.1:{self.http_port}"

    def config(self, peers_keys, agent_over=None, haproxy_keys=None):
        agent = {"listen": f"127.0.0.1:{self.agent_port}", "node_id": self.name,
                 "reply_reasons": "yes", "down_after": f"{DOWN_AFTER_S:g}s",
                 "up_after": f"{UP_AFTER_S:g}s", "degrade_after": "0",
                 "restore_after": "0", "ramp": "0", "flap_limit": "0"}
        agent.update(agent_over or {})
        sections = {
            "agent": agent,
            "http": {"listen": f"127.0.0.1:{self.http_port}", "token_file": self.token_file},
        }
        for p, keys in self.probes.items():
            sections[f"probe {p}"] = {"type": "http", "url": self.dep.url(f"/{p}"),
                                      "interval": f"{PROBE_INTERVAL_MS}ms",
                                      "timeout": f"{PROBE_TIMEOUT_MS}ms", **keys}
        if peers_keys is not None:
            sections["peers"] = peers_keys
        if haproxy_keys is not None:
            sections["haproxy"] = haproxy_keys
        return sections

    def start(self, peers_keys, agent_over=None, haproxy_keys=None):
        self.peers_keys = peers_keys
        self.lb = h.Lbagent(self.config(peers_keys, agent_over, haproxy_keys),
                            name=f"lbagent-{self.name}", port=self.agent_port)

    # -- the dependency
    def fail(self, probe=PROBE):
        self.dep.set(f"/{probe}", 503, "unavailable\n")

    def heal(self, probe=PROBE):
        self.dep.set(f"/{probe}", 200, "ok\n")

    # -- what it says
    def ask(self):
        return self.lb.ask()

    def public(self):
        status, doc = h.http_json(self.http_port, "/status")
        h.expect_equal(status, 200, f"{self.name}: public /status code")
        return doc

    def detail(self):
        status, doc = h.http_json(self.http_port, "/status?fresh=1",
                                  {"Authorization": f"Bearer {TOKEN}"})
        h.expect_equal(status, 200, f"{self.name}: detail /status code")
        h.expect(doc.get("detail") is True, f"{self.name}: /status with the token is "
                 f"not the detail: {short(doc)}")
        return doc

    def log_lines(self, *words, since=0):
        """Log lines (after mark `since`) holding every word, any case."""
        low = [w.lower() for w in words]
        return [ln for ln in self.lb.log_since(since).splitlines()
                if all(w in ln.lower() for w in low)]

    def hold_warnings(self, since=0):
        """The guard's own warnings that no other node serves (not the
        `reply changed: "up #peer-guard: ..."` lines, which quote the
        reply)."""
        return [ln for ln in self.log_lines("peer-guard", "no other node serving",
                                            since=since)
                if "reply changed" not in ln]

    def marker_warnings(self, since=0):
        """The guard's warnings that a marker was obeyed with no other node
        serving ("no other node is serving" in the implementation's words)."""
        return [ln for ln in self.log_lines("peer-guard", "marker", since=since)
                if re.search(r"no other node (is )?serving", ln) and
                "reply changed" not in ln]

    def __repr__(self):
        return f"<Node {self.name}>"


class Cluster:
    """Nodes n1, n2, n3 (by default) and `haproxies` HAProxy instances, each
    with backend `be` and one server per node (named after it, agent-check
    to its lbagent). sources: per HAProxy, how the lbagents read it:
    "unix" (the admin socket), "tcp" (a TCP Runtime API socket) or "http"
    (the stats page's CSV), written as [haproxy] sources; None: no
    [haproxy] section at all.

    agents(node, cluster) gives a node's [peers] agents (default: every
    node, itself included, in the same order everywhere); lbs_only=True
    gives none (the guard from the load balancers alone); peers_over,
    haproxy_over and agent_over are extra [peers] / [haproxy] / [agent]
    keys; peers=False leaves [peers] and [haproxy] out (the scaffolding
    run, before the feature); probes: {name: extra keys} for every node
    (default: `dep` alone)."""

    def __init__(self, names=("n1", "n2", "n3"), *, haproxies=1, sources=("unix",),
                 weights=None, agents=None, peers_over=None, agent_over=None, peers=None,
                 probes=None, lbs_only=False, haproxy_over=None):
        if peers is None:
            peers = os.environ.get("PEERTEST_NO_PEERS") != "1"
        self.peers = peers
        self.nodes = [Node(n, (weights or {}).get(n, 100), probes) for n in names]
        self.by_name = {n.name: n for n in self.nodes}
        self.haps = []
        for _ in range(haproxies):
            servers = [h.Server(n.name, n.agent_port, weight=n.weight) for n in self.nodes]
            self.haps.append(h.Haproxy(servers, start=False, stats_http=True, stats_tcp=True))
        self.sources = sources
        self.agents = agents or (lambda node, cl: [n.url() for n in cl.nodes])
        self.peers_over = peers_over or {}
        self.haproxy_over = haproxy_over or {}
        self.lbs_only = lbs_only
        self.agent_over = agent_over or {}
        self._extra = []            # lagged views and stubs to close with the cluster

    def __getitem__(self, name):
        return self.by_name[name]

    @property
    def hap(self):
        return self.haps[0]

    def source_text(self, hap, form):
        if form == "unix":
            return f"unix:{hap.socket_path}"
        if form == "tcp":
            return f"tcp:{hap.stats_tcp_address()}"
        if form == "http":
            return hap.stats_csv_url()
        raise ValueError(form)

    def haproxy_sources(self):
        if self.sources is None:
            return None
        return [self.source_text(hp, f) for hp, f in zip(self.haps, self.sources)]

    def peers_keys(self, node):
        if not self.peers:
            return None
        keys = {} if self.lbs_only else {"agents": self.agents(node, self)}
        keys.update(peer_guard_config())
        over = self.peers_over(node) if callable(self.peers_over) else self.peers_over
        keys.update(over or {})
        return keys

    def haproxy_keys(self, node):
        """The [haproxy] section of a node: the load balancers it reads."""
        srcs = self.haproxy_sources()
        if not self.peers or not (srcs or self.haproxy_over):
            return None
        keys = {"sources": srcs, "backend": "be"} if srcs else {}
        keys.update(self.haproxy_over)
        return keys

    def start(self):
        """Starts every lbagent, then every HAProxy; waits until every
        server is UP everywhere and every node's probe has settled."""
        for n in self.nodes:
            n.start(self.peers_keys(n), self.agent_over, self.haproxy_keys(n))
        for hp in self.haps:
            hp.start()
        h.wait_all_status(self.haps, "UP", h.startup_bound_s() + PROBE_S,
                          "every server UP in every HAProxy at start")
        for n in self.nodes:
            h.wait_reply(n.lb, b"up\n", f"{n.name}: `up` at start", timeout_s=PROBE_S)

    def add(self, obj):
        self._extra.append(obj)
        return obj

    def close(self):
        """Stops everything this cluster started (the harness would at exit;
        scenarios run on fresh processes, so each closes its own)."""
        objs = list(self.haps)
        for n in self.nodes:
            objs += [n.lb, n.dep] if n.lb is not None else [n.dep]
        for x in objs + self._extra:
            x.close()
            h.env().forget(x)

    # -- HAProxy's view
    def stat(self, name, hap=None):
        return (hap or self.hap).stat("be", name)

    def status(self, name, hap=None):
        """"UP", "DOWN", "MAINT", "DRAIN"... (the "(agent)" suffix dropped)."""
        return self.stat(name, hap)["status"].split(" ")[0]

    def statuses(self):
        """{(hap index, node name): status} for every HAProxy, each
        HAProxy's from one `show stat` (one moment of it)."""
        out = {}
        for i, hp in enumerate(self.haps):
            rows = hp.stat_many([("be", n.name) for n in self.nodes])
            for n in self.nodes:
                out[(i, n.name)] = rows[("be", n.name)]["status"].split(" ")[0]
        return out

    def describe(self, seen=None):
        seen = seen if seen is not None else self.statuses()
        return ", ".join(f"hap{i + 1}:{n}={s}" for (i, n), s in sorted(seen.items()))

    def wait_status(self, name, status, timeout_s, what):
        """Waits until every HAProxy shows node `name` in `status`."""
        return h.wait_until(self.statuses, timeout_s, what,
                            ok=lambda seen: all(s == status for (_, n), s in seen.items()
                                                if n == name),
                            describe=self.describe)

    def wait_out(self, name, what=None, timeout_s=None):
        return self.wait_status(name, "DOWN", timeout_s or OUT_S,
                                what or f"{name} DOWN in every HAProxy")

    def wait_in(self, name, what=None, timeout_s=None):
        return self.wait_status(name, "UP", timeout_s or OUT_S,
                                what or f"{name} UP in every HAProxy")

    def hold(self, want, seconds, what):
        """Asserts every HAProxy keeps showing each {name: status} of want."""
        return h.hold_for(self.statuses, seconds, what,
                          ok=lambda seen: all(s == want[n] for (_, n), s in seen.items()
                                              if n in want),
                          describe=self.describe)

    def up_names(self):
        """Nodes UP in every HAProxy."""
        seen = self.statuses()
        return [n.name for n in self.nodes
                if all(s == "UP" for (_, nn), s in seen.items() if nn == n.name)]


def wait_held(node, what=None, timeout_s=None):
    """Waits until the node's reply is the peer guard's hold: `up` with
    `#peer-guard: dep failing but no other node serving`."""
    return h.wait_reply(node.lb, lambda r: HOLD_REASON_RE.match(r) is not None,
                        what or f"{node.name}: held in by the peer guard",
                        timeout_s=timeout_s or (PROBE_S + DOWN_AFTER_S + ROUND_S + 2.0))


# ------------------------------------------------------------- stand-ins

class LaggedView:
    """A peer's /status as it was `lag_s` ago: an HTTP server on 127.0.0.1
    that asks the upstream lbagent's public GET /status every 100 ms and
    answers each GET /status with the newest answer at least lag_s old (the
    oldest one at first). Rounds through it stay fast; only what they see
    lags. So two nodes deciding within lag_s of each other each see the
    other still serving."""

    POLL_S = 0.1

    def __init__(self, upstream_port, lag_s):
        self.upstream_port = upstream_port
        self.lag_s = lag_s
        self._lock = threading.Lock()
        self._seen = []             # (monotonic time, _Answer), oldest first
        self._stop = threading.Event()
        self.stub = h.HttpStub(name=f"lagged-{upstream_port}")
        self.stub.set_matcher(self._answer)
        self.port = self.stub.port
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        h.env().register(self)

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def served(self):
        """Requests answered so far."""
        return self.stub.count("/status")

    def _poll(self):
        while not self._stop.wait(self.POLL_S):
            try:
                status, hdrs, body = h.http_request(self.upstream_port, "/status",
                                                    timeout_s=2.0)
                a = h._Answer(status, body, hdrs.get("content-type", "application/json"))
            except OSError as e:
                a = h._Answer(502, f"upstream: {e}\n")
            with self._lock:
                self._seen.append((time.monotonic(), a))
                if len(self._seen) > 2000:
                    del self._seen[:1000]

    def _answer(self, path):
        if path != "/status":
            return None
        cut = time.monotonic() - self.lag_s
        with self._lock:
            if not self._seen:
                return h._Answer(503, "no answer from upstream yet\n")
            best = self._seen[0][1]
            for t, a in self._seen:
                if t > cut:
                    break
                best = a
            return best

    def close(self):
        self._stop.set()
        self._thread.join(timeout=3)
        self.stub.close()
        h.env().forget(self.stub)

    def diagnostics(self):
        return f"== {self!r}: {self.served()} answers"

    def __repr__(self):
        return f"<LaggedView :{self.port} -> {self.upstream_port} ({self.lag_s:g} s behind)>"


def run_scenarios(scenarios):
    """Runs each (title, function) in order; PEERTEST_ONLY=2,5 runs those
    only (the number before the title's first dot)."""
    h.require_haproxy()
    h.require_kinds("http")
    only = {s.strip() for s in os.environ.get("PEERTEST_ONLY", "").split(",") if s.strip()}
    for title, fn in scenarios:
        if only and title.split(".")[0] not in only:
            continue
        h.section(title)
        fn()
