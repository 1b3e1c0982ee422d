"""The referee: each finished result's fair-play signals, worked out before the race is scored,
the pause of a player's rated pairing after repeated walkouts, and the end of it for an
account closed for fair play.

What the signals are and which rules flag a result: :mod:`solrace.core.fairplay` (pure). What
needs I/O is here:

- the solver's winning line from the deal and the nodes it took (one solve per deal, shared by
  every result on it and kept for a while; the scorer waits for it at most
  ``FAIRPLAY_LINE_WAIT`` seconds, behind everyone's hints, then goes on without it);
- ``tracking``, for the results where it can decide a rule
  (:func:`~solrace.core.fairplay.worth_tracking`): a :class:`~solrace.core.fairplay.Tracker`
  walked along the racer's moves, the solver asked for a new line (``line_from``) wherever he
  left the current one, at most ``FAIRPLAY_RESOLVES`` times per result. The re-solves wait in
  the solver's queue of analyses under one client of their own (:data:`FAIRPLAY_CLIENT`), in
  turns by result: hints come first (a hint waits behind one re-solve at most), and fair play
  as a whole takes one address's share of the analyses' time, whatever the number of results
  waiting. The racers of one race are tracked at once; the scorer waits for them at most
  ``FAIRPLAY_TRACK_WAIT`` seconds in all, and what is not solved by then counts as no match
  (``tracking`` is a lower bound: a busy solver can miss an engine, never flag a person);
- for the daily deal, whether another player from the racer's network looked at the same deal
  before he finished (the store keeps each attempt's and each result's network tag, never an
  address).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from solrace.core import fairplay
from solrace.core.errors import Code
from solrace.core.fairplay import Signals
from solrace.core.identity import Who
from solrace.core.race import Race
from solrace.core.race_parts import RaceError
from solrace.core.racer import Racer
from solrace.core.scoring import rated
from solrace.settings import (
    EARLY_RESIGN_MS,
    FAIRPLAY_LINE_WAIT,
    FAIRPLAY_RESOLVES,
    FAIRPLAY_TRACK_WAIT,
    MAX_PARS,
    PAUSE_AFTER_WALKOUTS,
    WALKOUT_WINDOW_MS,
)
from solrace.store.player_base import PlayerStore

log = logging.getLogger(__name__)

#: The solver's winning line from a deal and the nodes its search took.
Line = tuple[list[str], int]
#: ... asked for a deal (None: not won within its budget).
LineOf = Callable[[str, int], Awaitable[Line | None]]
#: The solver's winning line from the position after ``moves`` of a deal (None: none found
#: within its budget); ``key``: the result it is for (its turn in the solver's queue).
LineFrom = Callable[[str, int, list[str], str], Awaitable[list[str] | None]]
#: The "client address" of fair play's re-solves in the solver's queue (never an address).
FAIRPLAY_CLIENT = "fair-play"


class Referee:
    """See the module docstring. ``line(game, seed)``: the solver's line from a deal (None:
    no solver here); ``line_from(game, seed, moves, key)``: its line from a position (None: no
    re-solves, ``tracking`` stays unknown); ``clock()``: unix ms."""

    def __init__(self, store: PlayerStore, line: LineOf | None, clock: Callable[[], int],
                 wait: float = FAIRPLAY_LINE_WAIT, line_from: LineFrom | None = None,
                 track_wait: float = FAIRPLAY_TRACK_WAIT,
                 resolves: int = FAIRPLAY_RESOLVES,
                 closure: Callable[[str], Awaitable[dict[str, Any] | None]] | None = None
                 ) -> None:
        self.store = store
        #: The closure of a player's account (``{"at", "reason"}``), if it is closed for fair
        #: play: the moderation store's answer, on every process alike.
        self.closure = closure
        self.line = line
        self.line_from = line_from
        self.clock = clock
        self.wait = wait
        self.track_wait = track_wait
        self.resolves = resolves
        self._lines: OrderedDict[tuple[str, int], asyncio.Future[Line | None]] = OrderedDict()

    async def review(self, race: Race) -> dict[str, Signals]:
        """The signals of every player's result in a finished race (by racer)."""
        out: dict[str, Signals] = {}
        racers = [r for r in race.racers.values() if r.pid is not None and not r.bot]
        if not racers or race.started_at is None:
            return out
        daily = race.options.kind == "daily"
        line: Line | None = None
        if any(r.finished_at is not None for r in racers) and (rated(race) or daily):
            line = await self._line(race.game, race.seed)
        moves, nodes = line if line is not None else (None, None)
        for racer in racers:
            scouted = daily and await self._scouted(
                race, racer.pid or "", racer.net,
                racer.finished_at or race.finished_at or self.clock())
            out[racer.player] = fairplay.signals(
                race.game, race.seed, racer.actions, racer.times, race.started_at,
                racer.finished_at is not None, racer.hints, moves, scouted, daily, nodes)
        worth = [r for r in racers if fairplay.worth_tracking(out[r.player], daily)]
        if moves and worth and self.line_from is not None:
            deadline = asyncio.get_running_loop().time() + self.track_wait
            trackers = await asyncio.gather(*(self._track(race, r, moves, deadline)
                                              for r in worth))
            for racer, tracker in zip(worth, trackers, strict=True):
                out[racer.player] = fairplay.tracked(out[racer.player], tracker, daily)
        return out

    async def _track(self, race: Race, racer: Racer, line: Sequence[str], deadline: float
                     ) -> fairplay.Tracker:
        """Walk a :class:`~solrace.core.fairplay.Tracker` along ``racer``'s moves, asking the
        solver for each line it wants, until ``deadline`` (the loop's time)."""
        assert self.line_from is not None
        loop = asyncio.get_running_loop()
        tracker = fairplay.Tracker(fairplay.final_moves(racer.actions), line, self.resolves)
        key = f"{race.race}/{racer.player}"
        while (at := tracker.walk()) is not None:
            found = None
            left = deadline - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError
                found = await asyncio.wait_for(
                    self.line_from(race.game, race.seed, tracker.moves[:at], key), left)
            except TimeoutError:
                tracker.stop()  # the rest is walked with no line: a lower bound
            except Exception:
                log.exception("cannot re-solve a position of a %s deal", race.game)
            tracker.give(found)
        return tracker

    async def _line(self, game: str, seed: int) -> Line | None:
        """The solver's line from the deal, waited for at most ``wait`` seconds (one solve per
        deal: racers of one deal share it)."""
        if self.line is None:
            return None
        key = (game, seed)
        future = self._lines.get(key)
        if future is None or (future.done() and future.exception() is not None):
            future = asyncio.ensure_future(self.line(game, seed))
            self._lines[key] = future
            while len(self._lines) > MAX_PARS:
                old = self._lines.popitem(last=False)[1]
                if not old.done():
                    old.cancel()
        self._lines.move_to_end(key)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.wait)
        except (TimeoutError, asyncio.CancelledError):
            return None
        except Exception:
            log.exception("cannot get the solver's line of a %s deal", game)
            return None

    async def _scouted(self, race: Race, pid: str, net: str, until: int) -> bool:
        """Did another player from this network open an attempt at this daily deal before
        ``until`` (this racer's finish), whether or not he ended it? A scout who has seen the
        cards need not resign: in Yukon he learns all 21 hidden ones in seconds and may leave
        his attempt running while a second account plays the line. (Results are looked at
        too: attempts opened before their network was kept with them.)"""
        day = race.options.day
        if not net or day is None:
            return False
        with contextlib.suppress(Exception):
            for other in [*await self.store.daily_lookers(race.game, day),
                          *await self.store.daily_results(race.game, day)]:
                if other.get("player") != pid and other.get("net") == net \
                        and int(other.get("at") or 0) <= until:
                    return True
        return False

    async def rated_gate(self, who: Who) -> None:
        """Refuse a rated seek or bot race of an account closed for fair play (RaceError
        ``closed``: for good), or while the player's rated pairing is paused (RaceError
        ``paused``, saying what he did and until when): see
        :func:`solrace.core.fairplay.pause_until`."""
        if self.closure is not None:
            closed = await self.closure(who.id)
            if closed is not None:
                raise RaceError(Code.CLOSED, "your account was closed for fair play: it plays "
                                "no rated race any more (casual races are open)",
                                reason=closed.get("reason"))
        until = await self.paused_until(who.id)
        if until is not None:
            minutes = max(1, round((until - self.clock()) / 60_000))
            early = EARLY_RESIGN_MS // 1000
            raise RaceError(Code.PAUSED, f"you walked out of {PAUSE_AFTER_WALKOUTS} or more "
                            f"rated races within a day (left before your third move, or "
                            f"resigned within {early} s of the start): rated play is paused for "
                            f"{minutes} more minute{'s' if minutes > 1 else ''} (casual races "
                            f"are open)", until=until)

    async def paused_until(self, pid: str) -> int | None:
        now = self.clock()
        return fairplay.pause_until(await self.store.walkouts(pid, now - WALKOUT_WINDOW_MS),
                                    now)

