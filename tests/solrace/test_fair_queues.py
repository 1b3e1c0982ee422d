"""Fair quick-race queues over real WebSockets, on one process (docs/protocol.md, "One click to
a race"): one seek per player whatever his connections, a player paired a moment ago cannot
be paired again before he sits, a no-show ends the race and bars him, the pairing keeps its
promise while both wait, the rated queue's rules (never one network, not the same opponent
again while someone else waits), a guest's rated seek is casual, and the rated gate."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from solrace.core.identity import Who
from solrace.core.race_parts import RaceError
from solrace.settings import SEAT_GRACE_S
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server, T, serving
from tests.solrace.test_play import Clock, account, app_for, named, sit, visitor

SEEK = {"type": "seek", "game": "scotch", "time_limit": 300, "bot_after": 0}


@pytest.fixture
async def play(tmp_path: Path) -> AsyncIterator[tuple[Server, Clock]]:
    clock = Clock()
    app = app_for(tmp_path, clock)
    await app.start()
    async with serving(app) as srv:
        yield srv, clock
    await app.stop()
    app.store.close()


async def refused(client: RaceClient, msg: dict[str, Any]) -> str:
    with pytest.raises(ServerError) as err:
        await client.request(msg)
    return err.value.code


async def player_id(client: RaceClient) -> str:
    return str((await client.request({"type": "me"}))["player"]["id"])


def set_rating(srv: Server, pid: str, game: str, mu: float) -> None:
    """Give a player a settled rating of ``mu`` (as races would have, many of them)."""
    path = srv.app.players.path  # type: ignore[union-attr]
    with sqlite3.connect(path) as db:
        db.execute("INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?)",
                   (pid, game, mu, 80.0, 40))


async def test_one_seek_per_player_and_a_no_show_leaves_nobody_in_a_dead_race(
        play: tuple[Server, Clock]) -> None:
    srv, clock = play
    # The griefer: one player, five tabs, each seeking. Only the last seek waits.
    first, key = await visitor(srv, "203.0.113.66")
    await first.request({"type": "set_name", "name": "Grief"})
    await first.request({"type": "set_password", "password": "Grief password"})
    tabs = [first]
    for _ in range(4):
        tabs.append(await srv.client(additional_headers={
            "Cookie": f"sr_player={key}", "X-Forwarded-For": "203.0.113.66"}))
    for i, tab in enumerate(tabs):
        assert (await tab.request(SEEK))["type"] == "seeking"
        if i:
            ended = await tabs[i - 1].next_event("seek_ended", timeout=T)
            assert ended["reason"] == "replaced"
    # A newcomer gets the one seek; the next newcomer finds nobody (no second griefer seek).
    ann = await account(srv, "Ann")
    paired = await ann.request(SEEK)
    assert paired["type"] == "paired" and paired["opponents"][0]["name"] == "Grief"
    await tabs[4].next_event("paired", timeout=T)
    # Paired a moment ago, the griefer cannot be paired with the next newcomer: he sits first.
    assert await refused(tabs[0], SEEK) == "seat_waiting"
    bob = await account(srv, "Bob")
    assert (await bob.request(SEEK))["type"] == "seeking"
    race = await sit(ann, paired)
    # The grace passes and the griefer never came: the race does not take place (no
    # countdown, no race alone).
    clock.forward(SEAT_GRACE_S * 1000 + 1000, srv.app)
    over = await ann.next_event("race_over", "countdown", "started", timeout=T)
    assert over["type"] == "race_over" and over["reason"] == "no_show"
    # Barred for a while; Ann seeks again and races Bob, who was waiting.
    assert await refused(tabs[1], SEEK) == "no_show"
    again = await ann.request(SEEK)
    assert again["type"] == "paired" and again["opponents"][0]["name"] == "Bob"
    ratings = await ann.next_event("ratings", timeout=T)  # of the race that did not happen
    assert ratings["race"] == race and ratings["rated"] is False


async def test_a_no_show_loses_the_seek_he_made_meanwhile(play: tuple[Server, Clock]) -> None:
    """A seat not taken, and the player seeks elsewhere after the grace but before the race
    was ended: his seek is dropped (seek_ended) when it ends."""
    srv, clock = play
    ann, cat = await account(srv, "Ann"), await account(srv, "Cat")
    await cat.request(SEEK)
    paired = await ann.request(SEEK)
    await sit(ann, paired)
    await cat.next_event("paired", timeout=T)
    srv.app.hub.deadlines.close()  # the race's timer is late: the seek comes first
    clock.offset += SEAT_GRACE_S * 1000 + 1000
    assert (await cat.request({**SEEK, "game": "yukon"}))["type"] == "seeking"
    clock.forward(0, srv.app)
    assert (await ann.next_event("race_over", timeout=T))["reason"] == "no_show"
    ended = await cat.next_event("seek_ended", timeout=T)
    assert ended["reason"] == "no_show"


async def test_two_waiting_seekers_are_paired_as_their_windows_widen(
        play: tuple[Server, Clock]) -> None:
    srv, clock = play
    hi, lo = await account(srv, "High"), await account(srv, "Low")
    set_rating(srv, await player_id(hi), "scotch", 2092.0)
    set_rating(srv, await player_id(lo), "scotch", 1500.0)
    assert (await hi.request(SEEK))["type"] == "seeking"
    assert (await lo.request(SEEK))["type"] == "seeking"  # 592 apart: not yet
    # 592 is within the elder's window after 8.84 s (150 + 50 a second): the next pass pairs
    # them, while both wait.
    clock.forward(9_000, srv.app)
    a = await hi.next_event("paired", timeout=T)
    b = await lo.next_event("paired", timeout=T)
    assert a["race"] == b["race"] and a["rated"] is True
    assert a["opponents"][0]["name"] == "Low" and b["opponents"][0]["name"] == "High"


async def test_a_rated_queue_never_pairs_two_seekers_of_one_network(
        play: tuple[Server, Clock]) -> None:
    srv, clock = play
    ann, bob = await account(srv, "Ann", "203.0.113.7"), await account(srv, "Bob", "203.0.113.7")
    assert (await ann.request(SEEK))["type"] == "seeking"
    assert (await bob.request(SEEK))["type"] == "seeking"
    clock.forward(60_000, srv.app)
    assert await srv.app.matchmaker.pair_waiting() == 0  # not even after 17 s
    # Casual: friends in a café may race each other.
    casual = {**SEEK, "rated": False}
    assert (await ann.request(casual))["type"] == "seeking"
    paired = await bob.request(casual)
    assert paired["type"] == "paired" and paired["rated"] is False
    assert paired["opponents"][0]["name"] == "Ann"


async def test_not_the_same_opponent_again_while_someone_else_waits(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    ann, bob = await account(srv, "Ann"), await account(srv, "Bob", "203.0.113.8")
    cat = await account(srv, "Cat", "203.0.113.8")  # Bob's network: Bob and Cat never meet
    await ann.request(SEEK)
    paired_bob = await bob.request(SEEK)
    race = await sit(bob, paired_bob)
    await sit(ann, await ann.next_event("paired", timeout=T))
    await ann.wait_state(race, T)
    await ann.resign(race)
    await bob.resign(race)
    await ann.next_event("race_over", timeout=T)
    # Bob waits, then Cat; Ann seeks: she gets Cat, although Bob waited longer.
    assert (await bob.request(SEEK))["type"] == "seeking"
    assert (await cat.request(SEEK))["type"] == "seeking"
    again = await ann.request(SEEK)
    assert again["type"] == "paired" and again["opponents"][0]["name"] == "Cat"


async def test_a_guests_rated_seek_is_casual_and_says_why(play: tuple[Server, Clock]) -> None:
    srv, _ = play
    gus = await named(srv, "Gus")  # no password: a guest
    seeking = await gus.request(SEEK)
    assert seeking["rated"] is False and seeking["casual"] == "guest"
    ann = await account(srv, "Ann")
    paired_ann = await ann.request({**SEEK, "rated": False})  # the casual queue: Gus is there
    assert paired_ann["rated"] is False and "casual" not in paired_ann
    paired_gus = await gus.next_event("paired", timeout=T)
    assert paired_gus["rated"] is False and paired_gus["casual"] == "guest"
    # An account's rated seek is rated.
    assert (await (await account(srv, "Bea")).request(SEEK))["rated"] is True
    # Play a bot: the same.
    ivy = await named(srv, "Ivy")
    bot = await ivy.request({"type": "play_bot", "game": "scotch", "level": 1})
    assert bot["rated"] is False and bot["casual"] == "guest"


async def test_the_rated_gate_is_asked_for_an_accounts_rated_requests(
        play: tuple[Server, Clock]) -> None:
    srv, _ = play
    asked: list[str] = []

    async def gate(who: Who) -> None:
        asked.append(who.name)
        if who.name == "Paused":
            raise RaceError("paused", "your rated play is paused")

    srv.app.matchmaker.rated_gate = gate
    paused, ann = await account(srv, "Paused"), await account(srv, "Ann")
    gus = await named(srv, "Gus")
    assert await refused(paused, SEEK) == "paused"
    assert await refused(paused, {"type": "play_bot", "game": "scotch", "level": 1}) == "paused"
    assert (await paused.request({**SEEK, "rated": False}))["type"] == "seeking"  # casual
    assert (await gus.request(SEEK))["rated"] is False  # a guest: casual, not asked
    bot = await ann.request({"type": "play_bot", "game": "yukon", "level": 1})
    assert bot["rated"] is True
    assert asked == ["Paused", "Paused", "Ann"]


async def test_a_pass_that_cannot_make_the_race_ends_the_elders_seek(
        play: tuple[Server, Clock]) -> None:
    """A race a pass pairs counts in the share of the seeker who waited longest: over it, his
    seek ends with the reason; the other waits on (and is not paired with him again and again
    every second)."""
    srv, clock = play
    srv.app.hub.caps.races_per_address = 1
    hi = await account(srv, "High", "203.0.113.9")
    await hi.create("scotch")  # his network's one race
    lo = await account(srv, "Low")
    set_rating(srv, await player_id(hi), "scotch", 2092.0)
    assert (await hi.request(SEEK))["type"] == "seeking"
    clock.forward(1_000, srv.app)  # High waited longer (two seeks may share a millisecond)
    got = await lo.request(SEEK)
    assert got["type"] == "seeking", got
    clock.forward(8_000, srv.app)
    assert await srv.app.matchmaker.pair_waiting() == 0
    error = await hi.next_event("error", timeout=T)
    assert error["code"] == "limit_reached"
    cat = await account(srv, "Cat")
    paired = await cat.request(SEEK)  # Low still waits
    assert paired["type"] == "paired" and paired["opponents"][0]["name"] == "Low"


def test_a_quick_race_made_before_the_no_show_rule_replays_as_it_was_played() -> None:
    """The no-show rule is the race's own (stored with it): a quick race made before it,
    whose absent racer forfeited at the start while the other raced, loads as it was played;
    one made since ends at the grace, also once loaded again."""
    from solrace.core.race import Race
    from solrace.core.race_parts import Options
    from solrace.store.records import race_from_record, race_record, replay

    def quick(absent_ends: bool) -> tuple[Race, list[Any], Race]:
        race = Race("rq1", "scotch", 7, "salt", Options(2, 300, rated=True, kind="quick"), 0,
                    "host", countdown_ms=0, seated_until=15_000, forfeit=True,
                    absent_ends=absent_ends)
        log = []
        for i, pid in enumerate(("pa", "pb")):
            log += race.join(pid.upper(), f"tok{i}", 0, pid=pid).log
        log += race.ready("p1", 1_000).log
        race.tick(15_000)
        if race.status == "running":
            log += race.resign("p1", 16_000).log
        return race_from_record("rq1", race_record(race)), log, race

    # Before it: the absent racer forfeits at the start, and the one left racing has won
    # (every other racer resigned).
    before, log, played = quick(False)
    assert played.reason == "resigned" and before.absent_ends is False
    again = replay(before, log, played.finished_at)
    assert again.status == "finished" and again.reason == "resigned"
    now, log, played = quick(True)
    assert played.reason == "no_show" and now.absent_ends is True
    assert replay(now, log, played.finished_at).reason == "no_show"
