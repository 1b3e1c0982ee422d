"""Shared helpers for the solrules tests: talking to the public API and to the reference model."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import solrules

from tests.solrules.model import DECKS, SUITS, Model, MoveT, unshuffled

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "seeds" / "golden"


@cache
def golden(game: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN_DIR / f"{game}.json").read_text())
    return data


def piles(game: solrules.Game, reveal: bool = False) -> dict[str, list[str | None]]:
    """`game.board()` as {pile id: cards bottom to top}."""
    board = game.board(reveal=reveal)
    return {p["pile"]: list(p["cards"]) for p in board["piles"]}


def as_tuple(move: solrules.Move) -> MoveT:
    return (move.src, move.dst, move.count)


def move_set(game: solrules.Game) -> set[MoveT]:
    return {as_tuple(m) for m in game.legal_moves()}


def mv(text: str) -> solrules.Move:
    return solrules.Move.from_text(text)


def model_of(game: solrules.Game, base: int = 0) -> Model:
    """A reference model holding the same position as `game` (read through board())."""
    shown = piles(game)
    full = piles(game, reveal=True)
    down = {pid: sum(c is None for c in cards) for pid, cards in shown.items() if pid != "s"}
    cards = {pid: [str(c) for c in cs] for pid, cs in full.items()}
    if game.name == "quadruple-canfield" and not base:
        base = qc_base_rank(game.position())
    return Model(game.name, cards, down, base)


def qc_base_rank(position: str) -> int:
    for token in position.split():
        if token.startswith("base="):
            return "A23456789TJQK".index(token[5:]) + 1
    raise AssertionError(f"no base= in {position!r}")


def assert_deck_complete(game: solrules.Game) -> None:
    """Every card present exactly once per deck."""
    counts = Counter(c for cs in piles(game, reveal=True).values() for c in cs)
    expected = Counter(unshuffled(DECKS[game.name]))
    assert counts == expected


def position_text(game: str, layout: dict[str, str], base: str | None = None,
                  filler: str | None = None) -> str:
    """Position text for `game` with the piles in `layout` (``"4H7C|5C6D"`` style) and every
    other card of the game's decks put, face down, on pile `filler` (the default filler for
    each game is harmless: see DEFAULT_FILLER). Piles not named are empty."""
    used: Counter[str] = Counter()
    for cards in layout.values():
        text = cards.replace("|", "")
        assert len(text) % 2 == 0, cards
        used.update(text[i:i + 2] for i in range(0, len(text), 2))
    missing = Counter(unshuffled(DECKS[game]))
    missing.subtract(used)
    assert all(n >= 0 for n in missing.values()), f"too many cards: {+(-missing)}"
    rest = "".join(sorted(missing.elements(), key=_card_order))
    layout = dict(layout)
    filler = filler or DEFAULT_FILLER[game]
    if rest:
        assert filler not in layout or "|" not in layout[filler], "filler pile must be face up"
        fill = layout.get(filler, "")
        if game == "quadruple-canfield" and filler == "s":
            layout[filler] = rest + fill + "|"
        elif game == "scotch":
            layout[filler] = rest + fill
        elif fill:
            layout[filler] = rest + "|" + fill
        else:
            layout[filler] = rest[:-2] + "|" + rest[-2:]
    tokens = [game]
    if base is not None:
        tokens.append(f"base={base}")
    tokens += [f"{pid}:{layout.get(pid, '')}" for pid in pile_order(game)]
    return " ".join(tokens)


DEFAULT_FILLER = {"scotch": "t18", "yukon": "t7", "quadruple-canfield": "s"}


def _card_order(card: str) -> tuple[int, int]:
    return (SUITS.index(card[1]), "A23456789TJQK".index(card[0]))


@cache
def pile_order(game: str) -> tuple[str, ...]:
    """The game's pile order, as the package's own board() lists it."""
    board = solrules.new_game(game, 1).board()
    return tuple(p["pile"] for p in board["piles"])


def build(game: str, layout: dict[str, str], base: str | None = None,
          filler: str | None = None) -> solrules.Game:
    return solrules.parse_position(position_text(game, layout, base, filler))


def assert_allows(game: solrules.Game, text: str) -> None:
    move = mv(text)
    assert game.is_legal(move), f"{text} should be legal; refusal={game.refusal(move)!r}"
    assert game.refusal(move) is None
    assert move in game.legal_moves()


def assert_refuses(game: solrules.Game, text: str) -> None:
    move = mv(text)
    assert not game.is_legal(move), f"{text} should be refused"
    reason = game.refusal(move)
    assert isinstance(reason, str) and reason.strip(), f"{text}: refusal {reason!r}"
    assert move not in game.legal_moves()
    before = game.position()
    try:
        game.push(move)
    except solrules.IllegalMoveError:
        pass
    else:
        raise AssertionError(f"push({text}) did not raise IllegalMoveError")
    assert game.position() == before


def agree_with_plain_search(games: list[solrules.Game], budget: int) -> dict[str, int]:
    """Whenever the plain search of tests/solrules/oracle.py decides one of ``games`` within
    ``budget`` positions, :func:`solrules.solve` decides it the same way within 3 times its
    nodes (at least 3,000), and a line it calls won wins on the reference model. Returns how
    many the plain search found won, lost and unknown."""
    from tests.solrules.oracle import model_of, move_of, plain_search, replays

    tally = {"won": 0, "lost": 0, "unknown": 0}
    for g in games:
        start = model_of(g.position())
        plain = plain_search(start, budget)
        tally[plain.verdict] += 1
        if plain.verdict == "unknown":
            continue
        result = solrules.solve(g, solrules.Budget(nodes=max(3 * plain.nodes, 3_000)))
        assert result.verdict == plain.verdict, (g.position(), plain.nodes, result.nodes)
        if result.verdict == "won":
            assert replays(start, [move_of(t) for t in result.line]), g.position()
    return tally
