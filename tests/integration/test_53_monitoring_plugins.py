"""The exec probe with Debian's monitoring-plugins-basic, run unchanged
(/usr/lib/nagios/plugins), one service per probe on the shared port
(agent-send NAME) and the status on the API's unix socket:

- check_tcp against a closed loopback port: CRITICAL, exit 2 -> `down`;
- check_tcp against a listening port: ok, the reason without the
  performance data, the value its `time` in s;
- check_load with thresholds that make it WARNING (the test keeps the load
  above 0 meanwhile): `up 75% #load: LOAD WARNING - ...`, nothing of the
  performance data (`|load1=...`) in the reply, the value load1, no unit;
- check_disk WARNING on a filesystem of the test's own (a 16 MiB tmpfs in a
  mount namespace of its own, holding a 4 MiB file, where root; else the
  test's directory): the value the used bytes, B, as check_disk says;
- check_http against a local HTTP server: ok, the value its `time` in s;
- check_tcp with a bad argument (the plugin itself exits 3: checked first)
  is unknown: with the default on_unknown (ignore) the node stays up, the
  status says unknown, lbagent_probe_last_result is 3 and a warning names
  the reason; with on_unknown = down the node goes down, in HAProxy too;
- a command killed by a signal is unknown: the node stays up."""

import ctypes
import errno
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

PLUGINS = "/usr/lib/nagios/plugins"
INTERVAL_MS = 1000
TIMEOUT_MS = 900
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)


def plugin(name):
    path = os.path.join(PLUGINS, name)
    if not os.access(path, os.X_OK):
        raise h.TestFailure(f"{path} is missing: scripts/deps test installs "
                            "monitoring-plugins-basic")
    return path


def probe(command, **keys):
    base = {"type": "exec", "command": command, "interval": f"{INTERVAL_MS}ms",
            "timeout": f"{TIMEOUT_MS}ms"}
    base.update(keys)
    return base


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class Spinner:
    """A busy child process, so that the load average is above 0."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])

    def close(self):
        self.proc.kill()
        self.proc.wait()


CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x00020000, 0x4000, 0x40000
FILLED = 4 << 20


def own_filesystem(d):
    """A directory nothing but this test writes to: a 16 MiB tmpfs holding
    one 4 MiB file, mounted in a mount namespace of this process (lbagent
    and the plugins it runs inherit it). Scenarios run side by side, and
    what they write to the shared /tmp moved check_disk's figure by more
    than 1% between lbagent's run and the test's. Without the privilege
    (not root, scenarios one at a time): the test's directory."""
    path = os.path.join(d, "disk")
    os.mkdir(path)
    if os.geteuid() != 0:
        return path, False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_ulong, ctypes.c_char_p]
    if libc.unshare(CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise h.TestFailure(f"a mount namespace: {os.strerror(e)}")
    # Private from the mount holding the directory down, so that the tmpfs
    # is not propagated to the namespace the test was started in. In a
    # chroot whose root is no mount point, "/" cannot be made private
    # (EINVAL): a chroot made by scripts/fresh-machine is private already.
    top = d
    while not os.path.ismount(top):
        top = os.path.dirname(top)
    if libc.mount(None, top.encode(), None, MS_REC | MS_PRIVATE, None) != 0 \
            and ctypes.get_errno() != errno.EINVAL:
        e = ctypes.get_errno()
        raise h.TestFailure(f"making {top} private: {os.strerror(e)}")
    if libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0,
                  b"size=16m,mode=0755") != 0:
        e = ctypes.get_errno()
        raise h.TestFailure(f"a tmpfs of the test's own: {os.strerror(e)}")
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    h.env().register(Unmount(libc, path))
    with open(os.path.join(path, "fill"), "wb") as f:
        f.write(b"x" * FILLED)
    return path, True


class Unmount:
    """Registered first, closed last (after lbagent stops): the mount point
    is then an empty directory the harness removes with the rest."""

    def __init__(self, libc, path):
        self.libc, self.path = libc, path

    def diagnostics(self):
        return ""

    def close(self):
        self.libc.umount2(self.path.encode(), 0)


def main():
    h.require_kinds("exec")
    check_tcp, check_load = plugin("check_tcp"), plugin("check_load")
    check_disk, check_http = plugin("check_disk"), plugin("check_http")
    d = h.tmpdir()
    disk, private = own_filesystem(d)
    sock = os.path.join(d, "api.sock")
    closed_port = h.free_port()         # nothing listens there
    backend = h.backend_stub()
    web = h.HttpStub()
    web.set("/", 200, b"hello\n")
    bad_args = f"{check_tcp} -H 127.0.0.1 -p 0"

    h.section("check_tcp with a bad argument exits 3 (UNKNOWN) by itself")
    r = subprocess.run(bad_args.split(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    first = r.stdout.decode(errors="replace").split("\n", 1)[0]
    print(f"   exit {r.returncode}: {first!r}", flush=True)
    h.expect_equal(r.returncode, 3, f"the exit status of {bad_args}")

    probes = {
        "closed": probe(f"{check_tcp} -H 127.0.0.1 -p {closed_port}"),
        "open": probe(f"{check_tcp} -H 127.0.0.1 -p {backend.port}"),
        "load": probe(f"{check_load} -w 0,0,0 -c 1000,1000,1000", on_warn="75%"),
        "disk": probe(f"{check_disk} -w 100% -c 0% -p {disk}", on_warn="60%"),
        "http": probe(f"{check_http} -H 127.0.0.1 -p {web.port} -u /"),
        "unk": probe(bad_args),
        "unkdown": probe(bad_args, on_unknown="down"),
        "sig": probe("/bin/sh -c 'kill -KILL $$'"),
    }
    config = {"agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
              "http": {"listen": f"unix:{sock}"}}
    for name, keys in probes.items():
        config[f"probe {name}"] = keys
        config[f"service {name}"] = {"probes": name}
    lb = h.Lbagent(config)

    def status():
        code, doc = h.http_json("unix:" + sock, "/status")
        h.expect_equal(code, 200, "/status")
        return {p["name"]: p for s in doc["services"] for p in s["probes"]}

    def reply(name, want, what):
        return h.wait_reply(lb, want, what, send=name.encode() + b"\n",
                            timeout_s=BOUND_S)

    ps = h.wait_until(status, BOUND_S, "every probe's first run",
                      ok=lambda ps: all(ps[n]["last"] is not None for n in probes))
    for n, p in ps.items():
        print(f"   {n}: {p['last']}", flush=True)

    h.section("check_tcp, closed port: CRITICAL -> down")
    r = reply("closed", h.starts(b"down #closed: "), "`down` for the closed port")
    print(f"   reply: {r!r}", flush=True)
    h.expect(f"port {closed_port}".encode() in r, f"the plugin's reason: {r!r}")
    h.expect_equal(status()["closed"]["last"]["result"], "crit", "closed's result")

    h.section("check_tcp, listening port: up, the value its time in s")
    reply("open", b"up\n", "`up` for the listening port")
    last = status()["open"]["last"]
    h.expect(last["result"] == "ok" and last["reason"].startswith("TCP OK - ") and
             last["reason"].endswith(f"port {backend.port}"),
             f"open: the reason without the performance data: {last}")
    h.expect(last["unit"] == "s" and isinstance(last["value"], float) and
             0 <= last["value"] < 10, f"open: the time in s: {last}")

    h.section("check_load WARNING -> up 75%, no performance data in the reply")
    # check_load warns above 0, and an idle machine's load can be 0.00.
    spinner = Spinner()
    try:
        h.wait_until(loadavg, 30, "a load average above 0", ok=lambda la: max(la) > 0)
        r = reply("load", h.starts(b"up 75% #load: LOAD WARNING - "),
                  "`up 75% #load: LOAD WARNING - ...`")
        last = status()["load"]["last"]
    finally:
        spinner.close()
    print(f"   reply: {r!r}", flush=True)
    h.expect(b"|" not in r and b"load1=" not in r,
             f"the performance data is not in the reply: {r!r}")
    h.expect(last["result"] == "warn" and
             re.fullmatch(r"LOAD WARNING - total load average: [0-9., ]+",
                          last["reason"]), f"load's reason: {last}")
    loads = [float(x) for x in last["reason"].rsplit(": ", 1)[1].split(", ")]
    h.expect(last["unit"] == "" and isinstance(last["value"], float) and
             abs(last["value"] - loads[0]) < 0.0051,
             f"load: the value is load1 as the plugin printed it, no unit: {last}")

    h.section("check_disk WARNING -> up 60%, the value the used bytes in B")
    r = reply("disk", h.starts(b"up 60% #disk: DISK WARNING - free space: "),
              "`up 60% #disk: DISK WARNING - ...`")
    print(f"   reply: {r!r}", flush=True)
    h.expect(b"|" not in r, f"no performance data in the reply: {r!r}")
    last = status()["disk"]["last"]
    # The plugin's own first performance value, as it prints it now (its
    # wording and rounding differ between monitoring-plugins 2.3 and 2.4):
    # what lbagent read. On the test's own tmpfs nothing else writes: the
    # used bytes are the 4 MiB file; elsewhere other tests may write.
    out = subprocess.run(f"{check_disk} -w 100% -c 0% -p {disk}", shell=True,
                         stdout=subprocess.PIPE, timeout=30).stdout.decode()
    m = re.search(r"\|\s*\S+?=([0-9.]+)B;", out)
    h.expect(m is not None, f"check_disk's performance data in B: {out!r}")
    st = os.statvfs(disk)
    size = st.f_blocks * st.f_frsize
    h.expect(last["unit"] == "B" and isinstance(last["value"], float) and
             0 <= last["value"] <= size and
             abs(last["value"] - float(m.group(1))) <= size / 100,
             f"disk: the used bytes in B, as check_disk says ({out.strip()!r}): {last}")
    if private:
        h.expect(abs(last["value"] - FILLED) <= FILLED / 16,
                 f"disk: about the 4 MiB written to the test's tmpfs: {last}")

    h.section("check_http against a local server: up, the value its time in s")
    reply("http", b"up\n", "`up` for check_http")
    last = status()["http"]["last"]
    h.expect(last["result"] == "ok" and last["reason"].startswith("HTTP OK: ") and
             "|" not in last["reason"] and not last["reason"].endswith(" "),
             f"http: the reason without the performance data: {last}")
    h.expect(last["unit"] == "s" and isinstance(last["value"], float) and
             0 <= last["value"] < 10, f"http: the time in s: {last}")
    h.expect(web.count("/") > 0, "check_http asked the local server")

    h.section("UNKNOWN (bad arguments): on_unknown ignore stays up, down goes down")
    reply("unkdown", b"down #unkdown: " + first.encode() + b"\n",
          "`down #unkdown: <the plugin's line>` with on_unknown = down")
    h.expect_equal(lb.ask(send=b"unk\n"), b"up\n", "unk (on_unknown ignore)")
    ps = status()
    for n, counted in (("unk", "ok"), ("unkdown", "unknown")):
        p = ps[n]
        h.expect(p["last"]["result"] == "unknown" and p["last"]["reason"] == first and
                 p["counted"] == counted and p["runs"]["unknown"] >= 1 and
                 p["runs"]["crit"] == 0, f"{n} in the status: {p}")
    code, _, body = h.http_request("unix:" + sock, "/metrics")
    h.expect_equal(code, 200, "/metrics")
    metrics = body.decode()
    for n in ("unk", "unkdown", "sig"):
        h.expect(f'lbagent_probe_last_result{{probe="{n}",service="{n}"}} 3\n' in metrics,
                 f"lbagent_probe_last_result of {n} is 3:\n" +
                 "\n".join(x for x in metrics.splitlines() if "last_result" in x))
    want = re.compile(r"warning: probe unk: unknown.*: " + re.escape(first) + "$", re.M)
    log = h.wait_until(lb.log, 5, "a warning with unk's reason", ok=want.search)
    h.expect(not re.search(r"probe unk: crit", log), "unk never crit")

    h.section("a command killed by a signal: unknown, the node stays up")
    p = status()["sig"]
    h.expect(p["last"]["result"] == "unknown" and
             p["last"]["reason"] == "killed by signal 9" and p["counted"] == "ok",
             f"sig in the status: {p}")
    h.hold_for(lambda: lb.ask(send=b"sig\n"), 3 * INTERVAL_MS / 1000,
               "sig stays up", ok=lambda r: r == b"up\n")

    h.section("HAProxy: on_unknown ignore keeps the server UP, down takes it out")
    hap = h.Haproxy(backends={
        "bunk": [h.Server("s1", lb, agent_send="unk")],
        "bunkdown": [h.Server("s1", lb, agent_send="unkdown")],
    })
    h.wait_until(lambda: hap.stat("bunkdown", "s1"), h.startup_bound_s() + BOUND_S,
                 "bunkdown/s1 DOWN by its agent", describe=h.describe_stat,
                 ok=lambda st: st["status"].startswith("DOWN"))
    hap.wait_status("bunk", "s1", "UP", h.startup_bound_s(), "bunk/s1 UP")
    hap.hold_status("bunk", "s1", "UP", 2 * INTERVAL_MS / 1000, "bunk/s1 stays UP")


h.run(main)
