"""A flood of agent-send texts cannot make lbagent forget who is owed
`ready`.

A load balancer sees the drain; then other addresses send many distinct
agent-send texts, more than the table of load-balancer keys holds, from
one address and from several. When the drain ends, the load balancer that
saw it still gets its `ready`: keys that saw a claim or are owed a restore
word are never evicted for newcomers, and one address only ever displaces
its own keys. The crowding is logged at most once per 10 s, not once per
newcomer."""

import re
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

LB = "127.0.12.1"
FLOOD = [f"127.0.12.{n}" for n in range(10, 18)]
PER_ADDR = 200      # above the 128 kept per address; 1,600 in all, above 1,024




def main():
    for a in [LB] + FLOOD:
        h.require_source(a)
    lb = h.Lbagent()
    h.expect_equal(lb.ask(send=b"be1\n", source=LB), b"up\n", "the load balancer's check")
    lb.set_marker("drain", "deploy")
    h.wait_until(lambda: lb.ask(send=b"be1\n", source=LB), h.marker_bound_s(),
                 "the load balancer to see the drain", ok=lambda r: r.startswith(b"drain"))

    h.section(f"{len(FLOOD)} addresses send {PER_ADDR} distinct texts each")
    mark = lb.log_mark()
    started = time.monotonic()
    for i in range(PER_ADDR):
        for a in FLOOD:
            h.ask(lb.port, source=a, send=f"flood-{a}-{i}\n".encode())
    took = time.monotonic() - started
    print(f"   {len(FLOOD) * PER_ADDR} texts in {took:.1f} s", flush=True)
    h.expect(lb.alive(), "lbagent died in the flood")

    h.section("the drain ends: the load balancer that saw it gets ready")
    lb.clear_marker("drain")
    h.wait_until(lambda: lb.ask(), h.marker_bound_s(), "the drain's end (another address)",
                 ok=lambda r: r in (b"up\n", b"ready up\n"))
    h.expect_equal(lb.ask(send=b"be1\n", source=LB), b"ready up\n",
                   "the load balancer's first check after the drain")

    log = lb.log_since(mark)
    crowded = len(re.findall(r"load-balancer keys", log))
    bound = 2 + int(took / 10)
    print(f"   {crowded} crowding warnings", flush=True)
    h.expect(crowded <= bound,
             f"{crowded} warnings about load-balancer keys in {took:.1f} s "
             f"(at most {bound}: one per 10 s)")


if __name__ == "__main__":
    h.run(main)
