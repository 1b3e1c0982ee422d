"""Benchmark: the house bots' pace on hard deals while other races hammer the solver with hints.

    .venv/bin/python bench/bot_pace_bench.py [--before DIR] [--seconds 40] [--hammerers 4]
                                             [--rounds 1] [--games scotch,yukon]

Hard deals are picked by running the solver (:func:`hard_deals`): deals on which a hint's
search from the deal (400,000 nodes, 3 s) finds no line. For each game, one server (in a child
process, over real WebSockets, with the server's real solver processes at their real budgets
and niceness) plays five races at once, one against a house bot of each level (1-5), each on a
hard deal, the human sitting still; meanwhile ``--hammerers`` racers, each from an address of
his own, each in a hint race of his own on one of those deals, ask for a hint, play it and ask
again, for ``--seconds``.

Printed for each level and game: the bot's moves, the median and 90th percentile of the time
between two of its moves (the first counted from the start) against its documented pace, the
cards it had home at the end, the shares of its moves played without the solver's answer
(``fallback``, and ``line in hand``: the next move of a line answered earlier; this tree
only), and the hammerers' hints answered with their median wait.
``--ordinary`` plays the catalogue's won deals instead of hard ones. ``--before DIR`` runs the
same bench on the tree in DIR (``git worktree add --detach /work/wt/bots-before main``) in the
same run, alternating, and prints both. The goal (issue 32): every level's median within 1.5x
its pace. It is a benchmark, not a test: timings depend on the machine (say its load beside
the figures).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LEVELS = (1, 2, 3, 4, 5)


# --------------------------------------------------------------------------- the parent
def hard_deals(game: str, count: int) -> list[int]:
    """``count`` deals on which a hint's search from the deal (400,000 nodes, 3 s, on a
    sample of the cards not seen, as the server's hint draws it) finds nothing: the solver is
    run on the deals the catalogue left undecided after 10 s, then on random deals drawn from
    ``random.Random(32)`` (a Yukon deal's first sample is hard about once in thirty)."""
    sys.path[:0] = [str(ROOT / "server"), str(ROOT / "shared")]
    import solrules
    from solrace.settings import HINT_NODES, HINT_SECONDS

    with open(ROOT / "seeds" / "catalogue" / f"{game}.jsonl") as lines:
        undecided = [int(e["seed"]) for e in map(json.loads, lines) if e["verdict"] == "unknown"]
    drawn = random.Random(32)
    candidates = itertools.chain(undecided, iter(lambda: drawn.getrandbits(64), None))
    hard: list[int] = []
    for seed in itertools.islice(candidates, 2000):
        deal = solrules.new_game(game, seed)
        result = solrules.solve(solrules.sample_unseen(deal, random.Random(seed)),
                                solrules.Budget(HINT_NODES, HINT_SECONDS),
                                clock=time.perf_counter)
        if result.verdict == "unknown":
            hard.append(seed)
            if len(hard) == count:
                break
    return hard


def run_child(tree: Path, game: str, deals: list[int], args: argparse.Namespace
              ) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), "--game", game,
         "--deals", ",".join(map(str, deals)), "--seconds", str(args.seconds),
         "--hammerers", str(args.hammerers)],
        capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child on {tree} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(side: str, game: str, result: dict[str, Any]) -> None:
    print(f"  {side:6} {game:7} load {result['load']}  hints answered {result['hints']}, "
          f"median wait {result['hint_wait']:.2f} s")
    for bot in result["bots"]:
        gaps = bot["gaps"]
        if not gaps:
            print(f"    L{bot['level']} {bot['name']:7} pace {bot['pace']:.1f} s: no move")
            continue
        median, p90 = statistics.median(gaps), percentile(gaps, 0.9)
        fell = (f"  fallback {bot['fallbacks'] / max(1, len(gaps)):4.0%}"
                f"  line in hand {(bot.get('ahead') or 0) / max(1, len(gaps)):4.0%}"
                if bot["fallbacks"] is not None else "")
        print(f"    L{bot['level']} {bot['name']:7} pace {bot['pace']:.1f} s  moves "
              f"{len(gaps):3}  median {median:5.2f} s ({median / bot['pace']:4.2f}x)  "
              f"p90 {p90:5.2f} s ({p90 / bot['pace']:4.2f}x)  max {max(gaps):5.2f} s  "
              f"home {bot.get('home', '?'):>2}{fell}")


def ordinary_deals(game: str, count: int) -> list[int]:
    """The catalogue's first ``count`` deals its solver won (for ``--ordinary``)."""
    with open(ROOT / "seeds" / "catalogue" / f"{game}.jsonl") as lines:
        won = [int(e["seed"]) for e in map(json.loads, lines) if e["verdict"] == "won"]
    return won[:count]


def parent(args: argparse.Namespace) -> None:
    games = args.games.split(",")
    if args.ordinary:
        deals = {game: ordinary_deals(game, len(LEVELS)) for game in games}
        print(f"ordinary deals (won by the catalogue's solver): {deals}")
    else:
        deals = {game: hard_deals(game, len(LEVELS)) for game in games}
        print(f"hard deals (no line within a hint's search from the deal): {deals}")
    sides = [("after", ROOT)] + ([("before", Path(args.before))] if args.before else [])
    for round_ in range(args.rounds):
        order = sides if round_ % 2 == 0 else sides[::-1]
        for game in games:
            for side, tree in order:
                report(side, game, run_child(tree, game, deals[game], args))


# ---------------------------------------------------------------------------- the child
async def child(args: argparse.Namespace) -> dict[str, Any]:
    tree = Path(args.child)
    sys.path[:0] = [str(tree / "server"), str(tree / "shared")]
    from solrace.core.levels import LEVELS as LEVEL_TABLE
    from solrace.net.app import App
    from solrace.solver.jobs import Solver
    from solrace.store.sqlite_store import SQLiteStore
    from solrace.tools.race_client import RaceClient, ServerError

    game = args.game
    seeds = [int(s) for s in args.deals.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="botpace"))
    (tmp / "client").mkdir()
    (tmp / "client" / "index.html").write_text("<!doctype html><title>solrace</title>")
    app = App(SQLiteStore(tmp / "race.db"), client=tmp / "client", trust_proxy=True,
              rate_limit=0, http_rate=0, solver=Solver())
    dealt = itertools.cycle(seeds)
    app.hub.deals.draw = lambda game, winnable=False: next(dealt)  # type: ignore[method-assign]
    await app.start()
    server = await app.serve("127.0.0.1", 0).__aenter__()
    port = next(iter(server.sockets)).getsockname()[1]
    url, http = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
    addresses = (f"198.51.100.{n}" for n in itertools.count(1))

    async def visitor() -> RaceClient:
        """A browser at an address of its own: a page load gives it its key."""
        address = next(addresses)
        request = urllib.request.Request(http + "/", headers={"X-Forwarded-For": address})
        with await asyncio.to_thread(urllib.request.urlopen, request) as page:
            cookie = page.headers["set-cookie"].split(";", 1)[0]
        return await RaceClient.connect(url, additional_headers={
            "Cookie": cookie, "X-Forwarded-For": address})

    races: dict[int, str] = {}
    for level in LEVELS:
        human = await visitor()
        paired = await human.request({"type": "play_bot", "game": game, "level": level,
                                      "time_limit": 3600, "rated": False})
        races[level] = str(paired["race"])
        await human.join(races[level], token=paired["token"], boards=False)

    waits: list[float] = []
    end = time.monotonic() + args.seconds

    async def hammer(seed: int) -> None:
        racer = await visitor()
        created = await racer.create(game, players=1, hints=True, seed=str(seed),
                                     time_limit=3600)
        race = created["race"]
        await racer.join(race, name="hammer")
        await racer.start(race, created["host_token"])
        await racer.wait_state(race, 30)
        while time.monotonic() < end:
            asked = time.monotonic()
            try:
                hint = await racer.hint(race)
            except ServerError:
                await asyncio.sleep(0.2)
                continue
            waits.append(time.monotonic() - asked)
            legal = racer.states[race]["legal"]
            if not legal:
                return
            move = str(hint["move"]) if hint.get("move") in legal else legal[0]
            try:
                await racer.move(race, move)
            except ServerError:
                return

    await asyncio.gather(*(hammer(seed) for seed, _ in zip(itertools.cycle(seeds),
                                                          range(args.hammerers), strict=False)))
    load = Path("/proc/loadavg").read_text().split()[0]
    bots = []
    for level, race_id in races.items():
        # A race a bot won within the time has ended: it is in the finished races' cache.
        race = app.hub.races.get(race_id) or app.hub.finished[race_id]
        bot = next(r for r in race.racers.values() if r.bot)
        start = race.starts_at or (bot.times[0] if bot.times else 0)
        times = [start, *bot.times]
        sessions = getattr(app.house_bots, "sessions", None)
        session = sessions.get((race_id, bot.player)) if sessions is not None else None
        bots.append({"level": level, "name": LEVEL_TABLE[level].name,
                     "pace": LEVEL_TABLE[level].pace,
                     "gaps": [(b - a) / 1000 for a, b in itertools.pairwise(times)],
                     "fallbacks": session.fallbacks if session is not None else None,
                     "ahead": getattr(session, "ahead", None),
                     "home": bot.game.progress()[0]})
    app.house_bots.close()
    await app.stop()
    return {"bots": bots, "hints": len(waits), "load": load,
            "hint_wait": statistics.median(waits) if waits else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="the tree to run the same bench on, for the before")
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--hammerers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--games", default="scotch,yukon")
    parser.add_argument("--ordinary", action="store_true",
                        help="deals the catalogue's solver won, instead of hard ones")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--game", help=argparse.SUPPRESS)
    parser.add_argument("--deals", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = asyncio.run(child(args))
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
        os._exit(0)  # (the server's last tasks need not be waited for)
    parent(args)


if __name__ == "__main__":
    main()
