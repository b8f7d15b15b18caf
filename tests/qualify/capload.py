"""The capacity scenarios' open-loop client (tests/qualify/capacity.py).
Run with /usr/bin/python3:

    capload.py --ports 8001,8002 --plan '[[10, 210], [20, 84]]' --out FILE

Requests start on schedule whatever the answers (open loop): for each
phase [seconds, rate] of the plan, arrivals at `rate` a second, Poisson
(exponential gaps, seeded) or evenly spaced (--spacing fixed), each on a
new connection (`Connection: close`, so HAProxy balances each on its
own), taking the load balancers' ports in turn. Each request is recorded
in FILE (JSON lines, written as they end):
{"start": CLOCK_MONOTONIC s, "ms": duration, "status": N or null,
 "error": text or null, "node": X-Node or null, "lb": port index}.
The clock is the system's monotonic clock, the harness's own.
A line {"phase": i, "at": t} marks each phase's start; {"end": t} the
end of sending. It waits for the requests in flight (at most --timeout)
and exits."""

import argparse
import asyncio
import json
import random
import sys
import time

LIMIT_OPEN = 20000      # requests in flight at once, at most (then: error "client full")


async def one(port, lb, out, timeout_s, counts):
    start = time.monotonic()
    rec = {"start": round(start, 6), "ms": None, "status": None, "error": None,
           "node": None, "lb": lb}
    writer = None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port), timeout_s)
        writer.write(b"GET /work HTTP/1.1\r\nHost: capacity\r\nConnection: close\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                      timeout_s - (time.monotonic() - start))
        lines = head.decode("latin-1").split("\r\n")
        rec["status"] = int(lines[0].split(" ")[1])
        for ln in lines[1:]:
            if ln.lower().startswith("x-node:"):
                rec["node"] = ln.split(":", 1)[1].strip()
        await asyncio.wait_for(reader.read(), max(0.1, timeout_s - (time.monotonic() - start)))
    except asyncio.TimeoutError:
        rec["error"] = "timeout"
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError) as e:
        rec["error"] = f"{type(e).__name__}: {e}"[:120]
    finally:
        if writer is not None:
            writer.close()
    rec["ms"] = round((time.monotonic() - start) * 1000.0, 2)
    out.write(json.dumps(rec) + "\n")
    counts[0] -= 1


async def run(args):
    ports = [int(p) for p in args.ports.split(",")]
    plan = json.loads(args.plan)
    rng = random.Random(args.seed)
    out = open(args.out, "w", buffering=1 << 16)
    counts = [0]
    tasks = set()
    t = time.monotonic()
    k = 0
    for i, (seconds, rate) in enumerate(plan):
        out.write(json.dumps({"phase": i, "at": round(t, 6), "rate": rate}) + "\n")
        end = t + seconds
        while True:
            gap = (rng.expovariate(rate) if args.spacing == "poisson" else 1.0 / rate) \
                if rate > 0 else seconds
            t += gap
            if t >= end:
                t = end
                break
            delay = t - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if counts[0] >= LIMIT_OPEN:
                out.write(json.dumps({"start": round(time.monotonic(), 6), "ms": 0,
                                      "status": None, "error": "client full",
                                      "node": None, "lb": k % len(ports)}) + "\n")
                continue
            counts[0] += 1
            task = asyncio.ensure_future(one(ports[k % len(ports)], k % len(ports), out,
                                             args.timeout, counts))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            k += 1
        delay = end - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
    out.write(json.dumps({"end": round(time.monotonic(), 6)}) + "\n")
    if tasks:
        await asyncio.wait(list(tasks), timeout=args.timeout + 2)
    out.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ports", required=True, help="the load balancers' frontend ports")
    ap.add_argument("--plan", required=True, help="JSON [[seconds, rate], ...]")
    ap.add_argument("--out", required=True)
    ap.add_argument("--spacing", choices=("poisson", "fixed"), default="poisson")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--timeout", type=float, default=10.0, help="a request's, in s")
    asyncio.run(run(ap.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
