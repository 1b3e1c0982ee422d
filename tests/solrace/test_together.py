"""Playing together, over real WebSockets on one process (issue 29): a rematch in one click (both
ask, both are seated in a new race at once), a quick race's seek that survives a page reload,
challenges by name and by link (accepted, declined, expired, cancelled, bounded), and house
bots a tournament's host adds to it. The same over two processes on Redis:
test_cluster_together.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server, T
from tests.solrace.test_play import Clock, account, named, playing, visitor

SEEK = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}


@pytest.fixture
async def play(tmp_path: Path) -> AsyncIterator[tuple[Server, Clock]]:
    async for served in playing(tmp_path):
        yield served


async def refused(client: RaceClient, msg: dict[str, Any]) -> str:
    with pytest.raises(ServerError) as err:
        await client.request(msg)
    return str(err.value.code)


async def told(client: RaceClient, kind: str, **fields: Any) -> dict[str, Any]:
    """The next ``kind`` event with these fields (earlier ones are skipped)."""
    while True:
        msg = await client.next_event(kind, timeout=T * 2)
        if all(msg.get(k) == v for k, v in fields.items()):
            return msg


async def sit(race: str, *seats: tuple[RaceClient, dict[str, Any]]) -> None:
    """Each racer takes his seat (his ``paired``) and the race runs."""
    for client, paired in seats:
        await client.join(race, token=paired["token"])
    for client, _ in seats:
        await client.wait_state(race, T * 2)


async def three_moves(race: str, *clients: RaceClient) -> None:
    """Three moves each: every racer counts in the race (an abort rates nobody)."""
    for client in clients:
        for _ in range(3):
            legal = client.states[race]["legal"]
            await client.move(race, next((m for m in legal if ">f" in m), legal[0]))


async def quick_race(ann: RaceClient, bob: RaceClient) -> tuple[str, dict[str, Any],
                                                                 dict[str, Any]]:
    """Ann and Bob paired into a quick race, seated, racing: (race, Ann's and Bob's paired)."""
    assert (await ann.request(SEEK))["type"] == "seeking"
    paired_bob = await bob.request(SEEK)
    paired_ann = await ann.next_event("paired", timeout=T)
    race = paired_bob["race"]
    await sit(race, (ann, paired_ann), (bob, paired_bob))
    return race, paired_ann, paired_bob


# ------------------------------------------------------------------ rematch in one click
async def test_rematch_in_one_click_seats_both_in_a_new_race(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, bob = await account(srv, "Ann"), await account(srv, "Bob")
    race, paired_ann, _ = await quick_race(ann, bob)
    await three_moves(race, ann, bob)
    spectator = await srv.client()
    await spectator.watch(race)
    assert await refused(ann, {"type": "rematch", "race": race}) == "race_not_over"
    await ann.resign(race)
    await bob.next_event("race_over", timeout=T)
    # Ann wants one: she and everyone following hear it; no race yet.
    first = await ann.request({"type": "rematch", "race": race})
    assert first["next"] is None and first["wants"] == [paired_ann["player"]]
    offer = await bob.next_event("rematch", timeout=T)
    assert offer["next"] is None and offer["by"] == "Ann"
    assert (await spectator.next_event("rematch", timeout=T))["by"] == "Ann"
    snap = await spectator.watch(race)
    assert snap["rematch_wants"] == [paired_ann["player"]]
    assert await refused(spectator, {"type": "rematch", "race": race}) == "forbidden"
    # Bob wants it too: a new race with both seated, each told his own seat only.
    second = await bob.request({"type": "rematch", "race": race})
    new = second["next"]
    assert new and new != race and "host_token" not in second
    seat_ann = await ann.next_event("paired", timeout=T)
    seat_bob = await bob.next_event("paired", timeout=T)
    assert seat_ann["race"] == seat_bob["race"] == new
    assert seat_ann["rematch"] == race and seat_ann["kind"] == "quick"
    assert seat_ann["time_limit"] == 300 and seat_ann["opponents"][0]["name"] == "Bob"
    assert seat_ann["token"] != seat_bob["token"]
    told = await spectator.next_event("rematch", "paired", timeout=T)
    assert told == {"type": "rematch", "race": race, "next": new, "by": "Bob"}
    # No lobby, no ready: it starts once both sat.
    await sit(new, (ann, seat_ann), (bob, seat_bob))
    snap = await spectator.watch(new)
    assert snap["options"]["kind"] == "quick" and snap["options"]["rated"] is True
    assert [p["name"] for p in snap["players"]] == ["Ann", "Bob"]
    # Asking again gives the same race back (with the seat of one who has not sat yet).
    assert (await ann.request({"type": "rematch", "race": race}))["next"] == new


async def test_no_thanks_and_a_racer_who_left_drop_the_rematch(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, bob = await account(srv, "Ann"), await account(srv, "Bob")
    race, _, _ = await quick_race(ann, bob)
    await ann.resign(race)
    await bob.next_event("race_over", timeout=T)
    await ann.request({"type": "rematch", "race": race})
    await bob.next_event("rematch", timeout=T)
    no = await bob.request({"type": "rematch", "race": race, "want": False})
    assert no["declined"] == "Bob" and no["next"] is None
    await told(ann, "rematch", declined="Bob")
    # Ann asks again and leaves; Bob's click then only offers it (she would not come).
    await ann.request({"type": "rematch", "race": race})
    await ann.close()
    await bob.next_event("rematch", timeout=T)
    again = await bob.request({"type": "rematch", "race": race})
    assert again["next"] is None and again["wants"] == ["p2"]


# ------------------------------------------------------------ a seek outlives a reload
async def reload(srv: Server, client: RaceClient, key: str, address: str) -> RaceClient:
    """The page of ``client`` reloads: its socket closes, a new one opens with the cookie."""
    await client.close()
    return await srv.client(additional_headers={"Cookie": f"sr_player={key}",
                                                "X-Forwarded-For": address})


async def test_a_reload_keeps_the_seek_and_its_time_waited(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, key = await visitor(srv, "192.0.2.10")
    await ann.request({"type": "set_name", "name": "Ann"})
    first = await ann.request({**SEEK, "bot_after": 30})
    assert first["type"] == "seeking" and first["since"] <= srv.app.hub.clock()
    ann = await reload(srv, ann, key, "192.0.2.10")
    back = await ann.request({**SEEK, "bot_after": 30, "resume": True})
    # The same seek: the time waited is kept, and so is when the bot comes.
    assert back["type"] == "seeking" and back["since"] == first["since"]
    assert back["bot_at"] == first["bot_at"]
    # The old socket's seek ends with no harm to the taken-over one: Bob is paired with Ann.
    srv.app.matchmaker.seek_grace = 0.05
    bob = await named(srv, "Bob")
    paired = await bob.request(SEEK)
    assert paired["type"] == "paired" and paired["opponents"][0]["name"] == "Ann"
    assert (await ann.next_event("paired", timeout=T))["race"] == paired["race"]


async def test_a_seek_paired_during_the_reload_gives_the_seat_and_one_not_taken_over_leaves(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    srv.app.matchmaker.seek_grace = 3.0
    ann, key = await visitor(srv, "192.0.2.11")
    await ann.request({"type": "set_name", "name": "Ann"})
    await ann.request(SEEK)
    await ann.close()
    bob = await named(srv, "Bob")
    paired_bob = await bob.request(SEEK)  # the seek Ann's page left is still there
    assert paired_bob["type"] == "paired"
    ann = await reload(srv, ann, key, "192.0.2.11")
    seat = await ann.request({**SEEK, "resume": True})
    assert seat["type"] == "paired" and seat["race"] == paired_bob["race"]
    await sit(seat["race"], (ann, seat), (bob, paired_bob))
    # A page that does not come back: its seek leaves the queue after the grace.
    srv.app.matchmaker.seek_grace = 0.05
    cy, _ = await visitor(srv, "192.0.2.12")
    await cy.request({"type": "set_name", "name": "Cy"})
    await cy.request(SEEK)
    await cy.close()
    dee = await named(srv, "Dee")
    for _ in range(100):
        if srv.app.matchmaker.queues.queues.size("scotch:300:c") == 0:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.05)
    assert (await dee.request(SEEK))["type"] == "seeking"
