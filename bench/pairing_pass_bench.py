"""The pairing pass (solrace.core.pairing.pairs), run every second by every process over every
queue: what one pass costs, in Python (the embedded server's queues) and as the Redis script
(the queues shared by several processes: a script blocks Redis while it runs).

    .venv/bin/python bench/pairing_pass_bench.py          # its own redis-server on a free port

Queues of n waiting seekers (a rated queue), three shapes:

- ``pairs``: everyone fits someone (n ratings within 100, one network each): n / 2 pairs.
  (Seekers of one rating are all looked at by each of them, for the tie-break: a queue does
  not hold many of one rating for long, since they fit each other.)
- ``apart``: nobody fits yet (ratings 200 apart, waited 0.5 s): the pass finds nothing, the
  common case of a quiet queue.
- ``one network``: every seeker from one network, waited 20 s (anyone fits... but one network
  never meets in a rated queue): each seeker's walk crosses the whole line, n² / 2 steps. One
  address holds at most 100 connections, hence 100 seeks; larger n shows the bound's reason.

Each figure is the best of 5 passes over a fresh queue (Redis: the script alone, the queue
written before; the time includes one round trip on loopback).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from solrace.cluster.queues import RedisQueues
from solrace.core.pairing import MemoryQueues, Seek
from solrace.runtime.redis_connect import connect

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server

NOW = 10_000_000


def queue(shape: str, n: int) -> list[Seek]:
    out = []
    for i in range(n):
        if shape == "pairs":
            rating, since, network = 1500 + 100 * i / n, NOW - 500, f"n{i}"
        elif shape == "apart":
            rating, since, network = 200 * i, NOW - 500, f"n{i}"
        else:
            rating, since, network = 1000 + i, NOW - 20_000, "one"
        out.append(Seek(f"s{i:06d}", "scotch:300:r", f"p{i}", f"P{i}", float(rating), since,
                        "p1", i, network=network))
    return out


def memory_pass(shape: str, n: int) -> tuple[float, int]:
    best, found = float("inf"), 0
    for _ in range(5):
        q = MemoryQueues(cap=10**6)
        for s in queue(shape, n):
            q.waiting.setdefault(s.queue, {})[s.id] = s
            q.seeks[s.player] = s
        t = time.perf_counter()
        found = len(q.pair_waiting(NOW))
        best = min(best, time.perf_counter() - t)
    return best, found


async def redis_pass(url: str, shape: str, n: int) -> tuple[float, int]:
    import json
    from dataclasses import asdict

    from solrace.cluster.queues import QUEUES, SEEKS, waiting_key

    client = connect(url)
    q = RedisQueues(client, "p1")
    best, found = float("inf"), 0
    for _ in range(5):
        await client.flushdb()
        await q.pair_waiting(NOW)  # loads the script (an empty queue)
        seeks = queue(shape, n)
        pipe = client.pipeline(transaction=False)
        for s in seeks:
            pipe.hset(waiting_key(s.queue), s.id, json.dumps(asdict(s)))
            pipe.hset(SEEKS, s.player, f"{s.queue}\t{s.id}")
        pipe.sadd(QUEUES, seeks[0].queue)
        await pipe.execute()
        t = time.perf_counter()
        found = len(await q.pair_waiting(NOW))
        best = min(best, time.perf_counter() - t)
    await client.aclose()
    return best, found


async def main(args: argparse.Namespace) -> None:
    print(f"Python {sys.version.split()[0]}; best of 5 passes, ms (pairs found)")
    with tempfile.TemporaryDirectory(prefix="pass_bench_") as tmp:
        proc, port = redis_server(tmp)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            for shape in ("pairs", "apart", "one network"):
                for n in args.sizes:
                    if shape == "one network" and n > 1000:
                        continue
                    mem, mem_found = memory_pass(shape, n)
                    red, red_found = await redis_pass(url, shape, n)
                    assert mem_found == red_found, (shape, n, mem_found, red_found)
                    print(f"  {shape:12} n={n:5}: memory {mem * 1000:8.2f} ms, Redis script "
                          f"{red * 1000:8.2f} ms ({mem_found} pairs)", flush=True)
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000])
    asyncio.run(main(p.parse_args()))
