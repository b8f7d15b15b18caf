"""The promises, checked the whole time a scenario runs.

A Timeline holds every event of a scenario (faults, actions, what HAProxy
showed when it changed, what lbagent replied when it changed, violations),
each with its time. The Sampler polls both HAProxy's `show stat` every
100 ms and asks each lbagent's agent port every 200 ms (a deployment may
set slower rates: `sample_s`, `ask_s`), from a loopback source address of
its own (ASK_SOURCE, one no load balancer of the deployment uses: to
lbagent it is one more asker, as any monitoring of the agent port would
be), and checks:

  zero-serving   never zero serving servers (UP with a weight above 0) on a
                 load balancer (automated decisions only: the scenarios
                 here never take every server out by hand)
  operator       nothing an operator set on HAProxy is undone
  marker         every marker obeyed within 1 s + one agent-inter
  reply-deadline lbagent's agent-port answers within the deadline

`planned`: no request fails during a planned operation, is judged at the
end from the workload's records (check_planned)."""

import threading
import time

import harness as h

SAMPLE_S = 0.1
ASK_S = 0.2
# The load balancers take 127.0.0.2, .3, ... (deploy.py, h.env().source());
# the sampler's asks come from an address of its own, reserved here so that
# no load balancer gets it.
ASK_SOURCE = "127.0.0.9"


class Timeline:
    def __init__(self):
        self.t0 = time.monotonic()
        self.events = []
        self._lock = threading.Lock()

    def log(self, ev, t=None):
        ev = dict(ev)
        ev["t"] = time.monotonic() if t is None else t
        with self._lock:
            self.events.append(ev)
        return ev

    def rel(self, t):
        return t - self.t0

    def around(self, t, before_s=3.0, after_s=2.0):
        with self._lock:
            evs = [e for e in self.events if t - before_s <= e["t"] <= t + after_s]
        return evs

    def snapshot(self):
        with self._lock:
            return list(self.events)

    def render(self, ev):
        d = {k: v for k, v in ev.items() if k not in ("t", "kind")}
        body = " ".join(f"{k}={v}" for k, v in d.items())
        return f"+{self.rel(ev['t']):8.3f}s {ev['kind']:<10} {body}"


def serving(status, weight):
    return status.startswith("UP") and weight > 0


class Marker:
    """An expectation set by a marker change: by `deadline` every load
    balancer shows node's server so that ok(status, weight) holds."""

    def __init__(self, node, what, ok, t_set, bound_s):
        self.node, self.what, self.ok = node, what, ok
        self.t_set, self.deadline = t_set, t_set + bound_s
        self.obeyed_at = None
        self.violated = False


class Operator:
    """Something an operator set on one load balancer, which must stay."""

    def __init__(self, lb, node, what, ok, since):
        self.lb, self.node, self.what, self.ok, self.since = lb, node, what, ok, since
        self.violated = False
        self.active = True


class Sampler:
    def __init__(self, dep, timeline):
        self.dep = dep
        self.t = dep.t
        self.sample_s = getattr(dep, "sample_s", SAMPLE_S)
        self.ask_s = getattr(dep, "ask_s", ASK_S)
        self.source = h.env().source(ASK_SOURCE)
        self.tl = timeline
        self.samples = []           # (t, lb, {node: (status, weight, scur)})
        self.replies = []           # (t, node, ms, reply or error)
        self.violations = []
        self.markers = []
        self.operators = []
        self.paused = set()         # nodes whose lbagent is stopped on purpose
        self.zero_allowed = False
        self._last = {}
        self._last_reply = {}
        self._zero = {}
        self._stop = threading.Event()
        self._threads = []

    def start(self):
        for fn in (self._sample_loop, self._ask_loop):
            th = threading.Thread(target=fn, daemon=True)
            th.start()
            self._threads.append(th)

    def stop(self):
        self._stop.set()
        for th in self._threads:
            th.join(timeout=10)

    def violate(self, invariant, what, t=None):
        ev = self.tl.log({"kind": "VIOLATION", "invariant": invariant, "what": what}, t)
        self.violations.append(ev)

    # -- expectations the scenario registers
    def expect_marker(self, node, what, ok, t_set):
        m = Marker(node, what, ok, t_set, self.t.marker_bound_ms() / 1000.0)
        self.markers.append(m)
        return m

    def expect_operator(self, lb, node, what, ok):
        o = Operator(lb, node, what, ok, time.monotonic())
        self.operators.append(o)
        return o

    # -- HAProxy's view
    def _sample_loop(self):
        while not self._stop.wait(self.sample_s):
            for hp in self.dep.haps:
                t = time.monotonic()
                try:
                    rows = hp.stat_many()
                except Exception as e:  # noqa: BLE001 - a stopped LB is an event
                    key = (hp.qname, "error")
                    if self._last.get(key) != str(e)[:80]:
                        self._last[key] = str(e)[:80]
                        self.tl.log({"kind": "lb-error", "lb": hp.qname, "error": str(e)[:120]}, t)
                    continue
                self._last.pop((hp.qname, "error"), None)
                view = {}
                for (_, srv), r in rows.items():
                    view[srv] = (r["status"], int(r["weight"] or 0), int(r["scur"] or 0))
                self.samples.append((t, hp.qname, view))
                self._judge(t, hp.qname, view)

    def _judge(self, t, lb, view):
        for srv, (status, weight, _) in view.items():
            key = (lb, srv)
            if self._last.get(key) != (status, weight):
                old = self._last.get(key)
                self._last[key] = (status, weight)
                self.tl.log({"kind": "haproxy", "lb": lb, "server": srv,
                             "from": f"{old[0]}/{old[1]}" if old else "-",
                             "to": f"{status}/{weight}"}, t)
        n = sum(1 for s, w, _ in view.values() if serving(s, w))
        if n == 0 and not self.zero_allowed:
            if not self._zero.get(lb):
                self._zero[lb] = True
                self.violate("zero-serving", f"{lb}: no server UP with a weight above 0: " +
                             ", ".join(f"{k}={s}/{w}" for k, (s, w, _) in view.items()), t)
        else:
            self._zero[lb] = False
        for o in self.operators:
            if o.active and o.lb == lb and not o.violated and o.node in view:
                s, w, _ = view[o.node]
                if not o.ok(s, w):
                    o.violated = True
                    self.violate("operator", f"{lb}: {o.node} {s}/{w}: undoes the "
                                 f"operator's {o.what}", t)
        for m in self.markers:
            if m.obeyed_at is not None or m.violated:
                continue
            seen = [v for (tt, l, v) in self._latest() if m.node in v]
            if len(seen) == len(self.dep.haps) and all(m.ok(v[m.node][0], v[m.node][1])
                                                       for v in seen):
                m.obeyed_at = t
                self.tl.log({"kind": "obeyed", "node": m.node, "what": m.what,
                             "after_ms": int((t - m.t_set) * 1000)}, t)
            elif t > m.deadline:
                m.violated = True
                self.violate("marker", f"{m.node}: {m.what} not shown by every load "
                             f"balancer within {self.t.marker_bound_ms()} ms", t)

    def _latest(self):
        """The newest sample of each load balancer."""
        seen = {}
        for s in reversed(self.samples[-10:]):
            seen.setdefault(s[1], s)
        return list(seen.values())

    # -- lbagent's agent port
    def _ask_loop(self):
        deadline_s = self.t.reply_deadline_ms / 1000.0
        while not self._stop.wait(self.ask_s):
            for n in self.dep.nodes:
                if n.name in self.paused or n.lb is None:
                    continue
                t = time.monotonic()
                try:
                    reply = h.ask(n.agent_port, source=self.source,
                                  timeout_s=max(3.0, deadline_s * 3))
                    text = reply.decode(errors="replace").strip()
                except OSError as e:
                    text = f"<{type(e).__name__}: {e}>"
                    reply = None
                ms = (time.monotonic() - t) * 1000
                if n.name in self.paused:       # stopped while asked
                    continue
                self.replies.append((t, n.name, ms, text))
                if self._last_reply.get(n.name) != text:
                    self._last_reply[n.name] = text
                    self.tl.log({"kind": "reply", "node": n.name, "reply": text,
                                 "ms": round(ms, 1)}, t)
                if reply is None:
                    self.violate("reply-deadline", f"{n.name}: no reply: {text}", t)
                elif ms > self.t.reply_deadline_ms:
                    self.violate("reply-deadline", f"{n.name}: replied after {ms:.0f} ms "
                                 f"(deadline {self.t.reply_deadline_ms} ms)", t)

    # -- queries for the scenario's verdicts
    def seen(self, node, since=0.0, until=None, lb=None):
        """[(t, lb, status, weight, scur)] of node's server."""
        out = []
        for t, l, v in list(self.samples):
            if t < since or (until is not None and t > until) or (lb and l != lb):
                continue
            if node in v:
                out.append((t, l) + v[node])
        return out

    def first_all(self, node, ok, since):
        """When every load balancer first showed ok(status, weight) for node
        in its latest sample, at or after since; None if never."""
        latest = {}
        for t, l, v in list(self.samples):
            if t < since or node not in v:
                continue
            latest[l] = v[node]
            if len(latest) == len(self.dep.haps) and all(ok(s, w) for s, w, _ in latest.values()):
                return t
        return None

    def reply_stats(self):
        ms = [r[2] for r in self.replies]
        return {"asked": len(ms), "max_ms": round(max(ms), 1) if ms else None}


def check_planned(sampler, requests, windows, t0):
    """Every request that overlapped a planned operation's window [a, b]
    succeeded."""
    for a, b, what in windows:
        for r in requests:
            end = r.end if r.end is not None else float("inf")
            if r.start <= b and end >= a and not r.ok:
                sampler.violate("planned", f"during {what}: " + r.describe(t0), r.start)
