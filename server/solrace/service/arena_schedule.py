"""The house's arenas: a schedule the server keeps by itself, and the list of arenas the pages
show (``GET /api/arenas``).

**The default schedule** (``solrace serve --arenas on``, the default; ``off`` keeps none):
every hour, one arena of each game, 30 minutes of pairing with races of 5 minutes (Quadruple
Canfield's 10: its deals are longer) — Scotch Patience at :00, Yukon at :20, Quadruple Canfield
at :40 —, so that an arena is always running or about to start and each game has its own hour;
and every day at 18:00 UTC the *Daily Arena*, 90 minutes, its game by weekday. Why so: a site
with few players at a time needs them in the same place, not spread over many arenas at once;
staggered starts keep one open to join at any time, and a longer daily one gives a fixed meeting
time. An arena is created :data:`LOOKAHEAD_MS` before it starts, so that the home page shows it
with its countdown and players may join early.

Every process keeps the schedule: an arena's id is made from its slot (``h`` + game letter +
its start, ``hs2612041800``), so two processes that create the same arena write the same unit,
and the store's lease lets one of them own it (the other is fenced and lets it go).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from solrace.core.arena import Arena, ArenaSettings
from solrace.core.tournament import TOutcome

if TYPE_CHECKING:
    from solrace.service.hub import Hub

log = logging.getLogger(__name__)

#: Hourly arenas: (game, minutes past the hour, minutes of pairing, race time limit in s).
HOURLY = (("scotch", 0, 30, 300), ("yukon", 20, 30, 300),
          ("quadruple-canfield", 40, 30, 600))
#: The daily arena: its hour (UTC), minutes of pairing, and its game by weekday (Monday first).
DAILY_HOUR, DAILY_MINUTES = 18, 90
DAILY_GAMES = ("scotch", "yukon", "quadruple-canfield", "scotch", "yukon",
               "quadruple-canfield", "scotch")
#: How long before its start an arena of the schedule is created (ms).
LOOKAHEAD_MS = 2 * 3600 * 1000
#: Seconds between two looks at the schedule.
EVERY = 20.0
#: Seconds the list of arenas is kept before it is read again.
LIST_TTL = 2.0
HOUR_MS = 3600 * 1000
TITLES = {"scotch": "Scotch", "yukon": "Yukon", "quadruple-canfield": "Quadruple Canfield"}


def slot_id(game: str, starts_at: int) -> str:
    stamp = dt.datetime.fromtimestamp(starts_at / 1000, dt.UTC).strftime("%y%m%d%H%M")
    return f"h{game[0]}{stamp}"


def slots(now: int, ahead: int = LOOKAHEAD_MS) -> list[tuple[str, ArenaSettings]]:
    """The schedule's arenas that run now or start within ``ahead`` ms: (id, settings)."""
    out = []
    hour = now - now % HOUR_MS
    for h in range(hour - HOUR_MS, now + ahead + 1, HOUR_MS):
        for game, minute, minutes, limit in HOURLY:
            start = h + minute * 60_000
            s = ArenaSettings(f"Hourly {TITLES[game]} Arena", game, start, minutes, limit,
                              True, house=True)
            out.append((slot_id(game, start), s))
        when = dt.datetime.fromtimestamp(h / 1000, dt.UTC)
        if when.hour == DAILY_HOUR:
            game = DAILY_GAMES[when.weekday()]
            s = ArenaSettings(f"Daily {TITLES[game]} Arena", game, h, DAILY_MINUTES,
                              600 if game == "quadruple-canfield" else 300, True, house=True)
            out.append((slot_id(game, h) + "d", s))
    return [(aid, s) for aid, s in out if s.ends_at > now and s.starts_at <= now + ahead]


class ArenaSchedule:
    """See the module docstring. ``enabled`` False: no house arena (players' ones are still
    listed)."""

    def __init__(self, hub: Hub, enabled: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.hub = hub
        self.enabled = enabled
        self.clock = clock
        self._listed: tuple[float, list[Arena]] | None = None
        self._task: asyncio.Task[None] | None = None

    async def ensure(self) -> int:
        """Create the schedule's arenas that should exist by now and do not; how many."""
        if not self.enabled:
            return 0
        hub = self.hub
        made = 0
        now = hub.clock()
        for aid, settings in slots(now):
            if aid in hub.arenas or not hub.writable:
                continue
            if await hub.store.load_tournament(aid) is not None:
                continue
            a = Arena(aid, settings, now)
            director = hub.arena_director
            director.hold(a)
            director.record(a, TOutcome())
            await hub.store.index_arena(aid, settings.ends_at)
            made += 1
            log.info("house arena %s (%s) starts at %s", aid, settings.name, settings.starts_at)
        return made

    async def listed(self) -> list[Arena]:
        """The arenas to list: those of the schedule and every arena created lately, held
        here or read from the store (another process runs it), kept :data:`LIST_TTL` s."""
        now = self.clock()
        if self._listed is not None and now - self._listed[0] < LIST_TTL:
            return self._listed[1]
        hub = self.hub
        ids = set(hub.arenas)
        try:
            ids |= set(await hub.store.arena_ids(hub.clock() - 24 * HOUR_MS))
        except Exception as exc:
            log.warning("cannot list the arenas of the store: %s", exc)
        out = []
        for aid in sorted(ids):
            a = hub.arenas.get(aid)
            if a is None:
                loaded = await hub.store.load_tournament(aid)
                a = loaded if isinstance(loaded, Arena) else None
            if a is not None:
                out.append(a)
        self._listed = (now, out)
        return out

    def start(self) -> None:
        self._task = self.hub.supervisor.spawn(self._loop(), "arena schedule")

    async def _loop(self) -> None:
        while True:
            try:
                await self.ensure()
            except Exception:
                log.exception("the arena schedule failed")
            await asyncio.sleep(EVERY)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
