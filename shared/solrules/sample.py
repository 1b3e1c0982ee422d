"""Positions as a player may imagine them: what he has seen in place, the rest dealt at random.

The solver (:func:`solrules.solve`) reads every card. A hint, or a bot, that may only use what
the player knows solves a *sample* instead: a position that agrees with everything the player
has seen, with the cards he has never seen shuffled among the places he has never looked at.
A line found there is a plan, good until a card turned up differs from the sample's (then one
samples and solves again).

- :func:`sample_unseen`: from a :class:`Game` (a server knows the real position): the cards
  never seen (see :attr:`Game.seen`) are dealt again at random among their face-down places.
- :func:`guess_game`: from a ``board`` object (a client knows only that): every hidden card is
  drawn at random from the cards not on show.

>>> import random, solrules
>>> game = solrules.new_game("yukon", 5)
>>> other = sample_unseen(game, random.Random(1))
>>> other.board() == game.board() and other.seen == game.seen
True
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from .cards import RANKS, SUITS
from .core import Game, InvalidPositionError
from .games import GAME_CLASSES, parse_position

__all__ = ["guess_game", "sample_unseen"]


def sample_unseen(game: Game, rng: random.Random) -> Game:
    """A copy of ``game`` (without its move history) where every face-down card that has never
    been face up is dealt again, uniformly at random, among the places of those cards.

    Face-up cards and face-down cards seen before (a stock turned over, a move taken back) keep
    their places, so the copy shows the same board and has the same :attr:`Game.seen`. The
    result depends only on what the player has seen and on ``rng``: two positions he cannot
    tell apart give the same sample.
    """
    new = game.copy()
    new.move_stack = []
    new._undo = []
    new._legal = None
    new._legal_prev = None
    seen = game.seen
    places: list[tuple[int, int]] = []
    for p, pile in enumerate(new._piles):
        for i in range(new._down[p]):
            if not seen >> pile[i] & 1:
                places.append((p, i))
    # Sorted first: the sample must depend on what the player knows and on rng only, never on
    # where the unseen cards really lie.
    cards = sorted(new._piles[p][i] for p, i in places)
    rng.shuffle(cards)
    for (p, i), card in zip(places, cards, strict=True):
        new._piles[p][i] = card
        new._view[p] = None
    return new


def guess_game(board: dict[str, Any], rng: random.Random, base: str | None = None) -> Game:
    """A position agreeing with a ``board`` object (``{"game", "piles"}`` as
    :meth:`Game.board` writes it), each hidden card (``None``) drawn at random from the cards
    not on show.

    Hidden cards must lie at the bottom of their pile (face down), as on a player's own board.
    ``base``: the foundations' base rank (``"A"``, ``"7"``…) for a game whose base rank is
    dealt; by default the board's ``base``, else the rank of the bottom card of the first
    foundation that holds one.
    Raises :exc:`InvalidPositionError` if no position agrees.
    """
    name = board.get("game")
    cls = GAME_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise InvalidPositionError(f"unknown game {name!r}")
    piles: dict[str, list[str | None]] = {p["pile"]: list(p["cards"]) for p in board["piles"]}
    shown = Counter(c for cards in piles.values() for c in cards if c is not None)
    deck = Counter({r + s: cls.decks for r in RANKS for s in SUITS})
    if shown - deck:
        raise InvalidPositionError(f"too many copies of {sorted(shown - deck)[0]}")
    unknown = list((deck - shown).elements())
    unknown.sort()  # Counter order is insertion order: make the draw depend on rng only
    rng.shuffle(unknown)
    fields = [cls.name]
    if cls.foundations.base is None:
        if base is None:
            base = board.get("base")
        if base is None:
            firsts = [piles.get(f"f{i + 1}", []) for i in range(cls.foundations.count)]
            bottoms = [cards[0] for cards in firsts if cards and cards[0] is not None]
            if not bottoms:
                raise InvalidPositionError("no foundation card shows the base rank: pass base")
            base = bottoms[0][0]
        fields.append(f"base={base}")
    for pid in cls.pile_ids:
        cards = piles.get(pid, [])
        down = 0
        while down < len(cards) and cards[down] is None:
            down += 1
        if any(c is None for c in cards[down:]):
            raise InvalidPositionError(f"{pid}: a hidden card above a face-up one")
        if len(unknown) < down:
            raise InvalidPositionError("more hidden cards than cards not on show")
        hidden = [unknown.pop() for _ in range(down)]
        text = "".join(hidden) + ("|" if down else "") + "".join(c for c in cards[down:] if c)
        fields.append(f"{pid}:{text}")
    if unknown:
        raise InvalidPositionError(f"{len(unknown)} cards are neither shown nor hidden")
    return parse_position(" ".join(fields))

