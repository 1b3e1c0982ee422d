"""What a process does when its store fails a write: the races the lost batch touched are
forgotten and rebuilt from the store in the background (commands for them get ``unavailable``
meanwhile), and a small write is tried every second until the store takes writes again.

:class:`StoreWatch` does not know the hub: it is given the store, the supervisor that runs its
jobs, and the few things it does to the races held (forget one, adopt one rebuilt, ask whether
this process runs it), the health callback, and the map of races being rebuilt."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from solrace.core.race import Race
from solrace.runtime.supervisor import Supervisor
from solrace.settings import PROBE_INTERVAL
from solrace.store.base import Store

log = logging.getLogger("solrace.service.hub")

#: A rebuild or a probe that takes longer than this (seconds) is given up and tried again.
JOB_TIMEOUT = 30.0


class StoreWatch:
    """See the module docstring."""

    def __init__(self, store: Store, supervisor: Supervisor, *,
                 forget: Callable[[str], Race | None], adopt: Callable[[Race], None],
                 owns: Callable[[str], bool], health: Callable[[bool], object],
                 reloading: dict[str, asyncio.Future[None]],
                 forget_unit: Callable[[str], bool] = lambda unit: False,
                 load_unit: Callable[[str], Awaitable[object]] | None = None) -> None:
        self.store = store
        self.supervisor = supervisor
        self.forget = forget
        self.adopt = adopt
        #: Let a tournament or an arena go (True if it was held) and load it again.
        self.forget_unit = forget_unit
        self.load_unit = load_unit
        self.owns = owns
        self.health = health
        self.reloading = reloading
        self._probing = False

    def failed(self, race_ids: set[str], exc: BaseException) -> None:
        """A commit failed: forget the races, tournaments and arenas it touched and rebuild
        them from the store, and try a small write every second until the store takes writes
        again. A unit is rebuilt as a race is: what it decided in the lost batch (an arena's
        result, a pairing) was applied in memory but is not durable, and its next entries
        would be written after a hole (SQLite) or refused (Redis: CONFLICT) — and a result
        taken in memory only is a result lost."""
        if not self._probing:
            self.health(False)
        self.start()
        for race_id in race_ids:
            if not self.owns(race_id):
                continue  # another process runs it now (the write was fenced)
            if self.load_unit is not None and self.forget_unit(race_id):
                if race_id not in self.reloading:
                    future = asyncio.get_running_loop().create_future()
                    self.reloading[race_id] = future
                    self.supervisor.spawn(self._reload_unit(race_id, future),
                                          f"rebuild unit {race_id}")
                continue
            race = self.forget(race_id)
            if race is not None and race_id not in self.reloading:
                future = asyncio.get_running_loop().create_future()
                self.reloading[race_id] = future
                self.supervisor.spawn(self._reload(race_id, future), f"rebuild race {race_id}")

    def start(self) -> None:
        """Try a small write every second until the store takes writes again."""
        if not self._probing:
            self._probing = True
            asyncio.get_running_loop().call_later(PROBE_INTERVAL, self._probe)

    def _probe(self) -> None:
        self.supervisor.spawn(self._probe_once(), "probe the store", timeout=JOB_TIMEOUT)

    async def _probe_once(self) -> None:
        try:
            ok = await self.store.probe()
        except Exception:
            ok = False
        if ok:
            self._probing = False
            log.warning("the store takes writes again")
            self.health(True)
            return
        asyncio.get_running_loop().call_later(PROBE_INTERVAL, self._probe)

    async def _reload_unit(self, unit: str, future: asyncio.Future[None]) -> None:
        """Rebuild a tournament or an arena (with its races) from the store (``load_unit``
        must not wait for :attr:`reloading`, as a command does). Not before the
        store may take writes again: taken up, it writes what fell due (a result it has not
        taken), and a write that fails again lets it go again."""
        assert self.load_unit is not None
        try:
            while True:
                if not self.store.healthy:
                    await asyncio.sleep(PROBE_INTERVAL)
                try:
                    async with asyncio.timeout(JOB_TIMEOUT):
                        await self.load_unit(unit)
                    break
                except Exception as exc:
                    log.warning("cannot rebuild %s yet: %s", unit, exc)
                    await asyncio.sleep(PROBE_INTERVAL)
            log.warning("%s rebuilt from the store after a failed write", unit)
        finally:
            del self.reloading[unit]
            future.set_result(None)

    async def _reload(self, race_id: str, future: asyncio.Future[None]) -> None:
        """Rebuild a race from the store, trying again every second while the store cannot
        be read (commands for it get ``unavailable`` meanwhile)."""
        try:
            while True:
                try:
                    async with asyncio.timeout(JOB_TIMEOUT):
                        race = await self.store.load(race_id)
                    break
                except Exception as exc:
                    log.warning("cannot rebuild race %s yet: %s", race_id, exc)
                    await asyncio.sleep(PROBE_INTERVAL)
            if race is not None and self.owns(race_id):
                self.adopt(race)
                log.warning("race %s rebuilt from the store after a failed write", race_id)
        finally:
            del self.reloading[race_id]
            future.set_result(None)
