"""The exec probe, with scripts the test writes in its temp dir:

- one script whose exit status and output the test sets: exit 0 -> `up`,
  exit 1 -> on_warn = 75% -> `up 75% #ex: <first line>`, exit 2 -> `down
  #ex: <first line>`, exit 3 -> unknown, which the default on_unknown
  (ignore) logs and does not count: still `up`; only the first line counts;
- a first line of a megabyte -> the reason is cut, the reply stays one
  well-formed line; a flood of output after the first line (2 MB) -> the
  exit status still decides (warn), the first line is the reason;
- a script (and its children) sleeping past the timeout, ignoring SIGTERM:
  crit `timed out after 400ms`, raw agent replies keep coming meanwhile, and
  once the script no longer sleeps nothing of it is left (pgrep -f on a
  marker unique to this run) and lbagent has no zombie children;
- command lines split like a shell, run without one: `/bin/sh -c '...'`,
  double quotes, backslashes, a bare name found in the standard PATH;
- `user = nobody` runs the command as nobody."""

import os
import sys
import uuid

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 500
TIMEOUT_MS = 400
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
MARK = "slw" + uuid.uuid4().hex[:10]


def probe(command, **keys):
    base = {"type": "exec", "command": command, "interval": f"{INTERVAL_MS}ms",
            "timeout": f"{TIMEOUT_MS}ms"}
    base.update(keys)
    return base


def main():
    h.require_kinds("exec")
    d = h.tmpdir()
    ctl = os.path.join(d, "ctl")
    os.makedirs(ctl)

    # The controlled script: mode file -> behaviour.
    h.write_atomic(os.path.join(ctl, "mode"), "0")
    h.write_script(os.path.join(d, "check.sh"), f"""
mode=$(/bin/cat {ctl}/mode)
case "$mode" in
0) echo "OK all fine"; exit 0 ;;
1) echo "WARNING queue at 91%"; echo "second line is not the reason"; exit 1 ;;
2) printf 'CRITICAL replica gone\\nsecond line\\n'; exit 2 ;;
3) echo "UNKNOWN cannot tell"; exit 3 ;;
longline) /usr/bin/head -c 1000000 /dev/zero | /usr/bin/tr '\\0' x; echo; exit 2 ;;
flood) echo "flood head"; /usr/bin/head -c 2000000 /dev/zero | /usr/bin/tr '\\0' y; exit 1 ;;
esac
echo "bad mode $mode"; exit 2
""")
    # The sleeper: while the flag exists, it and two children sleep 30 s
    # with SIGTERM ignored (inherited by the children); the children's
    # command lines carry MARK, as does the script's path.
    sleeper_bin = os.path.join(d, f"sleep-{MARK}")
    with open("/bin/sleep", "rb") as src, open(sleeper_bin, "wb") as dst:
        dst.write(src.read())
    os.chmod(sleeper_bin, 0o755)
    flag = os.path.join(ctl, "sleep-on")
    h.write_script(os.path.join(d, f"slow-{MARK}.sh"), f"""
trap '' TERM
if [ -e {flag} ]; then
    {sleeper_bin} 30 &
    {sleeper_bin} 31
    wait
fi
echo "awake"
exit 0
""")
    # Prints its arguments joined by ',' (a '|' would begin performance
    # data), exit 1.
    h.write_script(os.path.join(d, "args.sh"), """
out=""
for a in "$@"; do out="$out$a,"; done
echo "$out"
exit 1
""")
    h.write_script(os.path.join(d, "whoami.sh"), """
echo "running as $(/usr/bin/id -un)"
exit 1
""", mode=0o755)

    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe ex": probe(os.path.join(d, "check.sh"), on_warn="75%"),
        "probe slow": probe(os.path.join(d, f"slow-{MARK}.sh")),
    })

    h.section("exit 0 -> up")
    h.wait_reply(lb, b"up\n", "`up` for exit 0", timeout_s=BOUND_S)
    fds_start = min(lb.fd_count() for _ in range(20))

    steps = [
        ("1", b"up 75% #ex: WARNING queue at 91%\n", "exit 1, on_warn = 75%"),
        ("2", b"down #ex: CRITICAL replica gone\n", "exit 2"),
    ]
    for mode, want, what in steps:
        h.section(what)
        h.write_atomic(os.path.join(ctl, "mode"), mode)
        h.wait_reply(lb, want, f"{want!r} for {what}", timeout_s=BOUND_S)
        h.write_atomic(os.path.join(ctl, "mode"), "0")
        h.wait_reply(lb, b"up\n", f"`up` after {what}", timeout_s=BOUND_S)

    h.section("exit 3 -> unknown, not counted (on_unknown = ignore): up")
    mark = lb.log_mark()
    h.write_atomic(os.path.join(ctl, "mode"), "3")
    h.wait_until(lambda: lb.log_since(mark), BOUND_S, "the warning for exit 3",
                 ok=lambda t: "warning: probe ex: unknown (on_unknown = ignore: "
                              "not counted): UNKNOWN cannot tell" in t)
    h.expect_equal(lb.ask(), b"up\n", "the reply while the probe is unknown")
    h.write_atomic(os.path.join(ctl, "mode"), "0")
    h.wait_until(lambda: lb.log_since(mark), BOUND_S, "exit 0 after exit 3",
                 ok=lambda t: "probe ex: no longer unknown (ok): OK all fine" in t)
    h.expect_equal(lb.ask(), b"up\n", "`up` after exit 3")

    h.section("a first line of a megabyte")
    h.write_atomic(os.path.join(ctl, "mode"), "longline")
    r = h.wait_reply(lb, h.starts(b"down #ex: xxxx"), "`down #ex: xxx...` for the long line",
                     timeout_s=BOUND_S)
    print(f"   reply ({len(r)} bytes): {r[:60]!r}...", flush=True)
    h.expect(h.reply_reason(r).startswith(b"ex: " + b"x" * 40),
             f"the reason is the (cut) first line: {r!r}")
    h.write_atomic(os.path.join(ctl, "mode"), "0")
    h.wait_reply(lb, b"up\n", "`up` after the long line", timeout_s=BOUND_S)

    h.section("2 MB of output after the first line")
    h.write_atomic(os.path.join(ctl, "mode"), "flood")
    h.wait_reply(lb, b"up 75% #ex: flood head\n", "`up 75% #ex: flood head` for the flood",
                 timeout_s=BOUND_S + 10)
    h.write_atomic(os.path.join(ctl, "mode"), "0")
    h.wait_reply(lb, b"up\n", "`up` after the flood", timeout_s=BOUND_S)
    h.expect(lb.alive(), "lbagent still running after the flood")

    h.section("sleeping past the timeout, SIGTERM ignored")
    h.write_atomic(flag, "")
    crit = f"down #slow: timed out after {TIMEOUT_MS}ms\n".encode()
    h.wait_reply(lb, crit, "`down #slow: timed out after 400ms`", timeout_s=BOUND_S)
    count = 0

    def steady():
        nonlocal count
        count += 1
        return lb.ask()

    # Liveness: each raw check gets its reply (ask() gives up after 5 s).
    h.hold_for(steady, 2.0, "raw replies while scripts sleep past their timeout",
               ok=lambda r: r == crit)
    print(f"   {count} raw replies while sleeping, all {crit!r}", flush=True)
    h.expect(count >= 10, f"only {count} replies in 2 s of asking")

    h.section("the sleeper stops sleeping: nothing left behind")
    os.unlink(flag)
    h.wait_reply(lb, b"up\n", "`up` once the script no longer sleeps", timeout_s=BOUND_S)
    left = h.wait_until(lambda: h.pgrep_f(MARK), 10,
                        f"no process whose command line has {MARK}", ok=lambda p: not p)
    print(f"   processes with {MARK}: {left}", flush=True)
    zombies = h.wait_until(lambda: [c for c in h.proc_children(lb.pid) if c[1] == "Z"], 10,
                           "no zombie children of lbagent", ok=lambda z: not z)
    print(f"   zombie children of lbagent: {zombies}", flush=True)
    # A run in flight holds a few descriptors (pipes); a leak grows per run.
    fds = h.wait_until(lb.fd_count, 10, f"lbagent's descriptors back near {fds_start}",
                       ok=lambda n: n <= fds_start + 4)
    print(f"   descriptors: {fds_start} at start, {fds} now", flush=True)
    lb.stop()

    h.section("command lines split like a shell, without a shell")
    lb2 = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe q1": probe("""/bin/sh -c 'echo "A  B"; exit 2'"""),
        "probe q2": probe(os.path.join(d, "args.sh") +
                          """ "a b" 'c  d' e\\ f "g'h" '$HOME'""", on_warn="60%"),
        "probe q3": probe("""sh -c "echo bare name; exit 1" """.strip(), on_warn="70%"),
    })
    want = b"down #q1: A  B; q2: a b,c  d,e f,g'h,$HOME,; q3: bare name\n"
    h.wait_reply(lb2, want, f"{want!r}", timeout_s=BOUND_S)
    lb2.stop()

    h.section("user = nobody")
    # nobody must reach the script: open the temp dirs on the way to it.
    for p in (d,):
        os.chmod(p, 0o755)
    lb3 = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "probe who": probe(os.path.join(d, "whoami.sh"), user="nobody", on_warn="80%"),
    })
    h.wait_reply(lb3, b"up 80% #who: running as nobody\n", "`up 80% #who: running as nobody`",
                 timeout_s=BOUND_S)


h.run(main)
