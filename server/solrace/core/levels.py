"""The house's bots, by level: how each plays, at what pace, and the fixed rating it counts
with in rated races (an anchor of the rating scale: it never changes, so a player's rating
against the house means the same thing every day).

A house bot is a racer the server itself plays (:mod:`solrace.service.house_bots`), labelled
``bot`` with its ``level`` everywhere. Pure data: no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import solrules

from solrace.core.rating import Rating

Message = dict[str, Any]
T = TypeVar("T")


class Chooser(Protocol):
    """Where a bot's choices come from (a ``random.Random`` in the server)."""

    def choice(self, seq: Sequence[T]) -> T: ...


@dataclass(frozen=True, slots=True)
class Level:
    level: int
    name: str
    #: ``random`` (any legal move), ``greedy`` (a card home first) or ``solver`` (the next
    #: move of a winning line found from what it has seen, as a hint is).
    policy: str
    #: Seconds from one move to the next.
    pace: float
    rating: int
    #: Its rating's deviation: small, it is a known quantity.
    deviation: int = 100

    @property
    def as_rating(self) -> Rating:
        return Rating(float(self.rating), float(self.deviation), 0)

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "name": self.name, "rating": self.rating}


LEVELS = {
    1: Level(1, "Random", "random", 1.5, 700),
    2: Level(2, "Greedy", "greedy", 1.0, 1000),
    3: Level(3, "Steady", "solver", 2.5, 1400),
    4: Level(4, "Sharp", "solver", 1.2, 1800),
    5: Level(5, "Ace", "solver", 0.6, 2200),
}


def closest(rating: float, solver: bool = True) -> Level:
    """The level nearest a player's rating (only the levels that need no solver when there is
    none)."""
    levels = [lv for lv in LEVELS.values() if solver or lv.policy != "solver"]
    return min(levels, key=lambda lv: (abs(lv.rating - rating), lv.level))


def bot_name(level: Level) -> str:
    return f"{level.name} bot"


def headway(state: Message) -> tuple[int, int]:
    """How far a bot has got: cards home, then cards it can see on its board (a card turned
    face up is progress too)."""
    seen = sum(1 for pile in state["board"]["piles"] for card in pile["cards"] if card)
    return state["progress"]["foundation"], seen


def choose(state: Message, policy: str, rng: Chooser) -> str | None:
    legal: list[str] = state["legal"]
    if not legal:
        return None
    if policy == "greedy":
        home = [m for m in legal if m.split(">")[1].startswith("f")]
        if home:
            return rng.choice(home)
        # Avoid taking cards back off the foundations, which only undoes progress.
        rest = [m for m in legal if not m.startswith("f")]
        if rest:
            return rng.choice(rest)
    return rng.choice(legal)


def fallback(game: solrules.Game, state: Message, last: str | None,
             rng: random.Random) -> str | None:
    """A solver level's move when the solver has not answered in time: sensible, and at once
    (a millisecond or two). The move the solver's search would try first
    (:func:`solrules.best_guess`) on the bot's own guess of the cards it has not seen
    (:func:`solrules.sample_unseen`: what it has seen stays, the rest is dealt again at
    random), unless that takes the bot's ``last`` move straight back; else a safe move home;
    else the greedy level's choice, avoiding that step back when another move is left.

    ``game`` is the bot's real game: only what the racer has seen of it is used. Always one of
    ``state["legal"]``; None when nothing is legal."""
    legal: list[str] = state["legal"]
    if not legal:
        return None
    back = reverse(last) if last is not None else None
    guess = solrules.best_guess(solrules.sample_unseen(game, rng))
    if guess is not None and guess in legal and guess != back:
        return guess
    safe = [m for m in state.get("safe", []) if m in legal]
    if safe:
        return str(safe[0])
    forward = [m for m in legal if m != back]
    return choose({**state, "legal": forward or legal}, "greedy", rng)


def reverse(move: str) -> str:
    """The move that would take ``move``'s cards straight back (``t3>t5`` → ``t5>t3``)."""
    source, _, target = move.partition(">")
    return f"{target}>{source}"
