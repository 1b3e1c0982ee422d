"""Rating benchmark: what a finished race's rating update costs, against baselines in the same
run.

    .venv/bin/python bench/rating_bench.py             # --rounds 9 --block 200

1. **The arithmetic** (``solrace.core.rating.rate``, pure Python): races of 2, 5 and 8 racers
   with distinct places, and races of 8 with ties (one pair tied; seven tied behind a winner,
   which is what a race looks like when one racer sent a card home and the others resigned
   with nothing; all eight tied). Ratings drawn once from a fixed RNG (means 1000-2000,
   deviations 60-350). Baseline: one move's rules work as the server does it (``push``, the
   new position's ``legal_by_text()``, ``pop``) on Scotch positions reached by random play.
   The ratio says how many moves' rules work one rating update costs. Both are timed in CPU
   time (``time.process_time``), which a busy machine disturbs less than the wall clock.
2. **A whole scoring** of a finished rated race as the server does it when a race ends:
   ``solrace.core.scoring.scoring(race)`` and ``PlayerStore.score`` (read the counted players'
   ratings, work out the new ones, write the results, ratings and the ``scored`` mark once),
   on SQLite (``SQLiteStore(path).players()``, a fresh file) and on Redis (``RedisPlayers``
   on a private ``redis-server``, append-only file with ``appendfsync everysec`` as
   compose.yaml). The races are built with the real ``Race`` (``Options(rated=True)``, 64
   players taking turns, so ratings exist and histories grow), before the timing. Baselines on
   the same store, in the same run: a one-row write (``set_password``: one ``UPDATE`` by key
   in a transaction of the players' thread / one ``HSET``) and a one-row read (``scored`` of a race
   not scored: one ``SELECT`` / one ``HGET``), both awaited as ``score`` is.

Phases alternate (each case, then its baseline, ``--rounds`` times, ``--block`` operations
each); the medians over rounds are reported, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import solrules
from solrace.core.identity import Player
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.rating import Rating, rate
from solrace.core.scoring import scoring
from solrace.runtime.redis_connect import connect
from solrace.store.player_base import PlayerStore
from solrace.store.redis_players import RedisPlayers
from solrace.store.sqlite_store import SQLiteStore

sys.path.insert(0, str(Path(__file__).parent))
from cluster_bench import redis_server
from race_bench import cpu_seconds

PLAYERS = 64


# ------------------------------------------------------------------------ arithmetic
def rating_cases(rng: random.Random) -> dict[str, tuple[list[Rating], list[int]]]:
    def ratings(n: int) -> list[Rating]:
        return [Rating(rng.uniform(1000, 2000), rng.uniform(60, 350), rng.randrange(40))
                for _ in range(n)]

    return {
        "2 racers": (ratings(2), [1, 2]),
        "5 racers": (ratings(5), [1, 2, 3, 4, 5]),
        "8 racers": (ratings(8), [1, 2, 3, 4, 5, 6, 7, 8]),
        "8, one pair tied": (ratings(8), [1, 2, 3, 3, 5, 6, 7, 8]),
        "8, seven tied 2nd": (ratings(8), [1, 2, 2, 2, 2, 2, 2, 2]),
        "8, all tied": (ratings(8), [1] * 8),
    }


def move_work(rng: random.Random, count: int = 500) -> Callable[[int], float]:
    """Seconds per move of the rules work of one move (push, list the new position's moves,
    pop), over ``count`` Scotch positions reached by random play."""
    games: list[tuple[solrules.Game, Any]] = []
    while len(games) < count:
        g = solrules.new_game("scotch", rng.randrange(2**64))
        for _ in range(rng.randrange(0, 80)):
            moves = g.legal_moves()
            if not moves:
                break
            g.push(rng.choice(moves))
        moves = g.legal_moves()
        if moves:
            games.append((g, rng.choice(moves)))

    def run(n: int) -> float:
        t = time.process_time()
        done = 0
        while done < n:
            for g, m in games:
                g.push(m)
                g.legal_by_text()
                g.pop()
            done += len(games)
        return (time.process_time() - t) / done

    return run


def rate_work(ratings: list[Rating], places: list[int]) -> Callable[[int], float]:
    def run(n: int) -> float:
        t = time.process_time()
        for _ in range(n):
            rate(ratings, places)
        return (time.process_time() - t) / n

    return run


def arithmetic(args: argparse.Namespace) -> None:
    rng = random.Random(20261202)
    base = move_work(rng)
    cases = rating_cases(rng)
    per: dict[str, list[float]] = {k: [] for k in cases}
    ratios: dict[str, list[float]] = {k: [] for k in cases}
    moves: list[float] = []
    for _ in range(args.rounds):
        for name, (ratings, places) in cases.items():
            m = base(args.block * 5)
            r = rate_work(ratings, places)(args.block)
            moves.append(m)
            per[name].append(r)
            ratios[name].append(r / m)
    print(f"1. rating arithmetic (solrace.core.rating.rate), CPU time, medians of "
          f"{args.rounds} rounds; baseline: one move's rules work (push, legal_by_text, pop), "
          f"{statistics.median(moves) * 1e6:.1f} µs")
    for name in cases:
        v = per[name]
        print(f"   {name:<18} {statistics.median(v) * 1e6:8.1f} µs per race "
              f"({min(v) * 1e6:.1f}-{max(v) * 1e6:.1f}); "
              f"= {statistics.median(ratios[name]):.1f} moves' rules work")


# --------------------------------------------------------------------------- scoring
SEED = next(s for s in range(1, 500)
            if any(">f" in m.text() for m in solrules.new_game("scotch", s).legal_moves()))


def finished_race(race_id: str, pids: list[str], ties: bool) -> Race:
    """A finished rated race of these players. ``ties`` False: every racer sends the same
    card home at a different moment, then resigns (distinct places); True: only the first
    does, the rest resign with nothing (they share second place)."""
    race = Race(race_id, "scotch", SEED, "salt", Options(players=len(pids), rated=True), 0,
                "host")
    for i, pid in enumerate(pids):
        race.join(f"N{pid}", f"tok{i}", 0, pid=pid)
    race.start("host", 0)
    race.tick(10_000)
    for k, racer in enumerate(race.racers.values()):
        if k == 0 or not ties:
            home = next(m.text() for m in racer.game.legal_moves() if ">f" in m.text())
            race.move(racer.player, home, 1, 11_000 + 100 * k)
    for p in race.racers:
        race.resign(p, 20_000)
    assert race.status == "finished"
    places = sorted(race.places().values())
    assert (places == list(range(1, len(pids) + 1))) != ties or len(pids) == 1, places
    return race


class Races:
    """Finished races to score, built ahead of the timing, with players taking turns."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.made = 0

    def build(self, n: int, size: int, ties: bool) -> list[Race]:
        out = []
        for _ in range(n):
            first = self.made * size
            pids = [f"pl{(first + j) % PLAYERS:03d}" for j in range(size)]
            out.append(finished_race(f"{self.prefix}{self.made}", pids, ties))
            self.made += 1
        return out


async def timed(calls: list[Callable[[], Awaitable[Any]]], pid: int | None
                ) -> tuple[float, float, float]:
    """(seconds per call, this process's CPU per call, the other process's CPU per call)."""
    other0 = cpu_seconds(pid) if pid is not None else 0.0
    cpu0 = time.process_time()
    t = time.perf_counter()
    for call in calls:
        await call()
    wall = time.perf_counter() - t
    cpu = time.process_time() - cpu0
    other = (cpu_seconds(pid) - other0) if pid is not None else 0.0
    n = len(calls)
    return wall / n, cpu / n, other / n


async def whole(label: str, store: PlayerStore, other_pid: int | None,
                args: argparse.Namespace) -> None:
    for i in range(PLAYERS):
        await store.create(Player(f"pl{i:03d}", f"Player{i:03d}", 1_000), f"key{i:03d}")
    races = Races(f"{label[:1]}r")
    cases = {f"{n} racers{', ties' if ties else ''}": (n, ties)
             for n, ties in ((2, False), (5, False), (8, False), (8, True))}
    got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in
                                                        [*cases, "write", "read"]}
    ratios: dict[str, list[float]] = {k: [] for k in cases}
    Call = Callable[[], Awaitable[Any]]

    def score(race: Race) -> Call:
        return lambda: store.score(scoring(race))

    def write(i: int) -> Call:
        return lambda: store.set_password(f"pl{i % PLAYERS:03d}", f"scrypt$bench${i}")

    def read(i: int) -> Call:
        return lambda: store.scored(f"x{i}")

    for _ in range(args.rounds):
        for name, (n, ties) in cases.items():
            batch = races.build(args.block, n, ties)
            got[name].append(await timed([score(r) for r in batch], other_pid))
            got["write"].append(await timed([write(i) for i in range(args.block)], other_pid))
            got["read"].append(await timed([read(i) for i in range(args.block)], other_pid))
            ratios[name].append(got[name][-1][0] / got["write"][-1][0])
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}

    def cpu(wall_cpu_other: list[float]) -> str:
        mine, theirs = wall_cpu_other[1] * 1e6, wall_cpu_other[2] * 1e6
        return f"CPU {mine:.0f} µs" + (f" + redis-server {theirs:.0f} µs" if other_pid else "")

    print(f"   {label}: baseline write round trip {med['write'][0] * 1e6:.0f} µs "
          f"({cpu(med['write'])}), read {med['read'][0] * 1e6:.0f} µs ({cpu(med['read'])})")
    for name in cases:
        ratio = statistics.median(ratios[name])
        print(f"     {name:<16} {med[name][0] * 1e6:7.0f} µs per race ({cpu(med[name])}) "
              f"= {ratio:.1f}x the write round trip")


async def scoring_part(args: argparse.Namespace) -> None:
    print(f"2. a whole scoring per race (scoring(race) + PlayerStore.score), medians of "
          f"{args.rounds} rounds of {args.block} races (CPU: this process's, threads included):")
    with tempfile.TemporaryDirectory(prefix="rating_bench_") as tmp:
        races = SQLiteStore(Path(tmp) / "race.db")
        try:
            await whole("SQLite", races.players(), None, args)
        finally:
            races.close()
        proc, port = redis_server(tmp)
        client = connect(f"redis://127.0.0.1:{port}/0")
        try:
            await whole("Redis", RedisPlayers(client), proc.pid, args)
        finally:
            await client.aclose()
            proc.terminate()
            proc.wait(10)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=9, help="alternations of each case and baseline")
    p.add_argument("--block", type=int, default=200, help="operations per phase")
    args = p.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average before: {os.getloadavg()[0]:.2f}")
    arithmetic(args)
    asyncio.run(scoring_part(args))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
