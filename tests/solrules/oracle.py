"""A plain exhaustive search, the test oracle for :func:`solrules.solve`.

Written from ``docs/rules.md`` on the independent reference model of ``model.py`` (which never
imports ``solrules``): its own move generator, its own way of playing a move, its own reading of
the position text. Nothing of the solver is used, not even the public ``Game`` API, so that a
mistake in the rules engine or in the solver's engines cannot hide in both.

The search is the plainest that decides: depth-first, every legal move in a fixed order (move
tuples sorted, last first: no move ordering), a set of the positions met (every pile exactly,
face-down counts included: no symmetry) and nothing else (no dominance, no deadlock rule).

Node counts. A position is *expanded* when its moves are generated, once, the first time it is
met; the root counts as one and a won position is never expanded. :class:`solrules.SolveResult`
counts its ``nodes`` the same way, with two differences that can only favour the plain search:
the solver's key merges positions that differ only by interchangeable piles or cards (one node
for several of the oracle's), and its mirror and probes re-expand positions the prover met (see
``solrules.solver._search``), which the oracle never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .model import DECKS, Model, MoveT, pile_ids, rank

Verdict = Literal["won", "lost", "unknown"]

RANKS = "A23456789TJQK"


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    nodes: int  # positions expanded
    line: tuple[MoveT, ...]  # for "won": the moves from the root


def model_of(text: str) -> Model:
    """A :class:`Model` from position text (``GAME [base=R] PILE:CARDS ...``, cards bottom to
    top, a ``|`` after the face-down ones), as ``docs/rules.md`` describes it."""
    fields = text.split()
    game = fields[0]
    base = 0
    piles: dict[str, list[str]] = {p: [] for p in pile_ids(game)}
    down: dict[str, int] = {}
    for f in fields[1:]:
        name, _, cards = f.partition(":") if not f.startswith("base=") else ("", "", "")
        if f.startswith("base="):
            base = RANKS.index(f[5:]) + 1
            continue
        hidden, bar, shown = cards.partition("|")
        if not bar:
            hidden, shown = "", cards
        all_cards = hidden + shown
        piles[name] = [all_cards[i:i + 2] for i in range(0, len(all_cards), 2)]
        if name != "s" and hidden:
            down[name] = len(hidden) // 2
    if game == "quadruple-canfield":
        down["r"] = max(len(piles["r"]) - 1, 0)
    assert sum(len(c) for c in piles.values()) == 52 * DECKS[game], text
    if base == 0 and game == "quadruple-canfield":
        raise ValueError("base rank missing")
    return Model(game, piles, down, base)


def _where(m: Model) -> tuple[object, ...]:
    return (tuple(tuple(c) for c in m.piles.values()), tuple(sorted(m.down.items())))


def _in_order(m: Model) -> list[MoveT]:
    # A fixed order that knows nothing of the games: move tuples sorted, last first (so a
    # foundation's card is not given back before anything else is tried; in sorted order "f1"
    # comes before "t1", and Scotch end positions then drown in cards given back).
    return sorted(m.legal_moves(), reverse=True)


def plain_search(start: Model, budget: int) -> Outcome:
    """Depth-first over every legal move, in sorted order, with a set of positions met; "unknown"
    once more than ``budget`` positions would be expanded."""
    if start.is_won():
        return Outcome("won", 0, ())
    seen = {_where(start)}
    nodes = 1
    if nodes > budget:
        return Outcome("unknown", budget, ())
    # A frame: the position, its moves in order, the next one to try.
    stack: list[tuple[Model, list[MoveT], int]] = [(start, _in_order(start), 0)]
    line: list[MoveT] = []
    while stack:
        here, moves, i = stack[-1]
        if i == len(moves):
            stack.pop()
            if line:
                line.pop()
            continue
        stack[-1] = (here, moves, i + 1)
        child = here.copy()
        child.apply(moves[i])
        if child.is_won():
            return Outcome("won", nodes, (*line, moves[i]))
        where = _where(child)
        if where in seen:
            continue
        if nodes == budget:
            return Outcome("unknown", nodes, ())
        seen.add(where)
        nodes += 1
        line.append(moves[i])
        stack.append((child, _in_order(child), 0))
    return Outcome("lost", nodes, ())


def replays(start: Model, line: list[MoveT]) -> bool:
    """Whether ``line`` (moves as the model writes them) is legal from ``start`` and wins."""
    m = start.copy()
    for move in line:
        if move not in m.legal_moves():
            return False
        m.apply(move)
    return m.is_won()


def move_of(text: str) -> MoveT:
    """A move text of ``docs/rules.md`` (``t2>t5/3``, ``s>w``) as a model move."""
    head, _, count = text.partition("/")
    src, _, dst = head.partition(">")
    return (src, dst, int(count) if count else 1)


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.solrules.oracle GAME FILE [--verdicts unknown] [--count N] [--budget B]``:
    the plain search on the deals of a catalogue file (the first N with those verdicts), one
    line each and a tally, to set beside the catalogue's verdicts. ``--seeds S1,S2,…`` instead
    of FILE: those deals (e.g. the benchmark's, which no catalogue holds), verdict "unknown"."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("game")
    parser.add_argument("file", nargs="?")
    parser.add_argument("--seeds", default="", help="comma-separated deals instead of FILE")
    parser.add_argument("--verdicts", default="unknown")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--budget", type=int, default=20_000)
    args = parser.parse_args(argv)
    from .model import deal

    wanted = args.verdicts.split(",")
    if args.seeds:
        entries = [{"seed": s.strip(), "verdict": "unknown"} for s in args.seeds.split(",")]
    elif args.file:
        with open(args.file, encoding="utf-8") as f:
            entries = [json.loads(line) for line in f if line.strip()]
    else:
        parser.error("FILE or --seeds is required")
    chosen = [e for e in entries if e["verdict"] in wanted][:args.count]
    tally: dict[str, int] = {}
    for e in chosen:
        start = deal(args.game, int(e["seed"]))
        out = plain_search(start, args.budget)
        agree = "" if out.verdict == "unknown" or e["verdict"] == "unknown" else (
            "agrees" if out.verdict == e["verdict"] else "DISAGREES")
        print(f"{e['seed']:>20} catalogue {e['verdict']:<8} plain {out.verdict:<8} "
              f"{out.nodes:>8} nodes {agree}", flush=True)
        key = f"{e['verdict']}->{out.verdict}"
        tally[key] = tally.get(key, 0) + 1
    print("tally (catalogue->plain):", dict(sorted(tally.items())))
    return 0


__all__ = ["Outcome", "model_of", "move_of", "plain_search", "rank", "replays"]

if __name__ == "__main__":
    raise SystemExit(main())
