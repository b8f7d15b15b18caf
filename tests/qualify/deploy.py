"""The deployment a qualification scenario runs on, fresh each time, all on
loopback: two HAProxy instances (mode http frontend `fe`, backend `be`
with one server per node, each with an agent-check to that node's lbagent
from the instance's own source address and an HTTP check on the app's
/alive), three nodes. A node is an application server the harness
controls (App) and its own lbagent, which reaches its dependency (the
app's /health), its peers' HTTP APIs and both load balancers' stats each
through a FaultProxy of its own."""

import http.server
import os
import socketserver
import threading
import time
import urllib.parse

import harness as h
from faults import FaultProxy, listen_socket

TOKEN = "qualify-token"


class Timings:
    """Every time value the deployment uses, in ms; shortened for the
    bounded tier, longer for --full. Stated in the report."""

    def __init__(self, full=False):
        k = 2 if full else 1
        self.agent_inter_ms = 500
        self.check_inter_ms = 1000          # HAProxy's own HTTP check on /alive
        # A probe timeout with room for a shared, loaded 2-core machine
        # (the dependency is behind a Python proxy in the same process as
        # the workload): a spurious timeout is a failed evaluation.
        self.probe_interval_ms = 500
        self.probe_timeout_ms = 400
        self.warn_latency_ms = 200          # the probe's warn: on_warn = 50%
        self.slow_health_ms = 280           # a degraded dependency's latency
        self.degrade_after_ms = 1000
        self.restore_after_ms = 1000
        self.down_after_ms = 1000 * k
        self.up_after_ms = 2000 * k
        self.ramp_ms = 3000 * k
        self.ramp_start = "25%"
        self.peer_interval_ms = 250
        self.peer_timeout_ms = 500
        self.alone_grace_ms = 5000 * k
        self.recheck_after_ms = 500
        self.just_out_ms = 3000 * k
        self.short_ms = 20                  # a short client request's work
        self.long_ms = 3000                 # a long one's
        self.reply_deadline_ms = 1000       # an agent-port answer, at most
        self.marker_slack_ms = 500          # sampling and the check's own time

    def marker_bound_ms(self):
        """lbagent's promise: a marker shows within 1 s + one agent-inter
        (plus marker_slack_ms: the sampler's 100 ms and the check itself)."""
        return 1000 + self.agent_inter_ms + self.marker_slack_ms

    def as_dict(self):
        return dict(vars(self))


def _ms(v):
    return f"{int(v)}ms"


# ------------------------------------------------------------------ the app

class _AppServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, handler):
        # On a port no lbagent has reserved (see faults.listen_socket).
        super().__init__(("127.0.0.1", 0), handler, bind_and_activate=False)
        self.socket.close()
        self.socket = listen_socket()
        self.server_address = self.socket.getsockname()
        self.server_name, self.server_port = self.server_address[:2]


class App:
    """A node's application server. GET /alive: 200 while the process is
    up (HAProxy's own check); GET /health: 200, or 503 while the
    dependency is failing (lbagent's probe); GET /work?ms=N: answers after
    N ms (+ extra_ms) with X-Node and the node's name in the body, 503
    while the dependency fails, or `status` when set."""

    def __init__(self, name):
        self.name = name
        self.healthy = True
        self.extra_ms = 0
        self.status = 200
        self.health_delay_ms = 0
        self._lock = threading.Lock()
        self.in_flight = {}         # id -> (start, ms)
        self.served = 0
        app = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                pass

            def do_GET(self):
                app._handle(self)

        self.server = _AppServer(Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()

    def __repr__(self):
        return f"<App {self.name} :{self.port}>"

    def _reply(self, req, status, body, headers=()):
        data = body.encode()
        try:
            req.send_response(status)
            req.send_header("Content-Type", "text/plain")
            req.send_header("Content-Length", str(len(data)))
            req.send_header("X-Node", self.name)
            for k, v in headers:
                req.send_header(k, v)
            req.end_headers()
            req.wfile.write(data)
        except OSError:
            pass

    def _handle(self, req):
        url = urllib.parse.urlsplit(req.path)
        if url.path == "/alive":
            return self._reply(req, 200, "alive\n")
        if url.path == "/health":
            if self.health_delay_ms:
                time.sleep(self.health_delay_ms / 1000.0)
            return self._reply(req, 200 if self.healthy else 503,
                               "ok\n" if self.healthy else "dependency failing\n")
        if url.path == "/work":
            q = urllib.parse.parse_qs(url.query)
            try:
                ms = int(q.get("ms", ["0"])[0])
            except ValueError:
                ms = 0
            key = object()
            with self._lock:
                self.in_flight[key] = (time.monotonic(), ms)
            try:
                time.sleep((ms + self.extra_ms) / 1000.0)
                with self._lock:
                    self.served += 1
                if not self.healthy:
                    return self._reply(req, 503, f"{self.name}: dependency failing\n")
                return self._reply(req, self.status, f"{self.name}\n")
            finally:
                with self._lock:
                    del self.in_flight[key]
        return self._reply(req, 404, "no such path\n")

    def long_in_flight(self, min_ms=1000):
        with self._lock:
            return sum(1 for _, ms in self.in_flight.values() if ms >= min_ms)

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def diagnostics(self):
        return (f"== {self!r}: healthy={self.healthy} status={self.status} "
                f"extra_ms={self.extra_ms} served={self.served}")


# ------------------------------------------------------------------ a node

class Node:
    def __init__(self, name, index, log, agent_over=None):
        self.name = name
        self.agent_over = dict(agent_over or {})
        self.index = index
        self.app = App(name)
        self.agent_port = h.free_port()
        self.http_port = h.free_port()
        self.token_file = h.env().path(h.env().unique_name(f"token-{name}"))
        h.write_atomic(self.token_file, TOKEN + "\n", mode=0o600)
        self.dep = FaultProxy(f"{name}->dep", self.app.port, log=log)
        self.to_peer = {}           # peer name -> FaultProxy
        self.to_lb = {}             # lb name -> FaultProxy
        self.lb = None              # the Lbagent
        self._log = log

    def __repr__(self):
        return f"<Node {self.name}>"

    def url(self):
        return f"http://127.0.0.1:{self.http_port}"

    def config(self, t, nodes, haps):
        """This node's lbagent configuration. QUALIFY_NO_GUARD=1 leaves
        [peers] and [haproxy] out: the harness's own check that it sees a
        broken promise (all-fail must then find zero servers serving)."""
        agents = []
        for n in nodes:
            agents.append(self.url() if n is self else
                          f"http://127.0.0.1:{self.to_peer[n.name].port}")
        sources = [f"http://127.0.0.1:{self.to_lb[hp.qname].port}/stats;csv" for hp in haps]
        sections = {
            "agent": {"listen": f"127.0.0.1:{self.agent_port}", "node_id": self.name,
                      "reply_reasons": "yes", "down_after": _ms(t.down_after_ms),
                      "up_after": _ms(t.up_after_ms), "ramp": _ms(t.ramp_ms),
                      "ramp_start": t.ramp_start,
                      "degrade_after": _ms(t.degrade_after_ms),
                      "restore_after": _ms(t.restore_after_ms), **self.agent_over},
            "http": {"listen": f"127.0.0.1:{self.http_port}", "token_file": self.token_file},
            "probe dep": {"type": "http", "url": f"http://127.0.0.1:{self.dep.port}/health",
                          "interval": _ms(t.probe_interval_ms),
                          "timeout": _ms(t.probe_timeout_ms),
                          "warn_latency": _ms(t.warn_latency_ms), "on_warn": "50%"},
            "peers": {"agents": agents, "interval": _ms(t.peer_interval_ms),
                      "timeout": _ms(t.peer_timeout_ms),
                      "alone_grace": _ms(t.alone_grace_ms),
                      "recheck_after": _ms(t.recheck_after_ms),
                      "just_out": _ms(t.just_out_ms)},
            "haproxy": {"sources": sources, "backend": "be", "server": self.name},
        }
        if os.environ.get("QUALIFY_NO_GUARD") == "1":
            del sections["peers"], sections["haproxy"]
        return sections

    def start(self, t, nodes, haps):
        self.lb = h.Lbagent(self.config(t, nodes, haps), name=f"lbagent-{self.name}",
                            port=self.agent_port)

    # -- faults on the dependency
    def fail(self):
        """The dependency fails: /health 503 and the app's work fails too."""
        self.app.healthy = False
        self._log({"kind": "action", "node": self.name, "what": "dependency fails"})

    def heal(self):
        self.app.healthy = True
        self._log({"kind": "action", "node": self.name, "what": "dependency heals"})

    def degrade(self, ms):
        """The dependency answers /health after ms (0: at once)."""
        self.app.health_delay_ms = ms
        self._log({"kind": "action", "node": self.name, "what": f"/health takes {ms} ms"})

    def metrics(self):
        """GET /metrics from this node's HTTP API, as text."""
        status, _, body = h.http_request(self.http_port, "/metrics")
        return body.decode(errors="replace") if status == 200 else ""

    def ctl(self, *args, timeout_s=60):
        """lbagentctl on this node's configuration, as the operator runs it."""
        return h.lbagentctl("-f", self.lb.config_path, *args, timeout_s=timeout_s)

    def proxies(self):
        return [self.dep] + list(self.to_peer.values()) + list(self.to_lb.values())


# ------------------------------------------------------------ load balancers

def haproxy_head(fe_port, stats_port, maxconn=2000, state_file=None, backend=()):
    """A load balancer's configuration up to its servers: global (the
    Runtime API socket), defaults, the stats listener, frontend fe and
    backend be (round robin, then the lines of `backend`)."""
    lines = [
        "global",
        "    stats socket {socket} level admin",
        f"    maxconn {maxconn}",
    ]
    if state_file:
        lines.append(f"    server-state-file {state_file}")
    lines += [
        "",
        "defaults",
        "    mode http",
        "    timeout connect 1s",
        "    timeout client 30s",
        "    timeout server 30s",
        "    timeout check 1s",
    ]
    if state_file:
        lines.append("    load-server-state-from-file global")
    return lines + [
        "",
        "listen stats",
        f"    bind 127.0.0.1:{stats_port}",
        "    stats enable",
        "    stats uri /stats",
        "",
        "frontend fe",
        f"    bind 127.0.0.1:{fe_port}",
        "    default_backend be",
        "",
        "backend be",
        "    balance roundrobin",
    ] + [f"    {line}" for line in backend]


def server_line(t, name, port, check_inter_ms, agent_port, source):
    """A server at weight 100 with HAProxy's own check and lbagent's
    agent check (every agent-inter), from the load balancer's source."""
    return (f"    server {name} 127.0.0.1:{port} weight 100 "
            f"check inter {check_inter_ms} "
            f"agent-check agent-addr 127.0.0.1 agent-port {agent_port} "
            f"agent-inter {t.agent_inter_ms} source {source}")


def haproxy_config(t, source, fe_port, stats_port, nodes, state_file=None):
    lines = haproxy_head(fe_port, stats_port, state_file=state_file,
                         backend=["option httpchk GET /alive"])
    lines += [server_line(t, n.name, n.app.port, t.check_inter_ms, n.agent_port, source)
              for n in nodes]
    return "\n".join(lines) + "\n"


class Deployment:
    """Three nodes n1..n3 and two HAProxy instances lb1, lb2."""

    def __init__(self, t, log, node_names=("n1", "n2", "n3"), lb_names=("lb1", "lb2"),
                 agent_over=None, master_worker=False, state_file=False):
        """master_worker: HAProxy as `haproxy -W`, so that it can be
        reloaded as systemd does; state_file: with server-state-file (and
        load-server-state-from-file global), saved before each reload."""
        self.master_worker = master_worker
        self.state_file = state_file
        self.t = t
        self.log = log
        self.nodes = [Node(name, i, log, agent_over) for i, name in enumerate(node_names)]
        self.by_name = {n.name: n for n in self.nodes}
        self.haps = []
        self.fe_ports = {}
        self._lb_names = lb_names
        self._objects = []

    def __getitem__(self, name):
        return self.by_name[name]

    def start(self):
        t = self.t
        # HAProxy first in its configuration (ports), then the proxies to
        # it, the lbagents, and HAProxy itself last so that its first agent
        # checks find the lbagents answering.
        plans = []
        for name in self._lb_names:
            src = h.env().source()
            fe, stats = h.free_port(), h.free_port()
            plans.append((name, src, fe, stats))
        for n in self.nodes:
            for p in self.nodes:
                if p is not n:
                    n.to_peer[p.name] = FaultProxy(f"{n.name}->{p.name}", p.http_port,
                                                   log=self.log)
            for name, _, _, stats in plans:
                n.to_lb[name] = FaultProxy(f"{n.name}->{name}", stats, log=self.log)
        for name, src, fe, stats in plans:
            servers = [h.Server(n.name, n.agent_port) for n in self.nodes]
            sf = h.env().path(h.env().unique_name(f"{name}-server-state")) \
                if self.state_file else None
            hp = h.Haproxy(backends={"be": servers}, source=src, name=name, start=False,
                           agent_inter_ms=t.agent_inter_ms, master_worker=self.master_worker,
                           config_text=haproxy_config(t, src, fe, stats, self.nodes, sf))
            hp.qname = name
            hp.state_path = sf
            hp.fe_port = fe
            self.haps.append(hp)
            self.fe_ports[name] = fe
        for n in self.nodes:
            n.start(t, self.nodes, self.haps)
        for hp in self.haps:
            hp.start()
        h.wait_until(self.all_serving, 30.0, "every server UP with full weight in both "
                     "load balancers at start", describe=lambda _: self.describe())

    def all_serving(self):
        for hp in self.haps:
            for (_, srv), row in hp.stat_many().items():
                if row["status"] != "UP" or row["weight"] != "100":
                    return False
        return True

    def reload(self, hp):
        """Reloads one instance as `systemctl reload haproxy` does, saving
        its servers' state first when it has a state file."""
        before = (lambda: hp.save_servers_state(hp.state_path)) if hp.state_path else None
        self.log({"kind": "action", "lb": hp.qname,
                  "what": "haproxy reload" + (" (state saved)" if hp.state_path else "")})
        return hp.reload(before=before)

    def hap(self, name):
        for hp in self.haps:
            if hp.qname == name:
                return hp
        raise KeyError(name)

    def describe(self):
        out = []
        for hp in self.haps:
            try:
                rows = hp.stat_many()
                out.append(hp.qname + ": " + ", ".join(
                    f"{srv}={r['status']}/{r['weight']}" for (_, srv), r in rows.items()))
            except Exception as e:  # noqa: BLE001 - a description
                out.append(f"{hp.qname}: {e}")
        return "; ".join(out)

    def status(self, node, hp):
        """(status, weight, scur) of node's server on one load balancer."""
        r = hp.stat("be", node)
        return r["status"], int(r["weight"] or 0), int(r["scur"] or 0)

    def everywhere(self, node, ok):
        """ok(status, weight, scur) on every load balancer."""
        return all(ok(*self.status(node, hp)) for hp in self.haps)

    def artefacts(self):
        """(name, path) of every log and configuration to keep."""
        out = []
        for n in self.nodes:
            if n.lb is not None:
                out += [(f"lbagent-{n.name}.log", n.lb.log_path),
                        (f"lbagent-{n.name}.conf", n.lb.config_path)]
        for hp in self.haps:
            out += [(f"haproxy-{hp.qname}.log", hp.log_path),
                    (f"haproxy-{hp.qname}.cfg", hp.config_path)]
        return [(a, p) for a, p in out if os.path.exists(p)]

    def close(self):
        objs = list(self.haps) + [n.lb for n in self.nodes if n.lb is not None]
        for x in objs:
            try:
                x.close()
            except Exception:  # noqa: BLE001 - keep stopping the rest
                pass
            h.env().forget(x)
        for n in self.nodes:
            for p in n.proxies():
                p.close()
            n.app.close()
