"""Races loaded from the store into the hub (solrace.service.loading), on a real SQLite store
and a real server: a copy read while another process ran the race is never adopted."""

from __future__ import annotations

from typing import Any

from solrace.core.race import Race

from tests.solrace.conftest import Server
from tests.solrace.test_server import running_race


async def test_a_copy_read_before_the_race_was_ours_is_read_again(server: Server) -> None:
    """With several processes, a load may begin while another process runs the race and end
    once this one has taken it over: that copy may lack what the other wrote after the read
    (adopted, this process's next write of it fails: CONFLICT). It is read again."""
    hub = server.app.hub
    race_id, a, _b, _ = await running_race(server)
    await a.move(race_id, a.states[race_id]["legal"][0])
    await hub.store.flushed()
    hub.forget(race_id)
    ours = [False]  # another process runs the race until the first read is done
    reads: list[Race | None] = []
    load = hub.store.load

    async def read(rid: str) -> Race | None:
        race = await load(rid)
        reads.append(race)
        ours[0] = True  # taken over while that read was under way
        return race

    hub.store.load = read  # type: ignore[method-assign]
    hub.owns = lambda rid: ours[0]
    held: Any = await hub.load(race_id)
    assert len(reads) == 2 and held is reads[1] is hub.get(race_id)
    assert reads[0] is not held
