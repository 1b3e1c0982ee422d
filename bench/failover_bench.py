"""Failover benchmark: how long a race stands still when the process that owns it is killed.

    .venv/bin/python bench/failover_bench.py [--kills 10] [--against tree:/path/to/other/tree]

Starts its own ``redis-server`` (a free port, nothing on disk) and three ``solrace serve
--redis`` processes A, B, C of this tree. Each round creates a Yukon race on A (A owns it) and
two racers, one connected to B (its commands are forwarded to A) and one to A; both play in a
closed loop (a move, or an undo when stuck; a move answered ``unavailable`` is sent again with
the same ``seq`` after 50 ms, as the browser does). After a second of play A gets ``kill -9``;
the racer on A reconnects to B at once (as a browser behind nginx would) and resumes with his
token. Measured per kill, from the kill:

- **forwarded**: until the racer on B has his next move acknowledged;
- **reconnected**: until the racer who was on A has his next move acknowledged through B;

and after each round, that no acknowledged move was lost: the race's log, read from another
process, holds every move each racer had acknowledged (``seq`` never goes back). A is then
started again (a new process) for the next round. ``--against tree:PATH`` runs the same rounds
on another checkout first (its own Redis), for a before/after in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient, ServerError

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import free_port, redis_server
from race_bench import start


def serve(redis_url: str, tree: Path | None) -> tuple[subprocess.Popen[str], str]:
    env = None
    if tree is not None:
        env = {**os.environ, "PYTHONPATH": f"{tree}/shared:{tree}/server"}
    return start([sys.executable, "-m", "solrace", "serve", "--port", str(free_port()),
                  "--redis", redis_url, "--rate-limit", "0", "--http-rate", "0",
                  "--countdown", "0", "--par-seconds", "0", "--hint-seconds", "0"], env)


class Racer:
    """One racer in a closed loop; ``acks`` holds (monotonic time, seq, time the action was
    first sent) of every reply."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.client: RaceClient | None = None
        self.acks: list[tuple[float, int, float]] = []
        self.token = ""
        self.rng = random.Random(name)
        self.stop = False

    async def play(self, race: str) -> None:
        while not self.stop:
            client = self.client
            if client is None:
                await asyncio.sleep(0.01)
                continue
            state = client.states.get(race)
            if state is None:
                await asyncio.sleep(0.01)
                continue
            legal = [m for m in state.get("legal", []) if ">f" not in m] or state.get("legal")
            seq = state["seq"] + 1
            msg: dict[str, Any] = ({"type": "move", "move": self.rng.choice(legal)} if legal
                                   else {"type": "undo"})
            sent = time.monotonic()
            while not self.stop and self.client is client:
                try:
                    reply = await client.request({**msg, "race": race, "seq": seq}, timeout=10)
                    self.acks.append((time.monotonic(), reply["seq"], sent))
                    break
                except ServerError as exc:
                    if exc.code not in ("unavailable", "internal"):
                        raise
                    await asyncio.sleep(0.05)
                except Exception:  # the connection died: wait for the new one
                    await asyncio.sleep(0.01)
                    break
            await asyncio.sleep(0.02)  # a quick human: 50 moves a second at most

    def first_ack_after(self, t: float) -> float:
        """Seconds from ``t`` to the reply to the first action sent after ``t`` (a reply
        already on its way at the kill does not count: its move was done before)."""
        return next((at - t for at, _, sent in self.acks if sent > t), float("nan"))


async def one_round(procs: dict[str, tuple[subprocess.Popen[str], str]], redis_url: str,
                    tree: Path | None) -> tuple[float, float, bool]:
    a_url = f"ws://{procs['A'][1]}/ws"
    b_url = f"ws://{procs['B'][1]}/ws"
    host = await RaceClient.connect(a_url)
    race = (await host.create("yukon", players=2, undo=True, time_limit=600))["race"]
    far, near = Racer("far"), Racer("near")
    far.client = await RaceClient.connect(b_url, keep_events=False)
    near.client = await RaceClient.connect(a_url, keep_events=False)
    far.token = (await far.client.join(race, name="far"))["token"]
    near.token = (await near.client.join(race, name="near"))["token"]
    await far.client.ready(race)
    await near.client.ready(race)
    await far.client.wait_state(race, 10)
    await near.client.wait_state(race, 10)
    tasks = [asyncio.create_task(r.play(race)) for r in (far, near)]
    await asyncio.sleep(1.0 + random.random() * 0.3)  # a kill at any point of a renewal
    killed_at = time.monotonic()
    procs["A"][0].kill()
    procs["A"][0].wait()
    old = near.client
    near.client = None
    with contextlib.suppress(Exception):
        await old.close()
    client = await RaceClient.connect(b_url, keep_events=False)
    for _ in range(100):  # "not now" answers while the race has no owner: ask again
        try:
            await client.join(race, token=near.token)
            break
        except ServerError as exc:
            if exc.code != "unavailable":
                raise
            await asyncio.sleep(0.05)
    await client.wait_state(race, 10)
    near.client = client
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not (
            any(sent > killed_at for _, _, sent in far.acks)
            and any(sent > killed_at for _, _, sent in near.acks)):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    for r in (far, near):
        r.stop = True
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    # Nothing acknowledged is lost: a fresh look from C, through a resumed racer, has every
    # acknowledged seq of each racer.
    c_url = f"ws://{procs['C'][1]}/ws"
    intact = True
    for r in (far, near):
        check = await RaceClient.connect(c_url)
        await check.join(race, token=r.token)
        state = await check.wait_state(race, 10)
        if r.acks and state["seq"] < max(s for _, s, _ in r.acks):
            intact = False
        await check.close()
    for c in (host, far.client, near.client):
        with contextlib.suppress(Exception):
            await c.close()  # type: ignore[union-attr]
    procs["A"] = serve(redis_url, tree)
    return far.first_ack_after(killed_at), near.first_ack_after(killed_at), intact


async def run_tree(tree: Path | None, kills: int) -> dict[str, list[float]]:
    label = "this tree" if tree is None else str(tree)
    with tempfile.TemporaryDirectory(prefix="failover_bench_") as tmp:
        rproc, rport = redis_server(tmp)
        url = f"redis://127.0.0.1:{rport}/0"
        procs = {name: serve(url, tree) for name in "ABC"}
        got: dict[str, list[float]] = {"forwarded": [], "reconnected": [], "lost": []}
        try:
            for n in range(kills):
                fwd, rec, intact = await one_round(procs, url, tree)
                got["forwarded"].append(fwd)
                got["reconnected"].append(rec)
                got["lost"].append(0.0 if intact else 1.0)
                print(f"{label}: kill {n + 1}/{kills}: forwarded {fwd:.2f} s, reconnected "
                      f"{rec:.2f} s, acknowledged moves intact: {intact}", flush=True)
        finally:
            for proc, _ in procs.values():
                proc.kill()
            rproc.kill()
    return got


def summary(label: str, got: dict[str, list[float]]) -> None:
    print(f"\n{label}:")
    for what in ("forwarded", "reconnected"):
        xs = sorted(x for x in got[what] if x == x)
        if not xs:
            print(f"   {what}: never")
            continue
        p99 = xs[min(len(xs) - 1, round(0.99 * (len(xs) - 1)))]
        print(f"   {what:11}: p50 {statistics.median(xs):.2f} s, p99 {p99:.2f} s, "
              f"max {xs[-1]:.2f} s over {len(xs)} kills")
    print(f"   rounds that lost an acknowledged move: {int(sum(got['lost']))}")


async def main(args: argparse.Namespace) -> None:
    results = []
    if args.against:
        tree = Path(args.against.removeprefix("tree:")).resolve()
        results.append((f"other tree {tree}", await run_tree(tree, args.kills)))
    results.append(("this tree", await run_tree(None, args.kills)))
    for label, got in results:
        summary(label, got)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--against", default="", help="tree:PATH, another checkout, run first")
    asyncio.run(main(p.parse_args()))
