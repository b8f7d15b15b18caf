"""conf/examples/rabbitmq.conf against a real RabbitMQ (Debian's
rabbitmq-server with the management plugin), started here on loopback with
everything in a temporary directory: its own node name, AMQP, management,
distribution and epmd ports, its own epmd (started by the test in the
foreground, so nothing is left behind), statistics every 500 ms.

The example's two probes run as written but for the host:port, the auth
file's path and shorter intervals:

- rabbitmq-backlog (`*.messages_ready`, `json_aggregate = max`) follows the
  largest messages_ready of the queues, published to through the
  management API, names the queue, and reaches warn (weight 75%) then crit
  (50%); a queue RabbitMQ has no statistics for yet is skipped (the unit
  tests pin that down; here it depends on timing, and must stay ok);
- rabbitmq-alarms: /api/health/checks/alarms answers 200, the probe is ok;
- the auth file is read at each run: a wrong password gives `HTTP 401`, the
  right one written back is used without a reload;
- the password never appears in lbagent's log, /status or any reply.

The node is stopped at the end (SIGTERM to its process group, SIGKILL if it
lingers) and the test's epmd with it, even on failure."""

import base64
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(REPO, "conf", "examples", "rabbitmq.conf")
RABBIT_BIN = "/usr/lib/rabbitmq/bin"
EPMD = "/usr/bin/epmd"
START_BOUND_S = 90.0 * h._time_scale()   # a liveness bound; measured below
STOP_GRACE_S = 30.0
INTERVAL_MS = 1000
TIMEOUT_MS = 900
# A run sees stats at most 500 ms old (collect_statistics_interval).
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS) + 2.0

USER = "lbmon"
PASSWORD = "Rq-" + secrets.token_hex(8)
WRONG = "Wr-" + secrets.token_hex(8)
SEEN = []


def ini_sections(text):
    """lbagent's INI as {section: {key: value}}, in order (no repeats)."""
    sections, cur = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("["):
            cur = sections.setdefault(line[1:-1], {})
            continue
        key, _, value = line.partition("=")
        cur[key.strip()] = value.strip()
    return sections


class Rabbit:
    """A RabbitMQ node of the test's own, as the rabbitmq user when the test
    is root (Erlang's cookie and mnesia want a user of their own)."""

    def __init__(self):
        e = h.env()
        self.dir = tempfile.mkdtemp(prefix="lbagent-rabbitmq-")
        self.amqp, self.mgmt = e.free_port(), e.free_port()
        self.epmd_port, self.dist = e.free_port(), e.free_port()
        self.node = f"lbtest-{secrets.token_hex(4)}@localhost"
        self.log_path = e.path("rabbitmq.log")
        self.server = self.epmd = None
        ids = {}
        if os.getuid() == 0:
            pw = pwd.getpwnam("rabbitmq")
            ids = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self.ids = ids
        self._write("rabbitmq.conf",
                    f"listeners.tcp.default = 127.0.0.1:{self.amqp}\n"
                    f"management.tcp.ip = 127.0.0.1\n"
                    f"management.tcp.port = {self.mgmt}\n"
                    "collect_statistics_interval = 500\n"
                    "management.rates_mode = none\n")
        self._write("enabled_plugins", "[rabbitmq_management].\n")
        self.env = {
            "PATH": f"{RABBIT_BIN}:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": self.dir, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.amqp),
            "RABBITMQ_DIST_PORT": str(self.dist),
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "RABBITMQ_MNESIA_BASE": os.path.join(self.dir, "mnesia"),
            "RABBITMQ_LOG_BASE": os.path.join(self.dir, "log"),
            "RABBITMQ_CONFIG_FILE": os.path.join(self.dir, "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": os.path.join(self.dir, "enabled_plugins"),
            "RABBITMQ_PID_FILE": os.path.join(self.dir, "rabbitmq.pid"),
        }
        e.register(self)

    def _write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        if self.ids:
            os.chown(path, self.ids["user"], self.ids["group"])

    def _spawn(self, argv):
        log = open(self.log_path, "ab")
        try:
            # A session of its own: the whole node is one process group.
            return subprocess.Popen(h._preexec_argv() + argv, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                    cwd=self.dir, start_new_session=True, **self.ids)
        finally:
            log.close()

    def start(self):
        self.epmd = self._spawn([EPMD, "-port", str(self.epmd_port), "-address", "127.0.0.1"])
        self.server = self._spawn([os.path.join(RABBIT_BIN, "rabbitmq-server")])

    def api(self, method, path, body=None, auth=("guest", "guest"), timeout_s=10.0):
        """(status, parsed JSON or None) of one management API call."""
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.mgmt}{path}", method=method,
            data=None if body is None else json.dumps(body).encode())
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as r:
                data, status = r.read(), r.status
        except urllib.error.HTTPError as err:
            data, status = err.read(), err.code
        return status, json.loads(data) if data.strip() else None

    def ready(self):
        if self.server.poll() is not None:
            raise h.TestFailure(f"rabbitmq-server exited {self.server.returncode}:\n"
                                f"{h._tail(self.log_path)}")
        try:
            return self.api("GET", "/api/overview", timeout_s=2.0)[0] == 200
        except OSError:
            return False

    def ctl(self, *args):
        with open(os.path.join(self.dir, ".erlang.cookie")) as f:
            cookie = f.read().strip()
        r = subprocess.run([os.path.join(RABBIT_BIN, "rabbitmqctl"), "-q", "-n", self.node,
                            "--erlang-cookie", cookie] + list(args),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=self.env, cwd=self.dir, timeout=60,
                           **self.ids)
        out = r.stdout.decode(errors="replace")
        if r.returncode != 0:
            raise h.TestFailure(f"rabbitmqctl {args[0]}: exit {r.returncode}: {out}")
        return out

    def publish(self, queue, n):
        for i in range(n):
            status, doc = self.api("POST", "/api/exchanges/%2F/amq.default/publish",
                                   {"properties": {}, "routing_key": queue,
                                    "payload": f"m{i}", "payload_encoding": "string"})
            h.expect(status == 200 and doc == {"routed": True},
                     f"publish to {queue}: {status} {doc}")

    def ready_counts(self):
        status, doc = self.api("GET", "/api/queues/%2F?columns=name,messages_ready")
        h.expect_equal(status, 200, "GET /api/queues/%2F")
        return {q["name"]: q.get("messages_ready") for q in doc}

    @staticmethod
    def _stop(proc, grace_s):
        if proc is None or proc.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=grace_s)
                return
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        self._stop(self.server, STOP_GRACE_S)
        if self.server is not None:
            # What the node started (erl_child_setup, inet_gethost) too.
            try:
                os.killpg(self.server.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._stop(self.epmd, 5.0)
        shutil.rmtree(self.dir, ignore_errors=True)

    def diagnostics(self):
        return f"== rabbitmq {self.node}:\n{h._tail(self.log_path)}"

    def __repr__(self):
        return f"<Rabbit {self.node} management {self.mgmt}>"


def main():
    h.require_kinds("http")
    if not os.access(os.path.join(RABBIT_BIN, "rabbitmq-server"), os.X_OK):
        raise h.TestFailure("rabbitmq-server is missing: scripts/deps test installs it")
    rabbit = Rabbit()

    h.section("rabbitmq-server starts on loopback ports of its own")
    started = time.monotonic()
    rabbit.start()
    h.wait_until(rabbit.ready, START_BOUND_S, "the management API answering")
    print(f"   management API up after {time.monotonic() - started:.1f} s", flush=True)

    h.section("a monitoring user, as the example says")
    rabbit.ctl("add_user", USER, PASSWORD)
    rabbit.ctl("set_user_tags", USER, "monitoring")
    rabbit.ctl("set_permissions", "-p", "/", USER, "^$", "^$", ".*")
    for q in ("orders", "mail", "audit"):
        status, _ = rabbit.api("PUT", f"/api/queues/%2F/{q}", {"durable": False})
        h.expect_equal(status, 201, f"declare {q}")
    rabbit.publish("mail", 2)
    h.wait_until(rabbit.ready_counts, BOUND_S, "the stats of every queue",
                 ok=lambda c: c.get("mail") == 2 and c.get("orders") == 0)

    d = h.tmpdir()
    auth = os.path.join(d, "rabbitmq.auth")
    h.write_atomic(auth, f"{USER}:{PASSWORD}\n", mode=0o600)
    sock = os.path.join(d, "api.sock")

    with open(EXAMPLE) as f:
        example = ini_sections(f.read())
    config = {"agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
              "http": {"listen": f"unix:{sock}"}}
    for name, keys in example.items():
        if not name.startswith("probe "):
            continue
        keys = dict(keys)
        keys["url"] = keys["url"].replace("127.0.0.1:15672", f"127.0.0.1:{rabbit.mgmt}")
        h.expect_equal(keys.get("auth_file"), "/etc/lbagent/rabbitmq.auth",
                       f"[{name}] auth_file in the example")
        keys.update(auth_file=auth, interval=f"{INTERVAL_MS}ms", timeout=f"{TIMEOUT_MS}ms")
        config[name] = keys
    # The example's warn 1000 and crit 10000, lowered for a short test.
    h.expect_equal((config["probe rabbitmq-backlog"].get("warn"),
                    config["probe rabbitmq-backlog"].get("crit")), ("1000", "10000"),
                   "the example's thresholds")
    config["probe rabbitmq-backlog"].update(warn="5", crit="20")
    h.expect(set(config) >= {"probe rabbitmq-backlog", "probe rabbitmq-alarms"},
             f"the example's probes: {sorted(config)}")
    lb = h.Lbagent(config)

    def status():
        code, doc = h.http_json("unix:" + sock, "/status")
        h.expect_equal(code, 200, "/status")
        SEEN.append(json.dumps(doc))
        return {p["name"]: p for s in doc["services"] for p in s["probes"]}

    def last(name):
        return status()[name]["last"] or {}

    def reply(want, what):
        return h.wait_reply(lb, want, what, timeout_s=BOUND_S, seen=SEEN)

    h.section("no backlog: both probes ok, the largest queue named")
    reply(b"up\n", "`up` with 2 messages ready at most")
    p = h.wait_until(lambda: last("rabbitmq-backlog"), BOUND_S, "backlog ok at 2",
                     ok=lambda p: p.get("result") == "ok" and p.get("value") == 2)
    print(f"   backlog: {p}", flush=True)
    h.expect_equal(p.get("reason"), "max *.messages_ready 2 (mail)", "the backlog's reason")
    p = h.wait_until(lambda: last("rabbitmq-alarms"), BOUND_S, "alarms ok",
                     ok=lambda p: p.get("result") == "ok")
    print(f"   alarms: {p}", flush=True)
    h.expect(p.get("reason", "").startswith("HTTP 200"), f"the alarms reason: {p}")

    h.section("a new queue, whose statistics come later, keeps the probe ok")
    status_, _ = rabbit.api("PUT", "/api/queues/%2F/fresh", {"durable": False})
    h.expect_equal(status_, 201, "declare fresh")
    print(f"   just declared: {rabbit.ready_counts()}", flush=True)
    h.hold_for(lambda: last("rabbitmq-backlog"), 2.0, "backlog stays ok with a new queue",
               ok=lambda p: p.get("result") == "ok")

    h.section("orders past warn: 75%, orders named")
    rabbit.publish("orders", 8)
    r = reply(h.starts(b"up 75%"), "`up 75%` with 8 messages in orders")
    print(f"   reply: {r!r}", flush=True)
    h.expect(b"max *.messages_ready 8 (orders) at or above warn 5" in r,
             f"the reason names the aggregate, the queue and warn: {r!r}")
    h.expect_equal(last("rabbitmq-backlog").get("value"), 8, "the probe's value")

    h.section("orders past crit: 50%; the value follows the largest queue")
    rabbit.publish("orders", 15)
    r = reply(h.starts(b"up 50%"), "`up 50%` with 23 messages in orders")
    print(f"   reply: {r!r}", flush=True)
    h.expect(b"max *.messages_ready 23 (orders) at or above crit 20" in r, f"reason: {r!r}")
    rabbit.publish("audit", 30)
    p = h.wait_until(lambda: last("rabbitmq-backlog"), BOUND_S, "the value at audit's 30",
                     ok=lambda p: p.get("value") == 30)
    h.expect_equal(p.get("reason"), "max *.messages_ready 30 (audit) at or above crit 20",
                   "the reason names audit now")
    status_, _ = rabbit.api("DELETE", "/api/queues/%2F/audit/contents")
    h.expect_equal(status_, 204, "purge audit")
    status_, _ = rabbit.api("DELETE", "/api/queues/%2F/orders/contents")
    h.expect_equal(status_, 204, "purge orders")
    r = reply(b"up\n", "`up` once the queues are purged")

    h.section("a wrong password in the auth file: HTTP 401, then back without reload")
    h.write_atomic(auth, f"{USER}:{WRONG}\n", mode=0o600)
    r = reply(h.starts(b"down"), "`down` (alarms probe on_crit = down) on 401")
    print(f"   reply: {r!r}", flush=True)
    # Each probe reads the file at its own next run.
    h.wait_until(lambda: last("rabbitmq-backlog"), BOUND_S, "the backlog probe's 401",
                 ok=lambda p: (p.get("result"), p.get("reason")) == ("crit", "HTTP 401"))
    h.write_atomic(auth, f"{USER}:{PASSWORD}\n", mode=0o600)
    reply(b"up\n", "`up` with the right password back")

    h.section("the password is nowhere lbagent speaks")
    SEEN.append(lb.log())
    for s in (PASSWORD, WRONG, base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()):
        for text in SEEN:
            text = text.decode(errors="replace") if isinstance(text, bytes) else text
            h.expect(s not in text, f"a secret in what lbagent said: {text[:300]!r}")

    h.section("the node stops, its epmd with it")
    node = rabbit.node
    rabbit.close()
    h.env().forget(rabbit)
    left = h.pgrep_f(node) + h.pgrep_f(f"epmd -port {rabbit.epmd_port}")
    h.expect(not left, f"processes left after the stop: {left}")


h.run(main)
