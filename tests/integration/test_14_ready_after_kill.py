"""`ready` is not lost when lbagent is killed just after a load balancer's
first `drain` reply.

Key bookkeeping reaches the state file within a second, so a kill -9 a few
milliseconds after the first drain reply leaves a file with the drain's
claim but without the key's "saw". Restarted without the marker, lbagent
must still send `ready` to that load balancer: a key the file shows, and a
key the file lacks that checks again soon after the start, both count as
having seen the claim. Erring this way costs at most one `ready` to a load
balancer that asked just now; the other way strands the server in DRAIN."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

SRC = "127.0.14.1"
ROUNDS = 5


def round_(n, known):
    what = "a key the file has" if known else "a key new at the drain"
    h.section(f"round {n}: {what}")
    lb = h.Lbagent()
    if known:
        h.expect_equal(lb.ask(send=b"lb1\n", source=SRC), b"up\n", "a check while up")
        h.wait_until(lambda: open(lb.state_dir + "/state.json").read(), 5,
                     "the key in the state file", ok=lambda t: SRC in t)
    lb.set_marker("drain", "deploy")
    h.wait_until(lambda: lb.ask(), h.marker_bound_s(), "the drain in effect",
                 ok=lambda r: r.startswith(b"drain"))
    reply = lb.ask(send=b"lb1\n", source=SRC)
    lb.kill()
    h.expect_equal(reply, b"drain up #deploy\n", "the load balancer's drain reply")
    lb.clear_marker("drain")
    lb.start()
    h.expect_equal(lb.ask(send=b"lb1\n", source=SRC), b"ready up\n",
                   "the load balancer's first check after the restart")
    lb.stop()


def main():
    h.require_source(SRC)
    for n in range(ROUNDS):
        round_(n + 1, known=True)
    round_(ROUNDS + 1, known=False)


if __name__ == "__main__":
    h.run(main)
