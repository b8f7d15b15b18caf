"""The system probes. With [agent] proc_root at a fixed tree the test writes
and rewrites (2 CPUs):

- load (per CPU, window 1 and 15): warn -> weight, crit -> down;
- cpu (busy percent between two runs, from stat's counters the test keeps
  advancing): warn and crit;
- memory (from MemAvailable) warn and crit; swap warn and crit, and no swap
  at all -> ok;
- process by name (PID/comm; a zombie does not count) and by pidfile.

With the real /proc: process by name and by pidfile for a real process (a
copy of sleep under a name unique to the run), killed -> down; file with
max_age on a file whose mtime the test sets old and new, and missing.

On the real temp dir: disk thresholds that must be crossed (`warn = 0%`,
free space below `warn = 1000T`) and that must not (`crit = 100%`, inodes
`crit = 100%`).

mountpoint, in a mount namespace of the test's own: a directory not yet
mounted -> down with the reason, a tmpfs mounted there -> up, the wrong
fstype -> down naming both types."""

import ctypes
import errno
import os
import sys
import time
import uuid

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)


def p(kind, **keys):
    base = {"type": kind, "interval": f"{INTERVAL_MS}ms", "timeout": f"{TIMEOUT_MS}ms"}
    base.update(keys)
    return base


def step(lb, change, want, what, restore=None):
    """change(); the reply becomes want (bytes: exact; else a prefix given
    as ("prefix",)); then restore() and `up` again."""
    change()
    if isinstance(want, tuple):
        r = h.wait_reply(lb, h.starts(want[0]), f"reply starting {want[0]!r} for {what}",
                         timeout_s=BOUND_S)
    else:
        r = h.wait_reply(lb, want, f"{want!r} for {what}", timeout_s=BOUND_S)
    print(f"   {what}: {r!r}", flush=True)
    if restore is not None:
        restore()
        h.wait_reply(lb, b"up\n", f"`up` after {what}", timeout_s=BOUND_S)
    return r


def fixed_tree():
    h.section("proc_root: a fixed tree")
    d = h.tmpdir()
    tree = h.ProcTree(ncpu=2)
    tree.set_loadavg(0.5, 0.5, 0.5)
    tree.set_meminfo(total_kb=8000000, available_kb=6000000,
                     swap_total_kb=2000000, swap_free_kb=1800000)
    tree.cpu_busy(10)
    tree.add_process(100, "myapp")
    tree.add_process(200, "mydaemon")
    tree.add_process(300, "unrelated")
    pidfile = os.path.join(d, "app.pid")
    h.write_atomic(pidfile, "200\n")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes", "proc_root": tree.path},
        "probe load": p("load", window=1, warn=1, crit=2, on_warn="50%", on_crit="down"),
        "probe load15": p("load", window=15, warn=1, crit=2, on_warn="45%", on_crit="down"),
        "probe cpu": p("cpu", warn="50%", crit="80%", on_warn="55%", on_crit="down"),
        "probe memory": p("memory", warn="80%", crit="95%", on_warn="60%", on_crit="down"),
        "probe swap": p("swap", warn="50%", crit="80%", on_warn="70%", on_crit="40%"),
        "probe byname": p("process", name="myapp"),
        "probe bypid": p("process", pidfile=pidfile),
    })
    h.wait_reply(lb, b"up\n", "`up` with every fixed value healthy", timeout_s=BOUND_S)

    def load(a, b, c):
        return lambda: tree.set_loadavg(a, b, c)

    h.section("load per CPU (2 CPUs)")
    step(lb, load(3.0, 0.5, 0.5), (b"up 50% #load: ",), "load 3.0 = 1.5 per CPU (warn 1)")
    step(lb, load(5.0, 0.5, 0.5), (b"down #load: ",), "load 5.0 = 2.5 per CPU (crit 2)",
         restore=load(0.5, 0.5, 0.5))
    step(lb, load(0.5, 0.5, 3.0), (b"up 45% #load15: ",), "15-minute load 1.5 per CPU",
         restore=load(0.5, 0.5, 0.5))
    # Per CPU: 1.8 over 2 CPUs is 0.9, below warn 1: still up.
    tree.set_loadavg(1.8, 1.8, 1.8)
    h.hold_for(lambda: lb.ask(), 2 * INTERVAL_MS / 1000 + 0.5,
               "`up` at load 1.8 on 2 CPUs (0.9 per CPU, warn 1)", ok=lambda r: r == b"up\n")
    tree.set_loadavg(0.5, 0.5, 0.5)

    h.section("cpu busy")
    step(lb, lambda: tree.cpu_busy(60), (b"up 55% #cpu: ",), "cpu 60% busy (warn 50%)")
    step(lb, lambda: tree.cpu_busy(95), (b"down #cpu: ",), "cpu 95% busy (crit 80%)",
         restore=lambda: tree.cpu_busy(10))

    h.section("memory")
    mem = tree.set_meminfo
    step(lb, lambda: mem(available_kb=1200000, swap_free_kb=1800000), (b"up 60% #memory: ",),
         "memory 85% used (warn 80%)")
    step(lb, lambda: mem(available_kb=200000, swap_free_kb=1800000), (b"down #memory: ",),
         "memory 97.5% used (crit 95%)",
         restore=lambda: mem(available_kb=6000000, swap_free_kb=1800000))

    h.section("swap")
    step(lb, lambda: mem(swap_free_kb=800000), (b"up 70% #swap: ",), "swap 60% used (warn 50%)")
    step(lb, lambda: mem(swap_free_kb=200000), (b"up 40% #swap: ",),
         "swap 90% used (crit 80%, on_crit 40%)")
    step(lb, lambda: mem(swap_total_kb=0, swap_free_kb=0), b"up\n", "no swap at all: ok")
    mem(swap_free_kb=1800000)
    h.wait_reply(lb, b"up\n", "`up` with swap back", timeout_s=BOUND_S)

    h.section("process by name")
    step(lb, lambda: tree.add_process(100, "otherapp"), (b"down #byname: ",),
         "no process named myapp", restore=lambda: tree.add_process(100, "myapp"))
    step(lb, lambda: tree.add_process(100, "myapp", state="Z"), (b"down #byname: ",),
         "myapp a zombie", restore=lambda: tree.add_process(100, "myapp"))
    step(lb, lambda: tree.remove_process(100), (b"down #byname: ",), "myapp gone",
         restore=lambda: tree.add_process(100, "myapp"))

    h.section("process by pidfile")
    step(lb, lambda: tree.remove_process(200), (b"down #bypid: ",), "pid 200 gone",
         restore=lambda: tree.add_process(200, "mydaemon"))
    step(lb, lambda: h.write_atomic(pidfile, "999\n"), (b"down #bypid: ",),
         "pidfile naming a pid that does not exist",
         restore=lambda: h.write_atomic(pidfile, "200\n"))
    step(lb, lambda: os.unlink(pidfile), (b"down #bypid: ",), "pidfile missing",
         restore=lambda: h.write_atomic(pidfile, "200\n"))
    tree.cpu_busy(None)


def real_proc():
    h.section("the real /proc: a real process, a file's age")
    d = h.tmpdir()
    name = "lbsl" + uuid.uuid4().hex[:6]
    exe = os.path.join(d, name)
    with open("/bin/sleep", "rb") as src, open(exe, "wb") as dst:
        dst.write(src.read())
    os.chmod(exe, 0o755)
    sl = h.Spawned([exe, "600"], name="sleeper")
    pidfile = os.path.join(d, "sleeper.pid")
    h.write_atomic(pidfile, f"{sl.pid}\n")
    hb = os.path.join(d, "heartbeat")
    h.write_atomic(hb, "beat\n")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe pname": p("process", name=name),
        "probe ppid": p("process", pidfile=pidfile),
        "probe hb": p("file", path=hb, max_age="30s", on_warn="down", on_crit="down"),
    }, name="lbagent-real")
    h.wait_reply(lb, b"up\n", f"`up` with {name} running and a fresh heartbeat",
                 timeout_s=BOUND_S)

    h.section("file max_age")
    now = time.time()
    step(lb, lambda: os.utime(hb, (now - 3600, now - 3600)), (b"down #hb: ",),
         "heartbeat an hour old (max_age 30s)",
         restore=lambda: os.utime(hb, (time.time(), time.time())))
    step(lb, lambda: os.utime(hb, (now - 20, now - 20)), b"up\n",
         "heartbeat 20 s old: within max_age 30s")
    os.utime(hb, None)
    step(lb, lambda: os.unlink(hb), (b"down #hb: ",), "heartbeat missing",
         restore=lambda: h.write_atomic(hb, "beat\n"))

    h.section("the real process killed")
    sl.kill()
    r = h.wait_reply(lb, lambda r: r.startswith(b"down #pname: ") and b"; ppid: " in r,
                     f"`down #pname: ...; ppid: ...` once {name} is killed", timeout_s=BOUND_S)
    print(f"   {name} killed: {r!r}", flush=True)
    return lb


def disk():
    h.section("disk and inodes on the real temp dir")
    d = h.tmpdir()
    st = os.statvfs(d)
    print(f"   {d}: {100 * (1 - st.f_bavail / st.f_blocks):.1f}% used (of what users get), "
          f"{st.f_bavail * st.f_frsize >> 30} GiB free", flush=True)
    if st.f_bavail == 0:
        raise h.Skip(f"the filesystem of {d} is full")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe dwarn": p("disk", path=d, warn="0%", on_warn="80%"),
        "probe dok": p("disk", path=d, crit="100%"),
        "probe dfree": p("disk", path=d, warn="1000T", on_warn="85%"),
        "probe inok": p("inodes", path=d, crit="100%"),
    }, name="lbagent-disk")
    r = h.wait_reply(lb, lambda r: r.startswith(b"up 80% #dwarn: ") and b"; dfree: " in r,
                     "both crossed disk thresholds listed", timeout_s=BOUND_S)
    print(f"   reply: {r!r}", flush=True)
    h.expect(b"dok:" not in r and b"inok:" not in r,
             f"crit = 100% is not crossed on a filesystem that is not full: {r!r}")


def mountpoint():
    h.section("mountpoint: a volume that is not mounted, then is")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                           ctypes.c_ulong, ctypes.c_char_p]
    CLONE_NEWNS, MS_REC, MS_PRIVATE = 0x00020000, 0x4000, 1 << 18
    if libc.unshare(CLONE_NEWNS) != 0:
        raise h.Skip(f"no mount namespace: {os.strerror(ctypes.get_errno())}")
    # Private from the mount holding the test's directory down, so that the
    # tmpfs never reaches the namespace the test was started in. In a chroot
    # whose root is no mount point, "/" cannot be made private (EINVAL): a
    # chroot made by scripts/fresh-machine is private already.
    top = h.tmpdir()
    while not os.path.ismount(top):
        top = os.path.dirname(top)
    if libc.mount(None, top.encode(), None, MS_REC | MS_PRIVATE, None) != 0 \
            and not (ctypes.get_errno() == errno.EINVAL and top == "/"):
        raise h.TestFailure(f"making {top} private: "
                            f"{os.strerror(ctypes.get_errno())}")
    data = os.path.join(h.tmpdir(), "data")
    os.mkdir(data)
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe data": p("mountpoint", path=data),
    }, name="lbagent-mountpoint")
    r = h.wait_reply(lb, h.starts(b"down #data: not a mount point (part of "),
                     "`down #data: not a mount point ...` before the mount",
                     timeout_s=BOUND_S)
    print(f"   not mounted: {r!r}", flush=True)
    if libc.mount(b"lbagent-test", data.encode(), b"tmpfs", 0, None) != 0:
        raise h.TestFailure(f"mount tmpfs: {os.strerror(ctypes.get_errno())}")
    try:
        h.wait_reply(lb, b"up\n", "`up` once a tmpfs is mounted there", timeout_s=BOUND_S)
        lb.stop()
        lb = h.Lbagent({
            "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
            "probe typed": p("mountpoint", path=data, fstype="nfs4", on_crit="50%"),
        }, name="lbagent-mountpoint-type")
        r = h.wait_reply(lb, b"up 50% #typed: tmpfs mounted, expected nfs4\n",
                         "the wrong type named", timeout_s=BOUND_S)
        print(f"   mounted as tmpfs, nfs4 expected: {r!r}", flush=True)
        lb.stop()
    finally:
        libc.umount2(data.encode(), 2)


def main():
    h.require_kinds("load", "cpu", "memory", "swap", "process", "file", "disk", "inodes",
                    "mountpoint")
    mountpoint()
    disk()
    real_proc()
    fixed_tree()


h.run(main)
