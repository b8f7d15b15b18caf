"""Out of file descriptors: lbagent pauses accepting instead of spinning,
keeps the connections it has, and serves everyone once descriptors free up.

The daemon's RLIMIT_NOFILE is cut to 32 after it starts (max_connections
stays 1024), then 100 clients connect, send an agent-send line and hold
their connections open. The daemon answers the first ones and, since they
sent text, reads until they close or their 2 s deadline passes; the rest
wait in the kernel's queue. While it is out of descriptors, its CPU
time must stay small: a loop retrying accept() on EMFILE would burn a whole
core. Afterwards every client has its line and a normal check is answered."""

import resource
import socket
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

HOLDER = "127.0.8.2"     # the clients' own address, new to lbagent
NOFILE = 32
CLIENTS = 100
WATCH_S = 1.5
# A spinning accept loop uses about WATCH_S of CPU here; a paused one wakes
# every 100 ms for one accept() and uses a few milliseconds (more under ASan).
MAX_CPU_S = 0.3




def main():
    h.require_source(HOLDER)
    h.raise_nofile(CLIENTS + 64)
    lb = h.Lbagent({"max_connections": 1024})
    resource.prlimit(lb.pid, resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    mark = lb.log_mark()

    h.section(f"{CLIENTS} clients hold their connections against a limit of {NOFILE}")
    # The address sends agent-send text from now on, so lbagent waits for
    # each client's line and then holds the connection until it closes. It
    # is new to lbagent: from an address it knows as one that never sends
    # text, it answers and closes at once, and a line that comes a moment
    # behind the connection (a busy machine) would meet a reset.
    h.expect_equal(lb.ask(send=b"hold\n", source=HOLDER), b"up\n",
                   "a check that teaches the text")
    socks = []
    for _ in range(CLIENTS):
        s = socket.socket()
        s.settimeout(10)
        s.bind((HOLDER, 0))
        s.connect(("127.0.0.1", lb.port))
        s.sendall(b"hold\n")
        socks.append(s)
    h.wait_until(lambda: lb.log_since(mark), 10, "the log to say accepting is paused",
                 ok=lambda log: "Too many open files" in log and "pausing" in log)
    before = h.cpu_seconds(lb.pid)
    time.sleep(WATCH_S)
    used = h.cpu_seconds(lb.pid) - before
    h.expect(used < MAX_CPU_S,
             f"lbagent used {used:.2f} s of CPU in {WATCH_S} s while out of descriptors "
             f"(bound {MAX_CPU_S} s): it spins instead of pausing")
    h.expect(lb.alive(), "lbagent died when it ran out of descriptors")

    h.section("every client is answered once descriptors free up")
    replies = {}
    deadline = time.monotonic() + 60
    for s in socks:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        data = h.read_to_eof(s)
        s.close()
        replies[data] = replies.get(data, 0) + 1
    h.expect(replies == {b"up\n": CLIENTS},
             f"expected each of {CLIENTS} clients to get 'up\\n', saw {replies!r}")
    h.expect_equal(lb.ask(), b"up\n", "a normal check afterwards")
    lb.stop(expect_rc=0)


h.run(main)
