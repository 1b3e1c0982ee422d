"""Fair-play benchmark: how often the fair-play rules (server/solrace/core/fairplay.py) flag
human-paced play, and how often they catch the solver's line played by a machine.

    .venv/bin/python bench/fairplay_bench.py                 # --deals 40 per game
    .venv/bin/python bench/fairplay_bench.py --db DIR_OR_FILE ...   # + races in these files

Three sets of results, each worked out exactly as the referee does for a finished race
(``solrace.core.fairplay.signals`` with the solver's line from the deal, found with the par
budget):

1. **The house bots at their documented pace** (false positives): every level plays fresh
   random deals of each game (seeds from ``--seed``) the way the server's house bots play —
   levels 1 and 2 with ``solrace.core.levels.choose``, levels 3-5 with the solver worker's own
   ``hint_for`` (a line found on a sample of what the bot has seen, followed while it holds) —
   and its moves are stamped at its pace (1.5, 1, 2.5, 1.2, 0.6 s), plus the time each hint took
   here, plus 0-80 ms of network. A bot that stalls (no legal move, or ``BOT_GIVE_UP`` moves
   without progress) stops there, as the server's would resign. The house bots are the
   stand-in for a person's pace the issue names; the solver levels are engines by
   construction, so they also show what the rules do with the solver's own line at a human
   pace (they must not flag it).
2. **Browser play** (false positives): with ``--db``, every finished racer of every race in
   these SQLite files (e.g. the browser tests' server's database: run the browser tests with
   ``--basetemp DIR``, then pass ``--db DIR``) with at least ``MIN_MANUAL`` manual moves: the
   pages' own moves, clicked by Playwright as fast as the page lets it.
3. **The solver's line at machine speed** (detection): the solver's winning line of each won
   deal of (1), replayed with a fixed gap between moves (0 to 600 ms) plus 0-80 ms of network,
   as a script would; and the scout of the issue (a 68-move line in 2.6 s: 38 ms a move).

Reports, per set and speed: results, flagged, the rate, and which rules fired.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import solrules
from solrace.core import fairplay
from solrace.core.levels import LEVELS, choose, headway
from solrace.protocol.messages import safe_moves
from solrace.settings import BOT_GIVE_UP, HINT_NODES, MIN_MANUAL, PAR_NODES
from solrace.solver import worker

GAMES = ("scotch", "yukon", "quadruple-canfield")
NET_MS = 80


def root_line(game: str, seed: int) -> list[str] | None:
    result = solrules.solve(solrules.new_game(game, seed), solrules.Budget(nodes=PAR_NODES,
                                                                             seconds=10.0))
    return list(result.line) if result.verdict == "won" else None


def bot_state(game: solrules.Game) -> dict[str, Any]:
    """What a house bot reads of its race (the ``state`` it asks for)."""
    legal = [m.text() for m in game.legal_moves()]
    foundation, total = game.progress()
    return {"legal": legal, "safe": safe_moves(game, legal), "board": game.board(),
            "progress": {"foundation": foundation, "total": total}}


def bot_race(game_name: str, seed: int, level: int, rng: random.Random,
             max_moves: int) -> tuple[list[str], list[int], bool]:
    """A house bot's race on a deal: its actions, their times (ms from the start), won."""
    lv = LEVELS[level]
    game = solrules.new_game(game_name, seed)
    actions: list[str] = []
    stamps: list[int] = []
    at = 0.0
    best: tuple[int, int] = (-1, -1)
    stale = 0
    budget = solrules.Budget(nodes=HINT_NODES, seconds=3.0)
    worker.plans.clear()
    while len(actions) < max_moves and not game.is_won():
        state = bot_state(game)
        if not state["legal"]:
            break
        now = headway(state)
        if now > best:
            best, stale = now, 0
        if stale >= BOT_GIVE_UP:
            break
        started = time.perf_counter()
        if lv.policy == "solver":
            answer = worker.hint_for(game, list(actions), "bench", budget, rng)
            move = answer.get("move")
            if move not in state["legal"]:
                safe = [m for m in state["safe"] if m in state["legal"]]
                move = safe[0] if safe else choose(state, "greedy", rng)
        else:
            move = choose(state, lv.policy, rng)
        thought = (time.perf_counter() - started) * 1000
        # The server's bot sleeps until its pace is up, then asks the solver: the hint's time
        # comes on top of the pace.
        at += lv.pace * 1000 + thought + rng.uniform(0, NET_MS)
        assert move is not None
        game.push_text(move)
        actions.append(move)
        stamps.append(int(at))
        stale += 1
    return actions, stamps, game.is_won()


def line_at(line: list[str], gap: int, rng: random.Random) -> list[int]:
    at, out = 0, []
    for _ in line:
        at += gap + int(rng.uniform(0, NET_MS))
        out.append(at)
    return out


def rate(rows: list[fairplay.Signals]) -> str:
    flagged = sum(1 for s in rows if s.flagged)
    rules = Counter(r for s in rows for r in s.rules)
    pct = 100 * flagged / len(rows) if rows else 0.0
    return (f"{len(rows):5d} results, {flagged:4d} flagged = {pct:5.1f} %"
            + (f"  ({', '.join(f'{k} {v}' for k, v in sorted(rules.items()))})" if rules else ""))


def from_db(path: Path) -> list[fairplay.Signals]:
    """The signals of every finished racer with enough manual moves in a server's file."""
    from solrace.store.sqlite_schema import COLUMNS, build_race

    out = []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for row in db.execute(f"SELECT {COLUMNS} FROM races WHERE finished_at IS NOT NULL"):
            try:
                race, _ = build_race(db, row)
            except Exception:
                continue
            if race.started_at is None:
                continue
            for racer in race.racers.values():
                if racer.bot:
                    continue
                sig = fairplay.signals(race.game, race.seed, racer.actions, racer.times,
                                       race.started_at, racer.finished_at is not None,
                                       racer.hints)
                if sig.manual >= MIN_MANUAL:
                    out.append(sig)
    finally:
        db.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=40, help="fresh deals per game")
    ap.add_argument("--seed", type=int, default=20261204, help="where the deals' seeds come from")
    ap.add_argument("--max-moves", type=int, default=400, help="a bot's moves at most per race")
    ap.add_argument("--db", action="append", default=[], help="SQLite files or folders of them")
    ap.add_argument("--json", default="", help="write the figures here too")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    figures: dict[str, Any] = {"seed": args.seed, "deals": args.deals}
    print(f"fair-play benchmark: {args.deals} fresh deals per game, seeds from {args.seed}\n")
    print("1. house bots at their documented pace (false positives)")
    lines: dict[tuple[str, int], list[str]] = {}
    for game in GAMES:
        seeds = [rng.getrandbits(64) for _ in range(args.deals)]
        for seed in seeds:
            line = root_line(game, seed)
            if line:
                lines[game, seed] = line
        for level in LEVELS:
            rows = []
            wins = 0
            for seed in seeds:
                actions, stamps, won = bot_race(game, seed, level, rng, args.max_moves)
                wins += won
                rows.append(fairplay.signals(game, seed, actions, stamps, 0, won, 0,
                                             lines.get((game, seed))))
            print(f"   {game:19s} level {level} ({LEVELS[level].pace:.1f} s): {rate(rows)}; "
                  f"{wins} won")
            figures.setdefault("bots", {}).setdefault(game, {})[level] = {
                "results": len(rows), "flagged": sum(s.flagged for s in rows), "won": wins}
    if args.db:
        print("\n2. browser play (false positives)")
        rows = []
        for given in args.db:
            p = Path(given)
            for f in ([p] if p.is_file() else sorted(p.rglob("*.db"))):
                rows += from_db(f)
        print(f"   every finished racer with {MIN_MANUAL}+ manual moves: {rate(rows)}")
        figures["browser"] = {"results": len(rows), "flagged": sum(s.flagged for s in rows),
                              "median_gap_ms": sorted(s.median_gap_ms or 0 for s in rows)
                              [len(rows) // 2] if rows else None}
    print("\n3. the solver's line replayed by a script (detection)")
    for gap in (0, 20, 38, 60, 100, 150, 200, 300, 400, 600):
        rows = []
        for (game, seed), line in lines.items():
            rows.append(fairplay.signals(game, seed, line, line_at(line, gap, rng), 0, True,
                                         0, line))
        print(f"   {gap:3d} ms a move (+0-{NET_MS} ms): {rate(rows)}")
        figures.setdefault("machine", {})[gap] = {"results": len(rows),
                                                  "flagged": sum(s.flagged for s in rows)}
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
