"""The home page's live figures: players online, races running, and the featured race
(``GET /api/live``, docs/protocol.md "The home page's live figures").

A process looks at what it holds at most every ``LIVE_EVERY_S`` seconds — its open connections
and the races it runs — and keeps the answer: a crowd loading the home page reads the answer of
the last look, never a scan of its own (measured in docs/performance.md).

- **Players online**: the distinct visitors with an open WebSocket here: a player (by id, on
  every tab and device he has open), else a browser (by its key: the ``sr_player`` cookie, as
  one visitor on all its tabs), else the connection itself (a client without the cookie: a bot,
  a script). The home page holds one socket while it is shown (its featured board's), so a
  visitor on the home page counts.
- **Races running**: the races this process runs whose status is ``running``.
- **The featured race**: :func:`solrace.core.showcase.best` among them.

Alone (SQLite), a process answers with its own figures, worked out when asked and kept
``LIVE_EVERY_S`` seconds. On Redis, every process publishes its figures every ``LIVE_EVERY_S``
seconds and reads everyone's back (:class:`Shared`, implemented by
:mod:`solrace.cluster.live`): visitors are counted once across processes (a player with a tab on
each process is one), races are summed (each runs in one process), and the best of the
processes' featured races is featured. If Redis does not answer, the process answers with its
own figures until it does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from solrace.core import showcase
from solrace.core.race import Race
from solrace.settings import LIVE_EVERY_S

log = logging.getLogger(__name__)

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Local:
    """What one process counts at one look."""

    #: The distinct visitors connected here (see the module docstring).
    visitors: frozenset[str]
    #: Races running here.
    races: int
    #: The race it would feature (:func:`solrace.core.showcase.featured_view`) and its rank.
    featured: Message | None
    rank: showcase.Rank | None


@dataclass(frozen=True, slots=True)
class Totals:
    """The figures of every process together."""

    players: int
    races: int
    featured: Message | None


class Shared(Protocol):
    """Where the processes on one Redis put their figures together
    (:class:`solrace.cluster.live.SharedFigures`)."""

    async def exchange(self, local: Local) -> Totals:
        """Publish this process's figures; everyone's live figures together."""

    async def leave(self) -> None:
        """This process stops: its figures go at once."""


def visitor_id(conn_id: int, key: str | None, player: str | None) -> str:
    """Who a connection is, for the count: a player, a browser or the connection itself. The
    three never collide (a prefix each)."""
    if player is not None:
        return f"p:{player}"
    if key is not None:
        return f"k:{key}"
    return f"c:{conn_id}"


class Showcase:
    """The live figures of this process (see the module docstring).

    ``races()``: the races this process runs; ``visitors()``: the visitor id of each open
    connection (:func:`visitor_id`); ``public_tournament(tid)``: does that tournament take
    entrants without a code; ``clock()``: the time (ms) of the answer; ``monotonic``: how the
    age of an answer is measured."""

    def __init__(self, races: Callable[[], Iterable[Race]],
                 visitors: Callable[[], Iterable[str]],
                 public_tournament: Callable[[str], bool],
                 clock: Callable[[], int],
                 monotonic: Callable[[], float] = time.monotonic,
                 every: float = LIVE_EVERY_S) -> None:
        self.races = races
        self.visitors = visitors
        self.public_tournament = public_tournament
        self.clock = clock
        self.monotonic = monotonic
        self.every = every
        #: With several processes: where they put their figures together (set by the app).
        self.shared: Shared | None = None
        self._answer: Message | None = None
        self._at = 0.0
        #: Looks taken (scans of the races held), for tests and measurements.
        self.looks = 0

    def look(self) -> Local:
        """Count what this process holds now (one pass over its races and connections)."""
        self.looks += 1
        held = list(self.races())
        best = showcase.best(held, self.public_tournament)
        return Local(visitors=frozenset(self.visitors()), races=showcase.running(held),
                     featured=None if best is None else showcase.featured_view(best),
                     rank=None if best is None else showcase.rank(best))

    def _keep(self, totals: Totals) -> Message:
        self._answer = {"players_online": totals.players, "races_running": totals.races,
                        "featured": totals.featured, "at": self.clock()}
        self._at = self.monotonic()
        return self._answer

    @staticmethod
    def alone(local: Local) -> Totals:
        return Totals(len(local.visitors), local.races, local.featured)

    def answer(self) -> Message:
        """The figures for ``GET /api/live``: the last look's if it is recent, else a new look
        (alone), or this process's own until the first exchange (on Redis)."""
        fresh = self._answer is not None and self.monotonic() - self._at < self.every
        if self._answer is not None and (fresh or self.shared is not None):
            return self._answer
        return self._keep(self.alone(self.look()))

    async def exchange(self) -> Message:
        """One look, published and put together with the other processes' (on Redis); if
        Redis fails, this process's own figures."""
        local = self.look()
        if self.shared is None:
            return self._keep(self.alone(local))
        try:
            return self._keep(await self.shared.exchange(local))
        except Exception as exc:
            log.warning("cannot share the live figures: %s", exc)
            return self._keep(self.alone(local))

    async def run(self) -> None:
        """With several processes: publish and read the figures every ``every`` seconds, for
        as long as the process runs (a supervised task)."""
        while True:
            await self.exchange()
            await asyncio.sleep(self.every)
