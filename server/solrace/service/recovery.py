"""The hub's answer to a store that failed a write: the races the lost batch touched are dropped
and rebuilt from the store in the background (commands for them get ``unavailable``
meanwhile), and a small write is tried every second until the store takes writes again."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from solrace.settings import PROBE_INTERVAL

if TYPE_CHECKING:
    from solrace.service.hub import Hub

log = logging.getLogger("solrace.service.hub")



class StoreWatch:
    """See the module docstring."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._probing = False
        self._tasks: set[asyncio.Future[None]] = set()

    def failed(self, race_ids: set[str], exc: BaseException) -> None:
        """A commit failed: drop the races it touched and rebuild them from the store, and
        try a small write every second until the store takes writes again."""
        hub = self.hub
        if hub.on_health is not None and not self._probing:
            hub.on_health(False)
        self.start()
        for race_id in race_ids:
            if not hub.owns(race_id):
                continue  # another process runs it now (the write was fenced)
            race = hub.races.pop(race_id, None) or hub.finished.pop(race_id, None)
            hub.deadlines.cancel(race_id)
            for throttle in hub.throttles.values():
                throttle.forget(race_id)
            if race is not None and race_id not in hub.reloading:
                future = asyncio.get_running_loop().create_future()
                hub.reloading[race_id] = future
                task = asyncio.ensure_future(self._reload(race_id, future))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def start(self) -> None:
        """Try a small write every second until the store takes writes again."""
        if not self._probing:
            self._probing = True
            asyncio.get_running_loop().call_later(PROBE_INTERVAL, self._probe)

    def _probe(self) -> None:
        task = asyncio.ensure_future(self._probe_once())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _probe_once(self) -> None:
        hub = self.hub
        try:
            ok = await hub.store.probe()
        except Exception:
            ok = False
        if ok:
            self._probing = False
            log.warning("the store takes writes again")
            if hub.on_health is not None:
                hub.on_health(True)
            return
        asyncio.get_running_loop().call_later(PROBE_INTERVAL, self._probe)

    async def _reload(self, race_id: str, future: asyncio.Future[None]) -> None:
        """Rebuild a race from the store, trying again every second while the store cannot
        be read (commands for it get ``unavailable`` meanwhile)."""
        hub = self.hub
        try:
            while True:
                try:
                    race = await hub.store.load(race_id)
                    break
                except Exception as exc:
                    log.warning("cannot rebuild race %s yet: %s", race_id, exc)
                    await asyncio.sleep(PROBE_INTERVAL)
            if race is not None and hub.owns(race_id):
                hub.adopt(race)
                log.warning("race %s rebuilt from the store after a failed write", race_id)
        finally:
            del hub.reloading[race_id]
            future.set_result(None)
