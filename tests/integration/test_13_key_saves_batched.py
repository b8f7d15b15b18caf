"""New load-balancer keys are saved in batches, not one state file each.

Every check from a new (address, text) is key bookkeeping that must reach
the state file, but a client opening hundreds of connections a second with
new texts must not make lbagent rewrite and fsync the whole state for each:
at most one save a second. Measured in bytes lbagent wrote (/proc/PID/io
wchar): they stay within one state file per second of the run plus a
margin, where one save per key writes the growing file hundreds of times.
The keys do reach the file."""

import json
import os
import sys
import time

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

SOURCES = [f"127.0.13.{n}" for n in range(1, 5)]
KEYS = 480          # 120 per address: all of them remembered


def wchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/PID/io")




def main():
    for a in SOURCES:
        h.require_source(a)
    lb = h.Lbagent()
    state = os.path.join(lb.state_dir, "state.json")
    h.wait_until(lambda: os.path.exists(state), 5, "the first state file")
    before = wchar(lb.pid)
    started = time.monotonic()
    for i in range(KEYS // len(SOURCES)):
        for a in SOURCES:
            h.expect_equal(h.ask(lb.port, source=a, send=f"key{i}\n".encode()), b"up\n",
                           "a check with a new text")
    took = time.monotonic() - started

    def saved_keys():
        with open(state) as f:
            return len(json.load(f)["load_balancers"])

    h.wait_until(saved_keys, 5, "every key in the state file", ok=lambda n: n >= KEYS)
    written = wchar(lb.pid) - before
    size = os.path.getsize(state)
    bound = (int(took) + 3) * size + 64 * 1024
    print(f"   {KEYS} keys in {took:.1f} s; wrote {written} bytes; state file "
          f"{size} bytes; bound {bound}", flush=True)
    h.expect(written <= bound,
             f"lbagent wrote {written} bytes for {KEYS} new keys in {took:.1f} s: more "
             f"than one {size}-byte state file a second (bound {bound})")


if __name__ == "__main__":
    h.run(main)
