"""How a game's piles are declared: how cards build (:class:`Build`), which cards move together
(:class:`Moves`), what fills a space (:class:`Fill`), and the :class:`Foundations` and
:class:`Tableau` a game module lists as class attributes of its :class:`~solrules.core.Game`."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache

from .cards import RANK_OF, RED_OF, SUIT_OF

__all__ = ["Build", "Fill", "Foundations", "Match", "Moves", "Tableau"]


class Match(enum.Enum):
    """What a card must share with the card it is built on, besides the rank step."""

    ANY = "any suit"
    ALT_COLOUR = "alternate colour"
    SUIT = "same suit"


class Moves(enum.Enum):
    """Which cards of a tableau pile may move together."""

    ONE = "top card only"
    RUN = "any run in sequence from the top"
    FACE_UP = "any face-up card with everything above it"


class Fill(enum.Enum):
    """What an empty tableau pile accepts."""

    NEVER = "never filled again"
    KING = "only a King"
    ANY = "any card or movable run"


@dataclass(frozen=True)
class Build:
    """How cards build on a pile: ``step`` +1 (up) or -1 (down), a :class:`Match`, wrap-around."""

    step: int
    match: Match
    wrap: bool = False

    def tables(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(key, wanted)``: a card fits on ``top`` exactly when ``key[card] == wanted[top]``."""
        return _build_tables(self)

    def describe(self) -> str:
        direction = "up" if self.step > 0 else "down"
        wrap = ", wrapping" if self.wrap else ""
        return f"{direction} by one in {self.match.value}{wrap}"


def card_key(match: Match, rank: int, suit: int, red: int) -> int:
    """What a card is compared by under ``match``: its rank, rank and colour, or rank and suit."""
    if match is Match.ANY:
        return rank
    if match is Match.ALT_COLOUR:
        return rank * 2 + red
    return rank * 4 + suit


@cache
def _build_tables(build: Build) -> tuple[tuple[int, ...], tuple[int, ...]]:
    # Reducing "does card fit on top" to one integer comparison keeps legal_moves a dictionary
    # lookup per source card instead of a test per (source, destination) pair.
    keys: list[int] = []
    wanted: list[int] = []
    for c in range(len(RANK_OF)):
        rank, suit, red = RANK_OF[c], SUIT_OF[c], RED_OF[c]
        keys.append(card_key(build.match, rank, suit, red))
        nxt = rank + build.step
        if build.wrap:
            nxt %= 13
        if not 0 <= nxt < 13:
            wanted.append(-1)
        else:
            wanted.append(card_key(build.match, nxt, suit, 1 - red))
    return tuple(keys), tuple(wanted)


@dataclass(frozen=True)
class Foundations:
    """The foundation piles ``f1``…: count, how they build, their base rank and what may leave them.

    ``base`` is the rank an empty foundation takes (``None``: set by the deal, as in Canfield).
    With ``suit_groups`` the foundations are split in four groups, clubs, spades, hearts, diamonds.
    """

    count: int
    build: Build
    base: int | None = 0
    suit_groups: bool = False
    give_back: bool = False
    max_cards: int = 13


@dataclass(frozen=True)
class Tableau:
    """The tableau piles ``t1``…: count, build, what moves, what fills a space, forced effects.

    ``refill_from_reserve``: a pile emptied by a move is at once refilled with the reserve's top
    card (part of that move). ``flip``: a face-down card that becomes the top turns face up.
    ``noun`` names a pile to the player ("fan", "column").
    """

    count: int
    build: Build
    moves: Moves
    fill: Fill
    refill_from_reserve: bool = False
    flip: bool = False
    noun: str = "pile"
