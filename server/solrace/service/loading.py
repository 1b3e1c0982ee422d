"""Races and tournaments back from the store: the part of the hub that loads.

A race a command names that is not in memory is loaded — rebuilt from its log away from the
event loop, one load per race however many ask — then caught up with the clock (what fell due
while nobody ran it happens now, and is recorded) and adopted. A tournament or an arena comes
back with every race of it. At a start the hub takes back everything the store says it runs
(:meth:`Loading.recover`). A command that waits for something (:class:`Pending`: a race not
loaded, winnable deals, a hint) has it done here (:meth:`Loading.prepare`), then is dispatched
again by the hub.

:class:`Loading` is a part of :class:`solrace.service.hub.Hub` (its base class): it names
what it uses of the hub below, typed, and holds nothing of its own but the loads under way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from solrace.core.arena import Arena
from solrace.core.effects import NeedsDeals, NeedsHint, NotLoaded, Pending
from solrace.core.errors import Code
from solrace.core.race import Race
from solrace.core.race_parts import Outcome, RaceError
from solrace.core.units import Unit, unit_of
from solrace.runtime.supervisor import Supervisor
from solrace.service.arenas import ArenaDirector
from solrace.service.organizer import Organizer
from solrace.service.recovery import StoreWatch
from solrace.settings import ADOPT_LOADS, SEAT_GRACE_S
from solrace.solver.assist import Assist
from solrace.store.base import Store

log = logging.getLogger(__name__)

#: Races of an arena taken over loaded at once in the background (see _load_races).
BACKGROUND_LOADS = 4


class Scores(Protocol):
    """The scorer of finished races (solrace.service.scoring)."""

    def finished(self, race: Race) -> None: ...

    async def known(self, race_id: str) -> dict[str, Any] | None: ...


class Loading:
    """Loads races and tournaments from the store into the hub (module docstring)."""

    store: Store
    supervisor: Supervisor
    assist: Assist
    clock: Callable[[], int]
    organizer: Organizer
    arena_director: ArenaDirector
    watch: StoreWatch
    scorer: Scores | None
    owns: Callable[[str], bool]
    reloading: dict[str, asyncio.Future[None]]
    _loading: dict[str, asyncio.Task[Race | None]]
    _loading_units: dict[str, asyncio.Task[Unit | None]]

    if TYPE_CHECKING:  # the hub's own, used here
        @property
        def arenas(self) -> Mapping[str, Arena]: ...

        def get(self, race_id: str) -> Race | None: ...

        def adopt(self, race: Race) -> None: ...

        def record(self, race: Race, out: Outcome) -> None: ...

    async def load(self, race_id: str) -> Race | None:
        """A race from memory or, rebuilt away from the event loop, from the store (one load
        per race at a time however many ask); None if there is no such race."""
        race = self.get(race_id)
        if race is not None:
            return race
        reloading = self.reloading.get(race_id)
        if reloading is not None:
            await reloading
            return self.get(race_id)
        loading = self._loading.get(race_id)
        if loading is None:
            loading = self.supervisor.spawn(self._load(race_id), f"load race {race_id}")
            self._loading[race_id] = loading
            loading.add_done_callback(lambda _: self._loading.pop(race_id, None))
        return await asyncio.shield(loading)

    async def _load(self, race_id: str) -> Race | None:
        """Read and adopt in one task: a load that began once the read was over, but before
        its callers had adopted the race, would read it again and come back with a copy
        older than what this process wrote of it meanwhile."""
        while True:
            owned = self.owns(race_id)
            race = await self.store.load(race_id)
            if race is None:
                return None
            held = self.get(race_id)
            if held is not None:  # created or rebuilt meanwhile
                return held
            if owned or race.status == "finished" or not self.owns(race_id):
                break
            # Read while another process ran it, and this one runs it now: the copy may lack
            # what the other wrote after the read (adopted, its next write is a CONFLICT).
        if race.status == "finished" and self.scorer is not None:
            try:
                race.ratings = await self.scorer.known(race_id)
            except Exception:
                log.exception("cannot read the ratings of race %s", race_id)
            held = self.get(race_id)
            if held is not None:
                return held
        if race.status != "finished" and not self.owns(race_id):
            return race  # another process runs it: a copy as it was just now, not held here
        self.catch_up(race)
        self.adopt_loaded(race)
        return race

    def adopt_loaded(self, race: Race) -> None:
        """Hold a race rebuilt from the store; a race of an arena held here joins it (an
        arena is adopted before its races are loaded: :meth:`adopt_tournament`)."""
        self.adopt(race)
        a = self.arenas.get(unit_of(race.race))
        if a is not None:
            self.arena_director.adopt_race(a, race)

    def catch_up(self, race: Race) -> None:
        """A race rebuilt from its log: what its clock says happened while nobody ran it
        (the countdown's end, the time limit) happens now, and is recorded — but for seats
        still open, whose grace starts again (:meth:`Race.reseat`)."""
        if race.status == "finished":
            return
        now = self.clock()
        out = race.reseat(now + SEAT_GRACE_S * 1000, now)
        out.extend(race.tick(now))
        if out.log or out.events or out.finished:
            self.record(race, out)

    async def prepare(self, pending: Pending) -> bool:
        """Do what a command was waiting for (load its race or tournament, take winnable deals
        from the pool, work out a hint); False if the race or tournament does not exist.
        RaceError if it cannot be done."""
        if isinstance(pending, NotLoaded):
            if pending.tournament:
                return await self.load_tournament(pending.race) is not None
            return await self.load(pending.race) is not None
        if isinstance(pending, NeedsDeals):
            deals = self.assist.deals
            await deals.claim(pending.game, pending.n)
            if deals.ready(pending.game) < pending.n:
                ready = deals.ready(pending.game)
                raise RaceError(Code.UNAVAILABLE, f"{ready} winnable {pending.game} deals are "
                                f"ready, {pending.n} needed: the server is solving more, try "
                                "again in a minute")
            return True
        assert isinstance(pending, NeedsHint)
        await self.assist.hint(pending)
        return True

    def held_unit(self, tid: str) -> Unit | None:
        """The tournament or arena held here, if any (never reads the store)."""
        return self.organizer.tournaments.get(tid) or self.arenas.get(tid)

    async def load_tournament(self, tid: str, rebuilding: bool = False) -> Unit | None:
        """A tournament (or an arena) from memory or, with its races, from the store; None
        if unknown. One load per unit at a time however many ask: a takeover and a command
        that came for the unit meanwhile adopt it once (two copies would each take the
        result of a race that ended while nobody ran it, and both write). While it is
        rebuilt after a failed write (:class:`StoreWatch`, which loads it ``rebuilding``),
        that rebuild is waited for."""
        reloading = None if rebuilding else self.reloading.get(tid)
        if reloading is not None:
            await reloading
        while True:
            held = self.held_unit(tid)
            if held is not None:
                return held
            loading = self._loading_units.get(tid)
            if loading is None or loading.done():
                loading = self.supervisor.spawn(self._load_tournament(tid),
                                                f"load tournament {tid}")
                self._loading_units[tid] = loading
                loading.add_done_callback(
                    lambda done: self._loading_units.pop(tid, None)
                    if self._loading_units.get(tid) is done else None)
            t = await asyncio.shield(loading)
            if t is None or self.held_unit(tid) is not None or not self.owns(tid):
                return self.held_unit(tid) or t
            # Read while another process ran it, and this one runs it now: read it again.

    async def _load_tournament(self, tid: str) -> Unit | None:
        owned = self.owns(tid)  # a copy read before this process ran it may lack entries
        t = await self.store.load_tournament(tid)
        if t is None:
            return None
        held = self.held_unit(tid)
        if held is not None:
            return held
        if not owned or not self.owns(tid):
            return t  # another process ran it: a copy as it was just now
        await self.adopt_tournament(t)
        return t

    async def adopt_tournament(self, t: Unit) -> None:
        """Run a tournament (or an arena) rebuilt from the store here, with every race of it
        (loaded from the store when not held): seats and shared deals rebuilt, and what fell
        due while nobody ran it (a round to start, entry to close, a pairing) happens at once,
        by its timer."""
        if isinstance(t, Arena):
            # Held at once, its races after: those who wait are paired again now, not once
            # every race under way is rebuilt (500 at 1,000 entrants: seconds of CPU). A race
            # joins it as it is loaded, by this or by a command for it (load, adopt_race).
            held = [self.get(r) for r in self.arena_director.race_ids(t)]
            self.arena_director.adopt(t, [r for r in held if r is not None])
            self.supervisor.spawn(self._load_races(t), f"load the races of arena {t.tid}")
            return
        races = await self._load_all(self.organizer.race_ids(t))
        self.organizer.adopt(t, races)

    async def _load_all(self, ids: list[str]) -> list[Race]:
        """Races from memory or the store, ADOPT_LOADS at a time (their round trips
        overlap; a bound keeps the pool's connections for the others)."""
        gate = asyncio.Semaphore(ADOPT_LOADS)

        async def load(race_id: str) -> Race | None:
            async with gate:
                return await self.load(race_id)

        return [r for r in await asyncio.gather(*map(load, ids)) if r is not None]

    async def _load_races(self, a: Arena) -> None:
        """The races under way of an arena adopted without them, loaded in the background
        (each joins the arena as it comes: :meth:`load`); stops if the arena is let go."""
        # After the pairing the adoption made is written, and a few at a time: each race is
        # rebuilt in a thread, and with many such threads at once the loop (the pairing, the
        # commands of the dead owner's entrants coming back) got a small share of the GIL. A
        # race its racers ask for is loaded at once by their command, not in this queue.
        with contextlib.suppress(Exception):  # a failed commit: its own watch rebuilds
            await self.store.flushed()
        ids = [r for r in self.arena_director.race_ids(a) if self.get(r) is None]
        began = asyncio.get_running_loop().time()
        for i in range(0, len(ids), BACKGROUND_LOADS):
            if self.arenas.get(a.tid) is not a:
                return
            await self._load_all(ids[i:i + BACKGROUND_LOADS])
        if ids:
            log.warning("arena %s: its %d races loaded in %.2f s", a.tid, len(ids),
                        asyncio.get_running_loop().time() - began)

    async def recover(self) -> int:
        """Take back what the store says this process runs (every unfinished race and
        tournament, for a store of one process), catching up with the clock; the number of
        races."""
        if not self.store.healthy:
            self.watch.start()
        now = self.clock()
        races = await self.store.startup_races()
        for race in races:
            self.catch_up(race)
            self.adopt(race)
            for racer in race.racers.values():
                racer.offline_since = now  # nobody is connected yet after a restart
        for t in await self.store.startup_tournaments():
            await self.adopt_tournament(t)
        self.store.commit()
        return len(races)
