"""The fleet deployment (the `fleet` scenario, full tier): N nodes (50),
each an lbagent with the same N-entry [peers] agents list, behind two
HAProxy instances, on loopback, light enough for a 2-core machine.

- The dependencies are `file` probes: each node's probe checks a file of
  its own that the harness removes to fail it and writes again to heal
  it. No HTTP server per dependency and no fault proxy: 50 of each would
  cost more than the 50 lbagents.
- One application server (FleetApp, a thread per request in this
  process) stands behind every server line of both load balancers.
  HAProxy names the server it chose in the request
  (`http-send-name-header X-Node`): the application answers 503 for a
  node whose dependency fails, as each node's own would, and returns the
  name in X-Node, so the workload knows which node served. HAProxy's own
  check is a TCP connect every 2 s (each connect is a thread here too).
- Counting, as scripts/bench-guard does, with nothing of the harness in
  the path that could miss a question:
  - stats queries: each load balancer's `listen stats` frontend's
    `req_tot` (`show stat` on the admin socket, which it does not see);
  - peer /status queries: every node lists the others' HTTP APIs through
    a third HAProxy, a TCP relay with one `listen` per node, whose
    frontends' `stot` count every connection (lbagent's peer client makes
    one request a connection);
  - CPU: utime + stime of every lbagent from /proc/PID/stat.
- The sampler (invariants.py) polls both load balancers every 100 ms and
  asks each agent port every 2 s instead of 200 ms (sample_s, ask_s): 25
  asks a second instead of 250."""

import json
import os
import time
import urllib.parse

import harness as h
from deploy import App, haproxy_head, server_line

N_NODES = 50
N_FAIL = 17                 # a third of the dependencies
PEER_INTERVAL_MS = 1000     # [peers] interval: lbagent's default (see below)
PEER_TIMEOUT_MS = 1000
CHECK_INTER_MS = 2000       # HAProxy's TCP check of the application
AGENT_LINE_URLS = 7         # URLs per `agents =` line (a line holds 198 characters)


def buildtype():
    """The meson buildtype of the lbagent the fleet runs ($LBAGENT's build
    directory), or "unknown": the figures are a release build's only when
    it says release."""
    path = os.path.join(os.path.dirname(h.lbagent_exe()), "meson-info",
                        "intro-buildoptions.json")
    try:
        with open(path) as f:
            return next(o["value"] for o in json.load(f) if o["name"] == "buildtype")
    except (OSError, ValueError, StopIteration, KeyError):
        return "unknown"


class FleetApp(App):
    """The one application of every node: GET /work as deploy.App's, for
    the node HAProxy names in X-Node, 503 while that node's dependency
    fails (`failing`, node names)."""

    def __init__(self):
        self.failing = set()
        super().__init__("fleet")

    def _handle(self, req):
        node = req.headers.get("X-Node", "")
        if urllib.parse.urlsplit(req.path).path != "/work" or not node:
            return super()._handle(req)
        time.sleep(self._ms(req) / 1000.0)
        with self._lock:
            self.served += 1
        if node in self.failing:
            return self._answer(req, node, 503, f"{node}: dependency failing\n")
        return self._answer(req, node, 200, f"{node}\n")

    @staticmethod
    def _answer(req, node, status, body):
        data = body.encode()
        try:
            req.send_response(status)
            req.send_header("Content-Type", "text/plain")
            req.send_header("Content-Length", str(len(data)))
            req.send_header("X-Node", node)
            req.end_headers()
            req.wfile.write(data)
        except OSError:
            pass

    @staticmethod
    def _ms(req):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query)
        try:
            return int(q.get("ms", ["0"])[0])
        except ValueError:
            return 0


class FleetNode:
    """One node: its lbagent, its ports and its dependency's file."""

    def __init__(self, name, index, log, app):
        self.name = name
        self.index = index
        self.app = app
        self.agent_port = h.free_port()
        self.http_port = h.free_port()
        self.relay_port = h.free_port()     # its API, through the relay
        self.dep_path = h.env().path(f"dep-{name}")
        self.lb = None
        self._log = log
        with open(self.dep_path, "w") as f:
            f.write("ok\n")

    def __repr__(self):
        return f"<FleetNode {self.name}>"

    def config(self, t, nodes, haps):
        urls = [f"http://127.0.0.1:{n.relay_port}" for n in nodes]
        agents = "".join(f"agents = {', '.join(urls[k:k + AGENT_LINE_URLS])}\n"
                         for k in range(0, len(urls), AGENT_LINE_URLS))
        sources = ", ".join(f"http://127.0.0.1:{hp.stats_port}/stats;csv" for hp in haps)
        ms = lambda v: f"{int(v)}ms"  # noqa: E731
        return (
            "[agent]\n"
            "listen = 127.0.0.1:{port}\nstate_dir = {state_dir}\n"
            f"node_id = {self.name}\nreply_reasons = yes\n"
            f"down_after = {ms(t.down_after_ms)}\nup_after = {ms(t.up_after_ms)}\n"
            f"ramp = {ms(t.ramp_ms)}\nramp_start = {t.ramp_start}\n"
            f"degrade_after = {ms(t.degrade_after_ms)}\n"
            f"restore_after = {ms(t.restore_after_ms)}\n\n"
            f"[http]\nlisten = 127.0.0.1:{self.http_port}\n\n"
            f"[probe dep]\ntype = file\npath = {self.dep_path}\n"
            f"interval = {ms(t.probe_interval_ms)}\ntimeout = {ms(t.probe_timeout_ms)}\n\n"
            f"[peers]\n{agents}interval = {ms(PEER_INTERVAL_MS)}\n"
            f"timeout = {ms(PEER_TIMEOUT_MS)}\nalone_grace = {ms(t.alone_grace_ms)}\n"
            f"recheck_after = {ms(t.recheck_after_ms)}\njust_out = {ms(t.just_out_ms)}\n\n"
            f"[haproxy]\nsources = {sources}\nbackend = be\nserver = {self.name}\n")

    def start(self, t, nodes, haps):
        self.lb = h.Lbagent(self.config(t, nodes, haps), name=f"lbagent-{self.name}",
                            port=self.agent_port)

    def fail(self):
        """The dependency fails: its file goes (the `file` probe: crit)."""
        os.unlink(self.dep_path)
        self.app.failing.add(self.name)
        self._log({"kind": "action", "node": self.name, "what": "dependency fails"})

    def heal(self):
        h.write_atomic(self.dep_path, "ok\n")
        self.app.failing.discard(self.name)
        self._log({"kind": "action", "node": self.name, "what": "dependency heals"})

    def proxies(self):
        return []


def lb_config(t, source, fe_port, stats_port, app_port, nodes):
    """As the other scenarios' load balancers, but every server points at
    the one application, which learns the node from X-Node; HAProxy's own
    check is a TCP connect."""
    lines = haproxy_head(fe_port, stats_port, maxconn=4000,
                         backend=["http-send-name-header X-Node"])
    lines += [server_line(t, n.name, app_port, CHECK_INTER_MS, n.agent_port, source)
              for n in nodes]
    return "\n".join(lines) + "\n"


def relay_config(nodes):
    lines = ["global", "    stats socket {socket} level admin", "    maxconn 8000", "",
             "defaults", "    mode tcp", "    timeout connect 2s",
             "    timeout client 5s", "    timeout server 5s", ""]
    for n in nodes:
        lines += [f"listen peer_{n.name}", f"    bind 127.0.0.1:{n.relay_port}",
                  f"    server {n.name} 127.0.0.1:{n.http_port}", ""]
    return "\n".join(lines)


class Counters:
    """One reading of what the fleet asked and spent so far."""

    def __init__(self, dep):
        self.t = time.monotonic()
        self.stats = []
        for hp in dep.haps:
            row = next(r for r in hp.stats()
                       if r["pxname"] == "stats" and r["svname"] == "FRONTEND")
            self.stats.append(int(row["req_tot"]))
        self.peers = sum(int(r["stot"]) for r in dep.relay.stats()
                         if r["svname"] == "FRONTEND")
        self.cpu_s = [h.cpu_seconds(n.lb.pid) for n in dep.nodes]


def rates(a, b):
    """What the fleet asked and spent a second between two readings."""
    dt = b.t - a.t
    cpu = [(y - x) * 1000.0 / dt for x, y in zip(a.cpu_s, b.cpu_s)]
    return {"window_s": round(dt, 1),
            "peer_qps": round((b.peers - a.peers) / dt, 1),
            "stats_qps": round(sum(y - x for x, y in zip(a.stats, b.stats)) / dt, 1),
            "cpu_ms_per_s_mean": round(sum(cpu) / len(cpu), 2),
            "cpu_ms_per_s_max": round(max(cpu), 2)}


class FleetDeployment:
    """N_NODES nodes n1..nN, lb1 and lb2, the relay, one application."""

    sample_s = 0.1
    ask_s = 2.0
    workload = {"short_threads": 1, "long_threads": 0}   # per load balancer

    def __init__(self, t, log, agent_over=None, n_nodes=N_NODES):
        self.t = t
        self.log = log
        self.app = FleetApp()
        self.nodes = [FleetNode(f"n{i + 1}", i, log, self.app) for i in range(n_nodes)]
        self.by_name = {n.name: n for n in self.nodes}
        self.haps = []
        self.relay = None
        self.fe_ports = {}
        self.peer_interval_ms = PEER_INTERVAL_MS

    def __getitem__(self, name):
        return self.by_name[name]

    def start(self):
        plans = []
        for name in ("lb1", "lb2"):
            plans.append((name, h.env().source(), h.free_port(), h.free_port()))
        self.relay = h.Haproxy(backends={"peers": []}, name="relay", start=False,
                               config_text=relay_config(self.nodes))
        self.relay.qname = "relay"
        for name, src, fe, stats in plans:
            servers = [h.Server(n.name, n.agent_port) for n in self.nodes]
            hp = h.Haproxy(backends={"be": servers}, source=src, name=name, start=False,
                           agent_inter_ms=self.t.agent_inter_ms,
                           config_text=lb_config(self.t, src, fe, stats, self.app.port,
                                                 self.nodes))
            hp.qname = name
            hp.fe_port = fe
            hp.stats_port = stats
            self.haps.append(hp)
            self.fe_ports[name] = fe
        self.relay.start()
        for n in self.nodes:
            n.start(self.t, self.nodes, self.haps)
        for hp in self.haps:
            hp.start()
        h.wait_until(self.all_serving, 90.0, f"all {len(self.nodes)} servers UP with full "
                     "weight in both load balancers at start", describe=lambda _: self.describe())

    def all_serving(self):
        for hp in self.haps:
            for (_, srv), row in hp.stat_many().items():
                if row["status"] != "UP" or row["weight"] != "100":
                    return False
        return True

    def describe(self):
        out = []
        for hp in self.haps:
            try:
                rows = hp.stat_many()
                counts = {}
                for r in rows.values():
                    k = f"{r['status']}/{r['weight']}"
                    counts[k] = counts.get(k, 0) + 1
                out.append(f"{hp.qname}: " + ", ".join(f"{k} x{v}" for k, v in counts.items()))
            except Exception as e:  # noqa: BLE001 - a description
                out.append(f"{hp.qname}: {e}")
        return "; ".join(out)

    def artefacts(self):
        out = []
        for n in self.nodes:
            if n.lb is not None:
                out += [(f"lbagent-{n.name}.log", n.lb.log_path)]
        if self.nodes and self.nodes[0].lb is not None:
            out.append(("lbagent-n1.conf", self.nodes[0].lb.config_path))
        for hp in self.haps + ([self.relay] if self.relay else []):
            out += [(f"haproxy-{hp.qname}.log", hp.log_path),
                    (f"haproxy-{hp.qname}.cfg", hp.config_path)]
        return [(a, p) for a, p in out if os.path.exists(p)]

    def close(self):
        objs = list(self.haps) + ([self.relay] if self.relay else []) + \
            [n.lb for n in self.nodes if n.lb is not None]
        for x in objs:
            try:
                x.close()
            except Exception:  # noqa: BLE001 - keep stopping the rest
                pass
            h.env().forget(x)
        self.app.close()
