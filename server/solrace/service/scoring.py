"""Scoring: every finished race with players is scored exactly once — each player's result
written to his history and, in a rated race, the ratings changed (:mod:`solrace.core.scoring`
says what; :meth:`solrace.store.player_base.PlayerStore.score` writes it once).

The process that ends a race scores it at once and tells everyone following it (``ratings``).
If it dies first, the race stays in the store's list of races to score, and the sweep of the
next process that looks (at start, then every ``SCORE_SWEEP_EVERY`` seconds) scores it: two
processes that try together are safe, the store writes only the first.

A race with a player whose account is closed for fair play (the moderation store is asked when
the race is scored, so on every process alike) is casual (``closed``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from itertools import combinations
from typing import Any

from solrace.core.race import Race
from solrace.core.scoring import rated, scoring
from solrace.protocol import player_messages
from solrace.protocol.event import Event
from solrace.runtime.supervisor import Supervisor
from solrace.service.fairplay import Referee
from solrace.settings import REPEAT_WINDOW_MS, SCORE_SWEEP_EVERY
from solrace.store.player_base import PlayerStore

log = logging.getLogger(__name__)

Message = dict[str, Any]


class Scorer:
    """See the module docstring. ``load(race)``: a race from memory or the store;
    ``publish(race, event)``: to everyone following it."""

    def __init__(self, store: PlayerStore, load: Callable[[str], Awaitable[Race | None]],
                 publish: Callable[[str, Event], None], supervisor: Supervisor,
                 referee: Referee | None = None, clock: Callable[[], int] | None = None,
                 closed: Callable[[list[str]], Awaitable[set[str]]] | None = None) -> None:
        self.store = store
        self.load = load
        self.publish = publish
        self.supervisor = supervisor
        #: Each result's fair-play signals, worked out before the race is scored.
        self.referee = referee
        self.clock = clock
        #: Which of these players' accounts are closed for fair play (the moderation store's
        #: answer): a race with one of them is casual (solrace.core.scoring).
        self.closed = closed
        self._scoring: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self.scored = 0

    async def known(self, race_id: str) -> Message | None:
        """The ``ratings`` body of a race scored already (None if not)."""
        return await self.store.scored(race_id)

    def finished(self, race: Race) -> None:
        """A race ended here: score it (if it has players)."""
        if any(r.pid is not None for r in race.racers.values()):
            self.supervisor.spawn(self.score(race), f"score {race.race}")

    async def score(self, race: Race) -> Message | None:
        """Score a finished race (once: None if it was scored already, or is being scored
        here); tell its followers."""
        if race.race in self._scoring or race.status != "finished":
            return None
        self._scoring.add(race.race)
        try:
            signals = await self.referee.review(race) if self.referee is not None else {}
            together = await self._together(race)
            closed = await self._closed(race)
            body = await self.store.score(scoring(
                race, signals, lambda a, b: together.get((a, b), 0), closed))
        except Exception:
            log.exception("cannot score race %s now (the sweep will)", race.race)
            return None
        finally:
            self._scoring.discard(race.race)
        if body is None:
            known = await self.store.scored(race.race)
            race.ratings = known
            return None
        self.scored += 1
        race.ratings = body
        self.publish(race.race, Event(player_messages.ratings(race.race, body)))
        return body

    async def _closed(self, race: Race) -> set[str]:
        """Its players whose accounts are closed for fair play (asked when it is scored: a
        closure before then makes it casual; one after it refunds what it took)."""
        if self.closed is None or not rated(race):
            return set()
        return await self.closed(sorted({r.pid for r in race.racers.values()
                                         if r.pid is not None and not r.bot}))

    async def _together(self, race: Race) -> dict[tuple[str, str], int]:
        """How many rated races each two of its players had together lately (the rule on
        repeated pairs: :mod:`solrace.core.scoring`); nothing to ask when it is not rated."""
        if not rated(race):
            return {}
        now = self.clock() if self.clock is not None else race.finished_at or 0
        pids = sorted({r.pid for r in race.racers.values()
                       if r.pid is not None and not r.bot and r.account})
        return {(a, b): await self.store.together(a, b, now - REPEAT_WINDOW_MS)
                for a, b in combinations(pids, 2)}

    async def sweep(self) -> int:
        """Score the finished races with players that nobody scored (a process died); how
        many were."""
        done = 0
        for race_id in await self.store.to_score(100):
            race = await self.load(race_id)
            if race is None:
                await self.store.done_scoring(race_id)  # gone (expired): nothing to score
                continue
            if race.status == "finished" and await self.score(race) is not None:
                done += 1
        return done

    def start(self) -> None:
        self._sweeper = self.supervisor.spawn(self._sweep_loop(), "scoring sweep")

    async def _sweep_loop(self) -> None:
        while True:
            try:
                n = await self.sweep()
                if n:
                    log.warning("scored %d races a process left unscored", n)
            except Exception:
                log.exception("scoring sweep failed")
            await asyncio.sleep(SCORE_SWEEP_EVERY)

    def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
