"""The capacity group's deployment (tests/qualify/capacity.py): three
nodes whose applications have a fixed service capacity (capapp.py, a
process each), two HAProxy in front (roundrobin, agent-check on each
node's lbagent), set up one of three ways:

  equal     every server `weight 100`, lbagent on health weights
  ideal     the weights set by hand in proportion to the capacities
            (2:2:1: `weight 200`, `200`, `100`), lbagent on health weights
  capacity  every server `weight 100`, lbagent's capacity weights
            (`weight_from = capacity`, issue 31's keys)

Each lbagent has a [service app] on a port of its own (the port HAProxy's
agent-check asks), whose probe is the application's /health; the
capacity way adds the /load probes (the ORCA-style report) and the
service's capacity keys. Its peers' HTTP APIs and both load balancers'
stats are reached through fault proxies (the faults case cuts them)."""

import os
import subprocess
import sys
import threading
import time
import http.client

import harness as h
from deploy import haproxy_head
from faults import FaultProxy

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
WORKERS = 4                 # each application's workers: service time WORKERS / capacity
POLL_S = 0.25               # the harness reads each app's counters and HAProxy's rows


class ConfigRejected(Exception):
    """lbagent -c refused a way's configuration (its keys not there yet)."""


def _ms(v):
    return f"{int(v)}ms"


def http_get(port, path, timeout_s=2.0):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class CapNode:
    def __init__(self, name, capacity, log):
        self.name = name
        self.capacity = capacity
        self.app_port = h.free_port()
        self.agent_port = h.free_port()         # the service's: HAProxy asks here
        self.shared_port = h.free_port()        # [agent] listen (the default service)
        self.http_port = h.free_port()
        self.to_peer = {}
        self.to_lb = {}
        self.lb = None
        self.proc = None
        self._log = log

    def __repr__(self):
        return f"<CapNode {self.name} {self.capacity:g}/s>"

    def start_app(self, outdir):
        self.app_log = os.path.join(outdir, f"app-{self.name}.log")
        self.proc = subprocess.Popen(
            [PYTHON, os.path.join(HERE, "capapp.py"), "--name", self.name,
             "--capacity", str(self.capacity), "--workers", str(WORKERS),
             "--port", str(self.app_port)],
            stdout=open(self.app_log, "w"), stderr=subprocess.STDOUT,
            preexec_fn=lambda: os.nice(10))
        h.wait_until(lambda: self._alive(), 10.0, f"{self.name}'s application to answer")

    def _alive(self):
        try:
            return http_get(self.app_port, "/alive", 0.5)[0] == 200
        except OSError:
            return False

    def set_app(self, **kv):
        q = "&".join(f"{k}={v}" for k, v in kv.items())
        http_get(self.app_port, f"/set?{q}")
        if "capacity" in kv:
            self.capacity = float(kv["capacity"])
        self._log({"kind": "action", "node": self.name, "what": f"application {q}"})

    def counters(self):
        import json
        return json.loads(http_get(self.app_port, "/counters", 1.0)[1])

    def config(self, t, nodes, haps, way, ct):
        """This node's lbagent configuration for the way; ct: the
        capacity timings (CapTimings)."""
        agents = [f"http://127.0.0.1:{self.http_port}" if n is self else
                  f"http://127.0.0.1:{self.to_peer[n.name].port}" for n in nodes]
        sources = [f"http://127.0.0.1:{self.to_lb[hp.qname].port}/stats;csv" for hp in haps]
        app = f"http://127.0.0.1:{self.app_port}"
        probe = {"interval": _ms(t.probe_interval_ms), "timeout": _ms(t.probe_timeout_ms)}
        s = {
            "agent": {"listen": f"127.0.0.1:{self.shared_port}", "node_id": self.name,
                      "reply_reasons": "yes", "down_after": _ms(t.down_after_ms),
                      "up_after": _ms(t.up_after_ms), "ramp": _ms(t.ramp_ms),
                      "ramp_start": t.ramp_start},
            "http": {"listen": f"127.0.0.1:{self.http_port}"},
            "probe dep": {"type": "http", "url": f"{app}/health", **probe},
            "service app": {"probes": "dep", "listen": f"127.0.0.1:{self.agent_port}",
                            "backend": "be"},
            "peers": {"agents": agents, "interval": _ms(t.peer_interval_ms),
                      "timeout": _ms(t.peer_timeout_ms),
                      "alone_grace": _ms(t.alone_grace_ms),
                      "recheck_after": _ms(t.recheck_after_ms),
                      "just_out": _ms(t.just_out_ms)},
            "haproxy": {"sources": sources, "backend": "be", "server": self.name},
        }
        if way != "capacity":
            s["agent"]["no_probes"] = "yes"
            return s
        # The capacity way, with the keys CAPACITY.md names: the rate from
        # HAProxy's stot, the utilization from the application's report.
        s["probe load-util"] = {"type": "http", "url": f"{app}/load",
                                "json_field": "utilization", **probe}
        s["peers"]["steady_interval"] = _ms(max(t.peer_interval_ms, ct.steady_interval_ms))
        s["service app"].update({
            "weight_from": "capacity", "capacity_rate": "haproxy",
            "capacity_utilization": "load-util",
            "capacity_blackout": _ms(ct.blackout_ms),
            "capacity_half_life": _ms(ct.half_life_ms),
            "capacity_expiry": _ms(ct.expiry_ms)})
        if ct.adaptive_maxconn:
            s["service app"].update({"maxconn": "adaptive", "maxconn_latency": "haproxy"})
        return s

    def start_agent(self, t, nodes, haps, way, ct):
        self.lb = h.Lbagent(self.config(t, nodes, haps, way, ct), name=f"lbagent-{self.name}",
                            port=self.shared_port, start=False)
        rc, out, _ = h.check_config(self.lb.config_text, name=f"check-{self.name}")
        if rc != 0:
            raise ConfigRejected(f"lbagent rejected the config ({way} way, {self.name}): "
                                 + " | ".join([ln for ln in out.strip().splitlines()
                                               if "warning:" not in ln][:4]))
        self.lb.start()

    def proxies(self):
        return list(self.to_peer.values()) + list(self.to_lb.values())

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def lb_config(t, source, fe_port, stats_port, nodes, weights):
    lines = haproxy_head(fe_port, stats_port, maxconn=8000,
                         backend=["option httpchk GET /alive", "timeout queue 3s"])
    for n in nodes:
        lines.append(f"    server {n.name} 127.0.0.1:{n.app_port} weight {weights[n.name]} "
                     f"check inter {t.check_inter_ms} "
                     f"agent-check agent-addr 127.0.0.1 agent-port {n.agent_port} "
                     f"agent-inter {t.agent_inter_ms} source {source}")
    return "\n".join(lines) + "\n"


class CapDeployment:
    """The three nodes and lb1, lb2 for one way; what the harness reads
    meanwhile (every POLL_S: each application's counters, each load
    balancer's rows: weight, scur, slim, qcur)."""

    def __init__(self, t, log, way, caps, ct, outdir):
        self.t = t
        self.log = log
        self.way = way
        self.ct = ct
        self.outdir = outdir
        self.nodes = [CapNode(name, c, log) for name, c in caps.items()]
        self.by_name = {n.name: n for n in self.nodes}
        self.haps = []
        self.fe_ports = {}
        self.app_samples = []       # (t, node, counters)
        self.lb_samples = []        # (t, lb, node, {weight, scur, slim, qcur, stot})
        self._stop = threading.Event()
        self._poller = None
        low = min(caps.values())
        self.weights = {n: (100 if way != "ideal" else int(round(100 * c / low)))
                        for n, c in caps.items()}

    def __getitem__(self, name):
        return self.by_name[name]

    def start(self):
        t = self.t
        plans = [(name, h.env().source(), h.free_port(), h.free_port())
                 for name in ("lb1", "lb2")]
        for n in self.nodes:
            n.start_app(self.outdir)
            for p in self.nodes:
                if p is not n:
                    n.to_peer[p.name] = FaultProxy(f"{n.name}->{p.name}", p.http_port,
                                                   log=self.log)
            for name, _, _, stats in plans:
                n.to_lb[name] = FaultProxy(f"{n.name}->{name}", stats, log=self.log)
        for name, src, fe, stats in plans:
            servers = [h.Server(n.name, n.agent_port) for n in self.nodes]
            hp = h.Haproxy(backends={"be": servers}, source=src, name=name, start=False,
                           agent_inter_ms=t.agent_inter_ms,
                           config_text=lb_config(t, src, fe, stats, self.nodes, self.weights))
            hp.qname = name
            hp.fe_port = fe
            self.haps.append(hp)
            self.fe_ports[name] = fe
        for n in self.nodes:
            n.start_agent(t, self.nodes, self.haps, self.way, self.ct)
        for hp in self.haps:
            hp.start()
        h.wait_until(self.all_up, 30.0, "every server UP in both load balancers at start",
                     describe=lambda _: self.describe())
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    def all_up(self):
        return all(r["status"] == "UP" for hp in self.haps for r in hp.stat_many().values())

    def _poll(self):
        while not self._stop.wait(POLL_S):
            for n in self.nodes:
                try:
                    self.app_samples.append((time.monotonic(), n.name, n.counters()))
                except (OSError, ValueError):
                    pass
            for hp in self.haps:
                try:
                    rows = hp.stats()
                except Exception:  # noqa: BLE001 - a stopped LB is a gap
                    continue
                now = time.monotonic()
                for r in rows:
                    if r.get("pxname") == "be" and r.get("svname") in self.by_name:
                        self.lb_samples.append((now, hp.qname, r["svname"], {
                            k: int(r.get(k) or 0) for k in ("weight", "scur", "slim",
                                                            "qcur", "stot")}))

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

    def artefacts(self):
        out = []
        for n in self.nodes:
            if n.lb is not None:
                out += [(f"lbagent-{n.name}.log", n.lb.log_path),
                        (f"lbagent-{n.name}.conf", n.lb.config_path)]
            out.append((f"app-{n.name}.log", getattr(n, "app_log", "")))
        for hp in self.haps:
            out += [(f"haproxy-{hp.qname}.log", hp.log_path),
                    (f"haproxy-{hp.qname}.cfg", hp.config_path)]
        return [(a, p) for a, p in out if p and os.path.exists(p)]

    def close(self):
        self._stop.set()
        if self._poller is not None:
            self._poller.join(5)
        for x in list(self.haps) + [n.lb for n in self.nodes if n.lb is not None]:
            try:
                x.close()
            except Exception:  # noqa: BLE001 - keep stopping the rest
                pass
            h.env().forget(x)
        for n in self.nodes:
            for p in n.proxies():
                p.close()
            n.close()


def run_client(ports, plan, out_path, spacing="poisson", timeout_s=10.0):
    """capload.py in a process of its own (the harness's threads would
    delay its starts); returns the Popen."""
    import json
    return subprocess.Popen(
        [PYTHON, os.path.join(HERE, "capload.py"), "--ports", ",".join(map(str, ports)),
         "--plan", json.dumps(plan), "--out", out_path, "--spacing", spacing,
         "--timeout", str(timeout_s)],
        stdout=subprocess.DEVNULL, stderr=open(out_path + ".err", "w"),
        preexec_fn=lambda: os.nice(10))


if __name__ == "__main__":
    sys.exit("capdeploy.py is a module of tests/qualify/capacity.py")
