"""Playing together, timed (issue 29): how long a challenge takes to reach its player, an
accept to seat the challenger, and a rematch in one click to seat both — on one embedded
process (SQLite) and across two ``solrace serve`` processes sharing one Redis, where the two
players are on different processes.

    .venv/bin/python bench/together_bench.py            # --pairs 40

It starts its own ``redis-server`` (a free port, append-only file, ``appendfsync everysec``),
two ``solrace serve --redis`` processes A and B and one embedded ``solrace serve`` (all with
``--countdown 0 --rate-limit 0 --http-rate 0 --pool 0``, no solver, ``--trust-proxy``). Each
pair is two guests from two addresses (Ann on A, Bob on B; both on the embedded process), one
after the other, each measured in turn:

- **reach**: from Ann's ``challenge {to: Bob}`` sent to Bob's ``challenge`` received;
- **accept**: from Bob's ``challenge_accept`` sent to Ann's ``paired`` received (Bob's own
  ``paired`` is his reply, earlier);
- **rematch**: both sit, Ann resigns (the race is over), Ann asks for a rematch; from Bob's
  ``rematch`` sent to both ``paired`` received.

Printed: median and 90th percentile of each, in ms, per setup.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server
from pairing_bench import page_cookie, serve
from race_bench import pct

_addresses = itertools.count(1)


async def guest(addr: str, name: str) -> RaceClient:
    n = next(_addresses)
    forwarded = f"10.9.{n // 250}.{n % 250 + 1}"
    key = await page_cookie(addr, forwarded)
    client = await RaceClient.connect(f"ws://{addr}/ws", additional_headers={
        "Cookie": f"sr_player={key}", "X-Forwarded-For": forwarded})
    await client.request({"type": "set_name", "name": name})
    return client


async def event(client: RaceClient, kind: str) -> dict[str, Any]:
    return await client.next_event(kind, timeout=10)


async def one_pair(a: str, b: str, n: int, times: dict[str, list[float]]) -> None:
    ann, bob = await guest(a, f"Ann{n}"), await guest(b, f"Bob{n}")
    try:
        t = time.perf_counter()
        made = await ann.request({"type": "challenge", "to": f"Bob{n}", "game": "scotch",
                                  "time_limit": 300})
        await event(bob, "challenge")
        times["reach"].append(time.perf_counter() - t)
        t = time.perf_counter()
        seat_bob = await bob.request({"type": "challenge_accept",
                                      "challenge": made["challenge"]})
        seat_ann = await event(ann, "paired")
        times["accept"].append(time.perf_counter() - t)
        race = seat_bob["race"]
        await ann.join(race, token=seat_ann["token"])
        await bob.join(race, token=seat_bob["token"])
        await ann.wait_state(race, 10)
        await ann.resign(race)
        await event(bob, "race_over")
        await ann.request({"type": "rematch", "race": race})
        t = time.perf_counter()
        await bob.request({"type": "rematch", "race": race})
        await asyncio.gather(event(ann, "paired"), event(bob, "paired"))
        times["rematch"].append(time.perf_counter() - t)
    finally:
        for client in (ann, bob):
            await client.close()


async def run(label: str, a: str, b: str, pairs: int) -> None:
    times: dict[str, list[float]] = {"reach": [], "accept": [], "rematch": []}
    for n in range(pairs):
        await one_pair(a, b, n, times)
    cells = "  ".join(f"{k} p50 {pct(v, 0.5) * 1000:6.1f} p90 {pct(v, 0.9) * 1000:6.1f}"
                      for k, v in times.items())
    print(f"{label:<26} {cells}   (ms, {pairs} pairs)")


async def main(args: argparse.Namespace) -> None:
    procs: list[subprocess.Popen[Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        redis, port = redis_server(tmp)
        procs.append(redis)
        try:
            url = f"redis://127.0.0.1:{port}/0"
            pa, a = serve("--redis", url)
            pb, b = serve("--redis", url)
            pe, e = serve("--db", f"{tmp}/embedded.db")
            procs += [pa, pb, pe]
            await run("embedded (one process)", e, e, args.pairs)
            await run("Redis, A and B", a, b, args.pairs)
        finally:
            for proc in procs:
                proc.kill()
                with contextlib.suppress(Exception):
                    proc.wait(5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=40)
    asyncio.run(main(parser.parse_args()))
