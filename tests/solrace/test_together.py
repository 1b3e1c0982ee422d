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
    # Another tab that takes it over while this one is open: this one is told it moved.
    tab = await tab_of(srv, key, "192.0.2.10")
    moved = await tab.request({**SEEK, "bot_after": 30, "resume": True})
    assert moved["since"] == first["since"]
    assert (await ann.next_event("seek_ended", timeout=T))["reason"] == "replaced"
    ann = tab
    # The old sockets' seeks end with no harm to the taken-over one: Bob is paired with Ann.
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


# ------------------------------------------------------------------------ challenges
async def tab_of(srv: Server, key: str, address: str) -> RaceClient:
    """Another page of the browser whose cookie is ``key``."""
    return await srv.client(additional_headers={"Cookie": f"sr_player={key}",
                                                "X-Forwarded-For": address})


async def test_a_challenge_by_name_reaches_every_page_and_accepted_seats_both(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann = await account(srv, "Ann")
    bob, key = await visitor(srv, "192.0.2.20")
    await bob.request({"type": "set_name", "name": "Bob"})
    await bob.request({"type": "set_password", "password": "Bob password"})
    bob_tab = await tab_of(srv, key, "192.0.2.20")
    made = await ann.request({"type": "challenge", "to": "bob", "game": "yukon",
                              "time_limit": 180})
    assert made["type"] == "challenge_created" and made["link"] == f"/challenge/{made['challenge']}"
    assert made["to"]["name"] == "Bob" and made["rated"] is True
    assert made["expires_at"] - made["created_at"] == 120_000
    for page in (bob, bob_tab):  # on every page he has open
        got = await page.next_event("challenge", timeout=T)
        assert got["challenge"] == made["challenge"] and got["by"]["name"] == "Ann"
        assert got["game"] == "yukon" and got["time_limit"] == 180
    listed = await bob.request({"type": "challenges"})
    assert [c["challenge"] for c in listed["incoming"]] == [made["challenge"]]
    assert (await ann.request({"type": "challenges"}))["outgoing"][0]["to"]["name"] == "Bob"
    seen = await bob.request({"type": "challenge_get", "challenge": made["challenge"]})
    assert seen["you"] == "challenged"
    # Accepted on one page: both are seated in a rated race of two.
    paired_bob = await bob_tab.request({"type": "challenge_accept",
                                        "challenge": made["challenge"]})
    paired_ann = await ann.next_event("paired", timeout=T)
    assert paired_bob["race"] == paired_ann["race"] and paired_bob["kind"] == "challenge"
    assert paired_bob["rated"] is True and paired_ann["challenge"] == made["challenge"]
    assert paired_ann["opponents"][0]["name"] == "Bob"
    assert (await bob.next_event("challenge_ended", timeout=T))["reason"] == "accepted"
    await sit(paired_bob["race"], (ann, paired_ann), (bob_tab, paired_bob))
    # Taken once: nobody takes it again.
    assert await refused(bob, {"type": "challenge_accept",
                               "challenge": made["challenge"]}) == "not_found"


async def test_a_challenge_by_link_is_open_to_anyone_and_casual_with_a_guest(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann = await account(srv, "Ann")
    made = await ann.request({"type": "challenge", "game": "scotch", "time_limit": 300})
    assert made["to"] is None and made["expires_at"] - made["created_at"] == 900_000
    cid = made["challenge"]
    visiting, _ = await visitor(srv)  # not a player yet: the link's page shows it all the same
    seen = await visiting.request({"type": "challenge_get", "challenge": cid})
    assert seen["you"] == "other" and seen["by"]["name"] == "Ann"
    assert await refused(ann, {"type": "challenge_accept", "challenge": cid}) == "forbidden"
    # A visitor who says no: Ann hears it, and the link stays open for someone else.
    await visiting.request({"type": "challenge_decline", "challenge": cid})
    no = await ann.next_event("challenge_declined", timeout=T)
    assert no["challenge"] == cid and no["open"] is True
    paired = await visiting.request({"type": "challenge_accept", "challenge": cid})
    assert paired["rated"] is False and paired["casual"] == "guest"  # a guest now
    to_ann = await ann.next_event("paired", timeout=T)
    assert to_ann["casual"] == "opponent_guest" and to_ann["race"] == paired["race"]
    assert to_ann["opponents"][0]["name"].startswith("Guest-")


async def test_a_declined_expired_or_cancelled_challenge_says_so(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, bob = await account(srv, "Ann"), await account(srv, "Bob")
    cy = await named(srv, "Cy")
    made = await ann.request({"type": "challenge", "to": "Bob", "game": "scotch",
                              "time_limit": 300})
    await bob.next_event("challenge", timeout=T)
    assert await refused(cy, {"type": "challenge_decline",
                              "challenge": made["challenge"]}) == "forbidden"
    assert await refused(cy, {"type": "challenge_accept",
                              "challenge": made["challenge"]}) == "forbidden"
    await bob.request({"type": "challenge_decline", "challenge": made["challenge"]})
    no = await ann.next_event("challenge_declined", timeout=T)
    assert no == {"type": "challenge_declined", "challenge": made["challenge"], "by": "Bob",
                  "open": False}
    assert (await bob.next_event("challenge_ended", timeout=T))["reason"] == "declined"
    assert await refused(bob, {"type": "challenge_accept",
                               "challenge": made["challenge"]}) == "not_found"
    # Cancelled by Ann: Bob's pages drop it.
    made = await ann.request({"type": "challenge", "to": "Bob", "game": "scotch",
                              "time_limit": 300})
    assert await refused(bob, {"type": "challenge_cancel",
                               "challenge": made["challenge"]}) == "forbidden"
    await ann.request({"type": "challenge_cancel", "challenge": made["challenge"]})
    assert (await told(bob, "challenge_ended", challenge=made["challenge"]))["reason"] == \
        "cancelled"
    # Not answered in time: both are told.
    srv.app.challenges.named_ms = 300  # type: ignore[union-attr]
    made = await ann.request({"type": "challenge", "to": "Bob", "game": "scotch",
                              "time_limit": 300})
    gone = await ann.next_event("challenge_expired", timeout=T)
    assert gone == {"type": "challenge_expired", "challenge": made["challenge"]}
    assert (await told(bob, "challenge_ended", challenge=made["challenge"]))["reason"] == \
        "expired"
    assert (await bob.request({"type": "challenges"}))["incoming"] == []


async def test_challenges_are_bounded_and_checked(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, _ = await visitor(srv, "192.0.2.30")
    await ann.request({"type": "set_name", "name": "Ann"})
    bad = {"type": "challenge", "game": "scotch", "time_limit": 301}
    assert await refused(ann, bad) == "bad_message"
    assert await refused(ann, {**bad, "time_limit": 300, "game": "chess"}) == "bad_message"
    assert await refused(ann, {**bad, "time_limit": 300, "to": "Nobody"}) == "not_found"
    assert await refused(ann, {**bad, "time_limit": 300, "to": "ann"}) == "forbidden"
    assert await refused(ann, {"type": "challenge_accept", "challenge": "x" * 65}) == \
        "bad_message"
    made = [await ann.request({**bad, "time_limit": 300}) for _ in range(3)]
    assert made[0]["casual"] == "guest" and made[0]["rated"] is False  # a guest asked
    assert await refused(ann, {**bad, "time_limit": 300}) == "limit_reached"  # 3 per player
    # A challenger who left: nobody would sit in his seat, so the challenge is off.
    await ann.close()
    bob = await named(srv, "Bob")
    assert await refused(bob, {"type": "challenge_accept",
                               "challenge": made[0]["challenge"]}) == "not_found"
    # Ten other players may wait for one player's answer; the eleventh waits his turn.
    for i in range(10):
        other = await named(srv, f"Fan{i}")
        await other.request({**bad, "time_limit": 300, "to": "Bob"})
    late = await named(srv, "Fan10")
    assert await refused(late, {**bad, "time_limit": 300, "to": "Bob"}) == "limit_reached"


async def test_a_process_keeps_few_expiry_timers_per_challenger(
        play: tuple[Server, Clock]) -> None:
    """Challenges taken on another process leave their timers here until their end: a
    challenger who makes and cancels them there again and again holds a few at most."""
    from solrace.core.challenge import Challenge
    from solrace.service.challenges import TIMERS_PER_PLAYER

    srv, _ = play
    service = srv.app.challenges
    assert service is not None
    now = srv.app.hub.clock()
    for i in range(5 * TIMERS_PER_PLAYER):
        service._arm(Challenge(f"c{i}", "pl-a", "A", "scotch", 300, False, now, now + 60_000),
                     now)
    assert len(service.timers) == TIMERS_PER_PLAYER
    assert service.timers_of["pl-a"] == [f"c{i}" for i in range(4 * TIMERS_PER_PLAYER,
                                                                5 * TIMERS_PER_PLAYER)]
    await service._expire(f"c{5 * TIMERS_PER_PLAYER - 1}")
    assert len(service.timers) == TIMERS_PER_PLAYER - 1


# ------------------------------------------------------------- a tournament's house bots
async def test_a_host_adds_house_bots_that_play_every_race_they_are_seated_in(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    host = await srv.client()
    made = await host.request({"type": "tournament_create", "name": "Cup", "format": "rounds",
                               "games": ["scotch"], "rounds": 2, "race_size": 3, "gap": 0})
    tid, token = made["tournament"], made["host_token"]
    add = {"type": "tournament_add_bot", "tournament": tid, "token": token}
    ann = await srv.client()
    entered = await ann.request({"type": "tournament_join", "tournament": tid, "name": "Ann"})
    assert await refused(ann, {**add, "token": entered["token"], "level": 1}) == "forbidden"
    assert await refused(host, {**add, "level": 6}) == "bad_message"
    assert await refused(host, {**add, "level": 4}) == "unavailable"  # no solver here
    for level in (1, 2, 1):
        assert (await host.request({**add, "level": level}))["type"] == "ok"
    view = await host.request({"type": "tournament_watch", "tournament": tid})
    bots = [e for e in view["entrants"] if e["bot"]]
    assert [(e["name"], e["level"]) for e in bots] == [
        ("Random bot", 1), ("Greedy bot", 2), ("Random bot 2", 1)]
    await host.request({"type": "tournament_start", "tournament": tid, "token": token})
    seat = await ann.next_event("round", timeout=T)
    race = seat["race"]
    await ann.join(race, token=seat["token"])
    # The bots took their seats at once: the race runs without waiting for the grace.
    await ann.wait_state(race, T * 2)
    snap = await ann.watch(race)  # four entrants by three: two races of two
    bot = next(p for p in snap["players"] if p["bot"])
    assert bot["name"] in {"Random bot", "Greedy bot", "Random bot 2"} and bot["level"] in (1, 2)
    moved = await told_progress(ann)
    assert moved["player"] == bot["player"]  # it plays
    assert await refused(host, {**add, "level": 1}) == "tournament_started"


async def told_progress(client: RaceClient) -> dict[str, Any]:
    """The first move of another racer (a ``progress`` event)."""
    return await client.next_event("progress", timeout=T * 3)


async def test_a_tournament_holds_at_most_eight_house_bots(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    host = await srv.client()
    made = await host.request({"type": "tournament_create", "name": "Bots", "format": "rounds",
                               "games": ["yukon"]})
    add = {"type": "tournament_add_bot", "tournament": made["tournament"],
           "token": made["host_token"], "level": 2}
    for _ in range(8):
        await host.request(add)
    assert await refused(host, add) == "limit_reached"
