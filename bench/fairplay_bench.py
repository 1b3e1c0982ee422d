"""Fair-play benchmark: how often the fair-play rules (server/solrace/core/fairplay.py) flag
human-paced play, and how often they catch the solver's line played by a machine.

    .venv/bin/python bench/fairplay_bench.py                 # --deals 40 per game
    .venv/bin/python bench/fairplay_bench.py --db DIR_OR_FILE ...   # + races in these files

Three sets of results, each worked out exactly as the referee does for a finished race
(``solrace.core.fairplay.signals`` with the solver's line from the deal, found with the par
budget, and its nodes; then, where ``worth_tracking`` says so, ``tracking``: a
``fairplay.Tracker`` walked with the referee's re-solves — ``FAIRPLAY_RESOLVES`` of them at
most, each with ``FAIRPLAY_RESOLVE_NODES`` nodes — done here in this process):

1. **The house bots at their documented pace** (false positives): every level plays fresh
   random deals of each game (seeds from ``--seed``) the way the server's house bots play —
   levels 1 and 2 with ``solrace.core.levels.choose``, levels 3-5 with the solver worker's own
   ``hint_for`` (a line found on a sample of what the bot has seen, followed while it holds) —
   and its moves are stamped at its pace (1.5, 1, 2.5, 1.2, 0.6 s), plus the time each hint took
   here, plus 0-80 ms of network. A bot that stalls (no legal move, or ``BOT_GIVE_UP`` moves
   without progress) stops there, as the server's would resign. The house bots are the
   stand-in for a person's pace the issue names; the solver levels are engines by
   construction, so they also show what the rules do with the solver's own line at a human
   pace (they must not flag it). For the bots' finishers ``tracking`` is also worked out
   although the referee would not (their pace rules it out): what it would say of them, were
   there no pace in the rule.
2. **Browser play** (false positives): with ``--db``, every finished racer of every race in
   these SQLite files (e.g. the browser tests' server's database: run the browser tests with
   ``--basetemp DIR``, then pass ``--db DIR``) with at least ``MIN_MANUAL`` manual moves: the
   pages' own moves, clicked by Playwright as fast as the page lets it.
3. **The solver's line at machine speed** (detection): the solver's winning line of each won
   deal of (1), replayed with a fixed gap between moves (0 to 600 ms) plus 0-80 ms of network,
   as a script would; and the scout of the issue (a 68-move line in 2.6 s: 38 ms a move). Then
   the same with the solver's lines made to look less like one line from the deal: **another
   first move** (the first legal move other than the line's from which the deal is still won,
   then the solver's line from there), and **deviations** (3, then 12: at evenly spaced moves
   of the line he follows, another move that keeps the deal won, then the solver's line from
   there). The cheater's solver is this one with the par budget, on every card (a scout's
   knowledge).

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
from solrace.settings import (
    BOT_GIVE_UP,
    FAIRPLAY_RESOLVE_NODES,
    FAIRPLAY_RESOLVES,
    HINT_NODES,
    MIN_MANUAL,
    PAR_NODES,
)
from solrace.solver import worker

GAMES = ("scotch", "yukon", "quadruple-canfield")
NET_MS = 80
#: A cheater's budget for a line from a position he steps to (a lost one can take the whole
#: budget to prove: this keeps a run of the benchmark to minutes).
DETOUR_NODES = 200_000


def root_line(game: str, seed: int) -> tuple[list[str], int] | None:
    """The solver's line from the deal and its nodes, as ``Solver.line`` finds them."""
    result = solrules.solve(solrules.new_game(game, seed), solrules.Budget(nodes=PAR_NODES,
                                                                             seconds=10.0))
    return (list(result.line), result.nodes) if result.verdict == "won" else None


def position(game: str, seed: int, moves: list[str]) -> solrules.Game:
    board = solrules.new_game(game, seed)
    for move in moves:
        board.push_text(move)
    return board


def resolve(game: str, seed: int) -> Any:
    """The referee's re-solve (``Solver.position`` with the fair-play budget)."""
    def solve(moves: list[str]) -> tuple[str, ...] | None:
        result = solrules.solve(position(game, seed, moves),
                                solrules.Budget(nodes=FAIRPLAY_RESOLVE_NODES, seconds=10.0))
        return result.line if result.verdict == "won" else None
    return solve


def judge(game: str, seed: int, actions: list[str], stamps: list[int], won: bool,
          line: tuple[list[str], int] | None, anyway: bool = False
          ) -> fairplay.Signals:
    """The referee's signals; ``anyway``: ``tracking`` even where it would not be worked out
    (a finisher at a person's pace)."""
    moves, nodes = line if line is not None else (None, None)
    sig = fairplay.signals(game, seed, actions, stamps, 0, won, 0, moves, nodes=nodes)
    if moves and (fairplay.worth_tracking(sig) or (anyway and won)):
        tracker = fairplay.track(fairplay.final_moves(actions), moves, FAIRPLAY_RESOLVES,
                                 resolve(game, seed))
        sig = fairplay.tracked(sig, tracker)
    return sig


def detour(game: str, seed: int, line: list[str], at: int) -> list[str] | None:
    """``line`` up to ``at``, then another move from which the deal is still won, then the
    solver's line from there (the par budget: a cheater's solver); None if none is found."""
    board = position(game, seed, line[:at])
    for move in board.legal_moves():
        if move.text() == line[at]:
            continue
        board.push(move)
        rest = solrules.solve(board, solrules.Budget(nodes=DETOUR_NODES, seconds=10.0))
        board.pop()
        if rest.verdict == "won":
            return [*line[:at], move.text(), *rest.line]
        if rest.verdict == "unknown":
            break  # a hard position: not worth a cheater's minutes either
    return None


def deviations(game: str, seed: int, line: list[str], n: int) -> list[str] | None:
    """``n`` deviations at evenly spaced moves of the line being followed."""
    out = list(line)
    for k in range(1, n + 1):
        at = k * len(line) // (n + 1)
        if at >= len(out) - 1:
            return None
        way = detour(game, seed, out, at)
        if way is None:
            return None
        out = way
    return out


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


def spread(values: list[float]) -> str:
    """Median and largest, or "-"."""
    if not values:
        return "-"
    values = sorted(values)
    return f"{values[len(values) // 2]:.2f} (max {values[-1]:.2f})"


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
    lines: dict[tuple[str, int], tuple[list[str], int]] = {}
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
                rows.append(judge(game, seed, actions, stamps, won, lines.get((game, seed)),
                                  anyway=True))
            tracks = [s.tracking for s in rows if s.tracking is not None]
            hf = [fairplay.hard_and_fast(s) for s in rows if s.finished]
            print(f"   {game:19s} level {level} ({LEVELS[level].pace:.1f} s): {rate(rows)}; "
                  f"{wins} won; tracking {spread(tracks)}; hard&fast {spread(hf)}")
            figures.setdefault("bots", {}).setdefault(game, {})[level] = {
                "results": len(rows), "flagged": sum(s.flagged for s in rows), "won": wins,
                "tracking": sorted(tracks), "hard_and_fast": sorted(hf)}
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
    print("\n3. the solver's lines replayed by a script (detection)")
    ways: dict[str, dict[tuple[str, int], list[str]]] = {"the line": {}, "another first move": {},
                                                         "3 deviations": {},
                                                         "12 deviations": {}}
    for (game, seed), (line, _) in lines.items():
        ways["the line"][game, seed] = line
        for name, n in (("another first move", 0), ("3 deviations", 3), ("12 deviations", 12)):
            way = detour(game, seed, line, 0) if n == 0 else deviations(game, seed, line, n)
            if way is not None:
                ways[name][game, seed] = way
    for name, plays in ways.items():
        print(f"   {name} ({len(plays)} deals):")
        trackers: dict[tuple[str, int], fairplay.Tracker] = {}
        for gap in (0, 20, 38, 60, 100, 150, 200, 300, 400, 600):
            rows = []
            for (game, seed), actions in plays.items():
                line, nodes = lines[game, seed]
                sig = fairplay.signals(game, seed, actions, line_at(actions, gap, rng), 0,
                                       True, 0, line, nodes=nodes)
                if fairplay.worth_tracking(sig):  # (the same walk at every gap: done once)
                    if (game, seed) not in trackers:
                        trackers[game, seed] = fairplay.track(actions, line, FAIRPLAY_RESOLVES,
                                                              resolve(game, seed))
                    sig = fairplay.tracked(sig, trackers[game, seed])
                rows.append(sig)
            tracks = [s.tracking for s in rows if s.tracking is not None]
            agree = [s.agreement or 0.0 for s in rows]
            print(f"     {gap:3d} ms a move (+0-{NET_MS} ms): {rate(rows)}; agreement "
                  f"{spread(agree)}; tracking {spread(tracks)}")
            figures.setdefault("machine", {}).setdefault(name, {})[gap] = {
                "results": len(rows), "flagged": sum(s.flagged for s in rows),
                "engine_line": sum("engine_line" in s.rules for s in rows),
                "tracking": sorted(tracks)}
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
