"""The tournament's values: settings, entrants, results, rounds, matches, log entries, events
and outcomes, and the two pure helpers that split a field into races and order a bracket (the
machine itself is :class:`solrace.core.tournament.Tournament`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from solrace.core.errors import Code
from solrace.settings import MAX_ENTRANTS, MAX_RACERS

Status = Literal["entry", "running", "finished"]
Message = dict[str, Any]
Draw = Callable[[str], int]  # a new secret seed for a deal of this game


class TournamentError(Exception):
    """A refused tournament command (raised before anything changes)."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Settings:
    name: str
    format: Literal["rounds", "knockout"]
    games: tuple[str, ...]
    rounds: int = 0  # rounds format: how many (0: one per game)
    best_of: int = 1  # knockout
    race_size: int = MAX_RACERS
    time_limit: int = 600
    grace: int = 60  # seconds a seated entrant has to join a race before it starts anyway
    gap: int = 30  # seconds between rounds (0: only the host starts the next one)
    code: str | None = None
    max_entrants: int = MAX_ENTRANTS
    winnable: bool = False  # every deal from the catalogue of certified-winnable deals

    def as_dict(self) -> Message:
        """As anyone may see them (whether there is an entry code, not the code)."""
        return {**self.as_record(), "code": self.code is not None}

    def as_record(self) -> Message:
        """Everything, for the store."""
        return {"name": self.name, "format": self.format, "games": list(self.games),
                "rounds": self.rounds, "best_of": self.best_of, "race_size": self.race_size,
                "time_limit": self.time_limit, "grace": self.grace, "gap": self.gap,
                "code": self.code, "max_entrants": self.max_entrants,
                "winnable": self.winnable}

    @classmethod
    def from_record(cls, record: Message) -> Settings:
        return cls(**{**record, "games": tuple(record["games"])})


class TLogEntry(NamedTuple):
    """One durable fact of a tournament, in order."""

    tournament: str
    at: int
    kind: str
    data: Any = None


@dataclass
class Entrant:
    entrant: str
    name: str
    token: str
    bot: bool
    order: int
    removed: bool = False
    #: A house bot the host added (its level: solrace.core.levels); the server plays it.
    level: int | None = None
    #: The player who entered (his id; None: anonymous, a bot) and whether his account was
    #: closed for fair play since (no place in the table: solrace.core.tournament_table).
    player: str | None = None
    closed: bool = False


@dataclass
class Result:
    """One entrant's result in one race (race times in ms since that race's start)."""

    entrant: str
    finished: bool
    time_ms: int | None
    cards: int
    reached_ms: int
    resigned: bool
    #: Played at machine speed (solrace.core.fairplay): behind everyone, no place in the table.
    flagged: bool = False

    def rank(self) -> tuple[int, int, int]:
        """The result as a sort key, smaller is better: finishers by time, then those who did
        not finish and did not resign, then those who resigned (a resign is a loss), each by
        cards (desc), then by who got there first; a flagged result last. Equal ranks share a
        place."""
        if self.flagged:
            return (3, 0, 0)
        if self.finished:
            return (0, self.time_ms or 0, 0)
        return (2 if self.resigned else 1, -self.cards, self.reached_ms)

    def key(self, order: int) -> tuple[int, int, int, int]:
        """:meth:`rank`, then entry order: the order of a listing (and who wins a knockout
        game that ends in a tie: the better seed)."""
        return (*self.rank(), order)


def shared_places(ranks: list[Any]) -> list[int]:
    """Places for values already sorted best first: equal values share a place and the next
    place is skipped ([a, b, b, c] -> [1, 2, 2, 4])."""
    places: list[int] = []
    for i, value in enumerate(ranks):
        places.append(places[-1] if i and value == ranks[i - 1] else i + 1)
    return places


@dataclass
class RacePlan:
    """A race to create now: its id, game, seed, and the entrants seated in it, in order.
    ``forfeit``: an entrant absent when it starts loses (knockout)."""

    race: str
    game: str
    seed: int
    entrants: list[str]
    forfeit: bool
    round: int


@dataclass
class Round:
    number: int
    game: str
    races: list[str] = field(default_factory=list)
    seeds: dict[str, int] = field(default_factory=dict)
    seats: dict[str, list[str]] = field(default_factory=dict)  # race -> entrants
    results: dict[str, list[Result]] = field(default_factory=dict)  # race -> results
    over: bool = False
    void: list[str] = field(default_factory=list)  # races of a re-dealt round

    @property
    def entrants(self) -> list[str]:
        return [e for race in self.races for e in self.seats[race]]


@dataclass
class Match:
    match: int
    round: int
    entrants: list[str | None]  # two slots (None: a bye, or not decided yet)
    games: list[str] = field(default_factory=list)
    wins: dict[str, int] = field(default_factory=dict)
    winner: str | None = None


class TEvent(NamedTuple):
    """A numbered tournament event: ``kind`` is ``tournament`` (the whole view changed),
    ``standings`` or ``tournament_over``."""

    v: int
    kind: str
    race: str | None = None  # for ``standings``: the race whose result it takes in


@dataclass
class TOutcome:
    log: list[TLogEntry] = field(default_factory=list)
    events: list[TEvent] = field(default_factory=list)
    plans: list[RacePlan] = field(default_factory=list)
    entrant: str | None = None  # who joined, for the reply
    finished: bool = False
    #: The races created for ``plans``, by whoever runs the tournament.
    created: list[Any] = field(default_factory=list)

    def extend(self, other: TOutcome) -> None:
        self.log += other.log
        self.events += other.events
        self.plans += other.plans
        self.entrant = other.entrant or self.entrant
        self.finished = self.finished or other.finished


def split(count: int, size: int) -> list[int]:
    """The fewest races of at most ``size`` for ``count`` entrants, as even as possible
    (bigger races first): 7 by 3 -> [3, 2, 2]."""
    if count <= 0:
        return []
    races = -(-count // size)
    base, extra = divmod(count, races)
    return [base + 1 if i < extra else base for i in range(races)]


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order, so that seed 1 meets seed ``size`` first and
    the two best seeds can only meet in the final: 8 -> [1, 8, 4, 5, 2, 7, 3, 6]."""
    order = [1]
    while len(order) < size:
        n = len(order) * 2
        order = [x for s in order for x in (s, n + 1 - s)]
    return order
