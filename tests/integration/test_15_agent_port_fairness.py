"""Idle connections from one address cannot starve the agent port.

An address that has sent agent-send text once makes lbagent wait for its
text and then read until it closes, up to a connection's 2 s deadline.
Thousands of idle connections from such an address once held every one of
the max_connections slots, 2 s each, and the load balancers' checks waited
behind them in the kernel's queue for many seconds. Now one address holds
at most an eighth of the slots (more are closed unanswered), and near
capacity connections are held briefly, so another load balancer is still
answered within HAProxy's default agent-inter (2 s) while the flood lasts:
from one address (refused beyond its share; the refusals logged at most
once per 10 s), and from ten addresses that together fill every slot (held
briefly once three quarters of the slots are taken)."""

import re
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

FLOOD = "127.0.15.9"
MANY = [f"127.0.15.{n}" for n in range(20, 30)]
LB = "127.0.15.1"
IDLE = 3000
HOLD_S = 6.0
AGENT_INTER_S = 2.0


def flood(port, done, sources):
    """Opens IDLE connections that send nothing and holds them HOLD_S."""
    socks = []
    try:
        for i in range(IDLE):
            s = socket.socket()
            s.setblocking(False)
            s.bind((sources[i % len(sources)], 0))
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            socks.append(s)
        done.wait(HOLD_S)
    finally:
        for s in socks:
            s.close()


def timed_ask(port):
    started = time.monotonic()
    reply = h.ask(port, send=b"be1\n", source=LB, timeout_s=30)
    return reply, time.monotonic() - started


def checks_during_flood(lb, sources):
    """The load balancer's checks while IDLE connections from sources are
    held: (replies, the slowest in seconds)."""
    for a in sources:
        h.expect_equal(lb.ask(send=b"hi\n", source=a), b"up\n",
                       f"a check that teaches lbagent that {a} sends text")
    done = threading.Event()
    t = threading.Thread(target=flood, args=(lb.port, done, sources), daemon=True)
    t.start()
    time.sleep(0.5)
    worst, replies = 0.0, []
    until = time.monotonic() + HOLD_S - 1.0
    while time.monotonic() < until:
        reply, took = timed_ask(lb.port)
        replies.append(reply)
        worst = max(worst, took)
        time.sleep(0.2)
    done.set()
    t.join()
    print(f"   {len(replies)} checks; the slowest answered in {worst * 1000:.0f} ms",
          flush=True)
    h.expect(all(r == b"up\n" for r in replies), f"replies during the flood: {set(replies)}")
    h.expect(worst < AGENT_INTER_S,
             f"a load balancer's check waited {worst:.1f} s behind idle connections "
             f"from {len(sources)} address(es) (agent-inter is {AGENT_INTER_S} s)")
    h.expect(lb.alive(), "lbagent died in the flood")


def main():
    for a in [FLOOD, LB] + MANY:
        h.require_source(a)
    h.raise_nofile(IDLE + 256)
    lb = h.Lbagent()
    h.expect_equal(timed_ask(lb.port)[0], b"up\n", "the load balancer's check")
    mark = lb.log_mark()

    h.section(f"{IDLE} idle connections from {FLOOD} for {HOLD_S} s")
    checks_during_flood(lb, [FLOOD])
    log = lb.log_since(mark)
    refusals = re.findall(r"agent port: \S+ holds \d+ connections", log)
    h.expect(1 <= len(refusals) <= 2,
             f"expected one or two lines about refused connections, saw {len(refusals)}")

    h.section(f"{IDLE} idle connections from {len(MANY)} addresses for {HOLD_S} s")
    checks_during_flood(lb, MANY)


if __name__ == "__main__":
    h.run(main)
