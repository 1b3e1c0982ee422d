"""A race's values: its options, the error a refused command raises, the commitment to its
deal, and what a command produces (log entries, numbered events, the :class:`Outcome`). The
race itself is :class:`solrace.core.race.Race`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from solrace.core.errors import Code

Status = Literal["lobby", "countdown", "running", "finished"]
Message = dict[str, Any]


class RaceError(Exception):
    """A refused command. Raised before any state changes; becomes an ``error`` reply, with
    ``fields`` beside its code and message (``until`` for a pause, say)."""

    def __init__(self, code: Code, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = fields


def commitment(game: str, seed: int, salt: str) -> str:
    """Lowercase hex SHA-256 of ``"{game}:{seed}:{salt}"``: published at creation, checkable
    by anyone once the deal is revealed."""
    return hashlib.sha256(f"{game}:{seed}:{salt}".encode()).hexdigest()


@dataclass(frozen=True)
class Options:
    players: int = 2
    time_limit: int = 600  # seconds
    undo: bool = True
    public: bool = False  # listed among the open races of the home page
    hints: bool = False  # racers may ask for hints (``hint``), counted in the standings
    winnable: bool = False  # the secret deal is one the solver has won
    #: ... drawn from the public catalogue (a demo server): anyone could look it up.
    demo_catalogue: bool = False
    #: The race changes its players' ratings (see :mod:`solrace.service.scoring`).
    rated: bool = False
    #: How it was made: None (created), "quick" (paired), "bot" (against a house bot) or
    #: "daily" (the daily deal of ``day``).
    kind: str | None = None
    day: str | None = None

    def as_dict(self) -> Message:
        out: Message = {"players": self.players, "time_limit": self.time_limit,
                        "undo": self.undo, "public": self.public, "hints": self.hints,
                        "winnable": self.winnable, "rated": self.rated}
        if self.demo_catalogue:
            out["demo_catalogue"] = True
        if self.kind is not None:
            out["kind"] = self.kind
        if self.day is not None:
            out["day"] = self.day
        return out


class LogEntry(NamedTuple):
    """One durable fact about a race, in order. ``kind`` is one of join, ready, start, move,
    undo, resign, abandon, hint; ``data`` is the name, token (and bot flag) for join, the move text
    for move. (A named tuple: one is made for every move, and a frozen dataclass costs several
    times more.)"""

    race: str
    at: int
    kind: str
    player: str | None = None
    data: Any = None


class RaceEvent(NamedTuple):
    """Something that happened in the race, numbered by ``v`` (+1 per event). ``kind`` is the
    wire type (``player_joined``, ``ready``, ``countdown``, ``started``, ``progress``,
    ``finished``, ``resigned``, ``race_over``) and ``fields`` its facts as they were then; what
    goes on the wire is :func:`solrace.protocol.messages.event`'s business."""

    v: int
    kind: str
    fields: Message


@dataclass
class Outcome:
    """What a command produced.

    ``log`` must be committed before anything else is sent. ``events`` go to everyone following
    the race. ``acted`` names the racer whose new ``state`` answers the command (a move, an
    undo, a repeated ``seq``) or who just joined. ``started``:
    every racer gets its first ``state``. ``finished``: this outcome ended the race. ``moved``
    names the racers whose board changed (their boards go out as throttled views). ``views``:
    what some viewer may see changed (a card turned up, a racer stopped racing).
    """

    events: list[RaceEvent] = field(default_factory=list)
    log: list[LogEntry] = field(default_factory=list)
    acted: str | None = None
    started: bool = False
    finished: bool = False
    moved: list[str] = field(default_factory=list)
    views: bool = False
    #: Its messages, when they were built before the commit (see Hub._queue).
    wire: list[Any] | None = None
    #: The physical cards the racer's action turned face up (a bitmask); None when nothing
    #: was done (a repeated ``seq``): what a lean ``state`` tells.
    turned: int | None = None

    def extend(self, other: Outcome) -> None:
        self.events += other.events
        self.log += other.log
        self.moved += other.moved
        self.acted = other.acted or self.acted
        self.started = self.started or other.started
        self.finished = self.finished or other.finished
        self.views = self.views or other.views
