"""Races loaded from the store into the hub (solrace.service.loading), on a real SQLite store
and a real server: a copy read while another process ran the race is never adopted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from solrace.core.race import Race
from solrace.settings import SEAT_GRACE_S

from tests.solrace.conftest import Server, T, serving
from tests.solrace.test_play import Clock, app_for, named, sit
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


async def test_a_seat_still_open_when_the_server_stopped_gets_its_grace_again(
        tmp_path: Path) -> None:
    """Ann and Cat were paired; Ann took her seat, then the server stopped and came back
    after the seat's grace had run out on the clock. Nobody was ever told the seats closed,
    so Cat is not a no-show: he still takes his seat, and the race is played."""
    seek = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}
    app = app_for(tmp_path, Clock())
    await app.start()
    async with serving(app) as srv:
        ann, cat = await named(srv, "Ann"), await named(srv, "Cat")
        await cat.request(seek)
        race = await sit(ann, await ann.request(seek))
        token = (await cat.next_event("paired", timeout=T))["token"]
    await app.stop()
    app.store.close()
    later = Clock()
    later.offset = (SEAT_GRACE_S + 5) * 1000
    app = app_for(tmp_path, later)
    await app.start()
    async with serving(app) as srv:
        cat = await named(srv, "Cat's phone")  # a new connection: his seat's token is enough
        await cat.join(race, token=token)  # loads the race: refused (no_show) before the fix
        state = await cat.wait_state(race, T)
        assert state["type"] == "state"
        held = app.hub.get(race)
        assert held is not None and held.status in ("countdown", "running")
        assert not any(r.resigned for r in held.racers.values())
    await app.stop()
    app.store.close()
