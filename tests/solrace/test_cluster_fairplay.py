"""Fair play across ``solrace serve`` processes on one real Redis: a race played at machine speed
on one process is held, a moderator made with ``solrace mod add --redis`` clears it from the
other process and the racers hear the ratings wherever they are; the walkouts (aborts and early
resigns) that pause rated play count on every process, and so does a closure; the daily deal's
second look from one network is flagged, at machine speed or along the solver's line at a
person's pace (and the same play from another network is not); win trading and puppets across
processes are casual."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time

import pytest
from solrace.core import daily as calendar
from solrace.runtime.redis_connect import connect
from solrace.settings import ENGINE_GAP_MS
from solrace.store.redis_player_data import day_results_key, unpack_row
from solrace.store.redis_players import pkey
from solrace.tools.race_client import RaceClient, ServerError

from .conftest import T
from .servers import KEY_FILE, RedisServer, Solrace
from .test_cluster_play import browser, fetch
from .test_fairplay_server import (
    DEALS,
    followed,
    machine_speed,
    ratings_of,
    scout,
    three_moves,
)


def mod_add(redis: RedisServer, name: str) -> None:
    done = subprocess.run([sys.executable, "-m", "solrace", "mod", "add", name, "--redis",
                           redis.url], capture_output=True, text=True, timeout=T * 3,
                          env={"SOLRACE_KEY_FILE": str(KEY_FILE), **os.environ})
    assert done.returncode == 0, done.stderr


async def test_a_held_race_is_cleared_from_another_process(
        redis: RedisServer, pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    cheat, _ = await browser(a, "Speedy", "10.1.0.1")
    bob, _ = await browser(b, "Bob", "10.1.0.2")
    mod, _ = await browser(b, "Moda", "10.1.0.3")
    host = await RaceClient.connect(a.url)
    created = await host.create("scotch", players=2, rated=True)
    race = created["race"]
    for client in (cheat, bob):
        await client.join(race, name="x")
    await host.start(race, created["host_token"])
    for client in (cheat, bob):
        await client.wait_state(race, T * 2)
    await three_moves(bob, race)
    await machine_speed(cheat, race)
    await bob.resign(race)
    held = await ratings_of(bob, race)
    assert held["rated"] is False and held["held"] is True
    cheat_id = (await cheat.request({"type": "me"}))["player"]["id"]
    with pytest.raises(ServerError) as err:  # not a moderator yet
        await mod.request({"type": "mod_clear", "race": race, "player": cheat_id})
    assert err.value.code == "forbidden"
    mod_add(redis, "Moda")
    cleared = await mod.request({"type": "mod_clear", "race": race, "player": cheat_id})
    assert cleared["rated"] is True
    for client in (cheat, bob):  # on either process, wherever the race is run
        ratings = await ratings_of(client, race)
        while ratings.get("held"):  # the one sent when the race ended
            ratings = await ratings_of(client, race)
        assert ratings["rated"] is True and len(ratings["changes"]) == 2
    for client in (host, cheat, bob, mod):
        await client.close()


async def test_walkouts_pause_rated_play_on_every_process(
        pair: tuple[Solrace, Solrace]) -> None:
    a, b = pair
    cid, key = await browser(a, "Cid", "10.1.0.4")
    for _ in range(3):  # three rated bot races left at once, on process a
        paired = await cid.request({"type": "play_bot", "game": "scotch", "level": 1,
                                    "time_limit": 120})
        race = str(paired["race"])
        await cid.join(race, token=paired["token"])
        await cid.wait_state(race, T * 2)
        await cid.resign(race)
        ratings = await ratings_of(cid, race)
        assert ratings["casual"] == "too_few"
    other, _ = await browser(b, "", "10.1.0.4", key=key)  # another tab, on process b
    with pytest.raises(ServerError) as err:
        await other.request({"type": "play_bot", "game": "scotch", "level": 1})
    assert err.value.code == "paused"
    for client in (cid, other):
        await client.close()


async def test_early_resigns_pause_rated_play_on_every_process(
        pair: tuple[Solrace, Solrace]) -> None:
    """Three rated bot races resigned seconds in, after three moves (losses, and walkouts),
    on process a: process b refuses the next rated one, saying why."""
    a, b = pair
    eve, key = await browser(a, "Eve", "10.1.0.6")
    for _ in range(3):
        paired = await eve.request({"type": "play_bot", "game": "scotch", "level": 1,
                                    "time_limit": 120})
        race = str(paired["race"])
        await eve.join(race, token=paired["token"])
        await eve.wait_state(race, T * 2)
        await three_moves(eve, race)
        await eve.resign(race)
        ratings = await ratings_of(eve, race)
        assert ratings["rated"] is True
    other, _ = await browser(b, "", "10.1.0.6", key=key)
    with pytest.raises(ServerError) as err:
        await other.request({"type": "seek", "game": "scotch", "time_limit": 300})
    assert err.value.code == "paused" and "resigned within" in err.value.message
    for client in (eve, other):
        await client.close()


async def test_an_account_closed_on_one_process_plays_no_rated_race_on_the_other(
        redis: RedisServer, pair: tuple[Solrace, Solrace]) -> None:
    """A moderator on process b closes an account; on process a its rated requests are
    refused and a custom rated race with it is casual (``closed``)."""
    a, b = pair
    sly, _ = await browser(a, "Sly", "10.1.0.7")
    ned, _ = await browser(a, "Ned", "10.1.0.8")
    mod, _ = await browser(b, "Modb", "10.1.0.9")
    mod_add(redis, "Modb")
    sly_id = (await sly.request({"type": "me"}))["player"]["id"]
    closed = await mod.request({"type": "mod_close", "player": sly_id})
    assert closed["closed"] is True
    with pytest.raises(ServerError) as err:
        await sly.request({"type": "play_bot", "game": "scotch", "level": 1})
    assert err.value.code == "closed"
    host = await RaceClient.connect(a.url)
    created = await host.create("scotch", players=2, rated=True)
    race = created["race"]
    for client in (sly, ned):
        await client.join(race, name="x")
    await host.start(race, created["host_token"])
    for client in (sly, ned):
        await client.wait_state(race, T * 2)
    await three_moves(sly, race)
    await three_moves(ned, race)
    await ned.resign(race)
    ratings = await ratings_of(ned, race)
    assert ratings["rated"] is False and ratings["casual"] == "closed"
    for client in (host, sly, ned, mod):
        await client.close()


async def test_an_account_closed_on_one_process_leaves_an_arena_run_by_the_other(
        redis: RedisServer, pair: tuple[Solrace, Solrace]) -> None:
    """The arena is run by process a; a moderator on process b closes its winner's account:
    a's sweep of the store takes his place (the table on either process), within a few of its
    looks."""
    from .test_cluster_arenas import event, sit, table

    a, b = pair
    ann, _ = await browser(a, "Ann", "10.1.1.1")
    bob, _ = await browser(b, "Bob", "10.1.1.2")
    mod, _ = await browser(b, "Modc", "10.1.1.3")
    mod_add(redis, "Modc")
    ann_id = (await ann.request({"type": "me"}))["player"]["id"]
    aid = (await ann.request({"type": "arena_create", "game": "scotch", "minutes": 10,
                              "starts_in": 1}))["arena"]  # on a: a runs it
    for client in (ann, bob):
        await client.request({"type": "arena_join", "arena": aid})
    race = await sit({c: await event(c, "paired", aid) for c in (ann, bob)})
    await three_moves(ann, race)
    await three_moves(bob, race)
    await bob.resign(race)  # Ann first, 2 points
    await event(bob, "arena_standings", aid)
    rows = await asyncio.to_thread(table, b, aid)
    assert rows["Ann"]["place"] == 1 and rows["Bob"]["place"] == 2
    assert (await mod.request({"type": "mod_close", "player": ann_id}))["closed"] is True
    for _ in range(int(T * 60)):  # CLOSED_SWEEP_S is 2 s
        rows = await asyncio.to_thread(table, b, aid)
        if rows["Ann"].get("closed"):
            break
        await asyncio.sleep(0.1)
    assert rows["Ann"]["place"] is None and rows["Ann"]["closed"] is True
    assert rows["Bob"]["place"] == 1
    rows = await asyncio.to_thread(table, a, aid)
    assert rows["Ann"]["place"] is None and rows["Bob"]["place"] == 1
    for client in (ann, bob, mod):
        await client.close()


async def test_a_second_look_at_the_daily_deal_from_one_network_is_flagged(
        pair: tuple[Solrace, Solrace]) -> None:
    """The finding: a throwaway account plays the day's deal and sees every card; another of
    the same network plays the line. Here the scout plays it himself (a person), the second
    account sends the line at once on the other process: flagged, off the day's table."""
    a, b = pair
    scout, _ = await browser(a, "Scout", "10.1.0.5")
    # The day's first attempt draws its deal: fresh seeds solved until one is won.
    paired = await scout.request({"type": "daily", "game": "scotch"}, timeout=T * 12)
    race = str(paired["race"])
    await scout.join(race, token=paired["token"])
    await scout.wait_state(race, T * 2)
    await three_moves(scout, race)
    await scout.resign(race)
    await ratings_of(scout, race)
    second, key = await browser(b, "Second", "10.1.0.5")
    paired = await second.request({"type": "daily", "game": "scotch"}, timeout=T * 4)
    theirs = str(paired["race"])
    await second.join(theirs, token=paired["token"])
    await second.wait_state(theirs, T * 2)
    await machine_speed(second, theirs, finish=True)
    await ratings_of(second, theirs)
    page, _ = await asyncio.to_thread(fetch, b.http + "/api/daily/scotch",
                                      {"Cookie": f"sr_player={key}",
                                       "X-Forwarded-For": "10.1.0.5"})
    row = next(r for r in page["table"] if r["name"] == "Second")
    assert row["flagged"] is True and row["place"] is None
    assert [r["name"] for r in page["table"] if r["place"] is not None] == ["Scout"]
    for client in (scout, second):
        await client.close()


@pytest.mark.parametrize(("game", "ends", "disguise"), [("scotch", True, False),
                                                        ("yukon", False, True)])
async def test_the_daily_deal_along_a_scouts_line_at_a_persons_pace_is_flagged(
        redis: RedisServer, pair: tuple[Solrace, Solrace], game: str, ends: bool,
        disguise: bool) -> None:
    """The scout plays the day's deal on process a (and ends his attempt, or leaves it running
    in Yukon, its hidden cards seen); an account of his network plays the solver's line at a
    person's pace on process b (in Yukon disguised: two moves swapped, the aces on other
    foundations), one of another network the line on a: the first is flagged
    ``scouted_line`` (nothing else would hold him), the second is not."""
    a, b = pair
    day = calendar.day_of(int(time.time() * 1000))
    client = connect(redis.url)
    await client.set(pkey(f"daily:{game}:{day}"), f"{DEALS[game]} {secrets.token_hex(16)}")
    looker, _ = await browser(a, "Scout", "10.1.0.7")
    await scout(looker, game, ends)
    second, key = await browser(b, "Second", "10.1.0.7")
    other, _ = await browser(a, "Other", "10.1.0.8")
    await followed(second, other, game, DEALS[game], disguise)
    rows = {r["name"]: r for r in map(unpack_row,
                                      await client.hvals(day_results_key(game, day)))}
    await client.aclose()
    mine, theirs = rows["Second"]["signals"], rows["Other"]["signals"]
    assert mine["scouted"] is True and mine["median_gap_ms"] > ENGINE_GAP_MS
    assert mine["rules"] == ["scouted_line"] and (mine["agreement"] < 0.2) is disguise
    assert theirs["scouted"] is False and theirs["agreement"] == 1.0 and theirs["rules"] == []
    page, _ = await asyncio.to_thread(fetch, b.http + f"/api/daily/{game}",
                                      {"Cookie": f"sr_player={key}",
                                       "X-Forwarded-For": "10.1.0.7"})
    assert [(r["name"], r["place"], r.get("flagged", False)) for r in page["table"]] == [
        ("Other", 1, False), *([("Scout", 2, False)] if ends else []), ("Second", None, True)]
    for c in (looker, second, other):
        await c.close()


async def custom_race(host_proc: Solrace, *racers: RaceClient) -> str:
    """A custom rated Scotch race of ``racers`` (wherever they are), made on ``host_proc``,
    running."""
    host = await RaceClient.connect(host_proc.url)
    created = await host.create("scotch", players=len(racers), rated=True)
    race = str(created["race"])
    for client in racers:
        await client.join(race, name="x")
    await host.start(race, created["host_token"])
    for client in racers:
        await client.wait_state(race, T * 2)
    await host.close()
    return race


async def shown(proc: Solrace, name: str) -> int | None:
    """``name``'s Scotch rating as ``/api/players/{name}`` on ``proc`` shows it."""
    page, _ = await asyncio.to_thread(fetch, proc.http + f"/api/players/{name}")
    return page["ratings"].get("scotch", {}).get("rating")


async def casual_everywhere(pair: tuple[Solrace, Solrace], race: str,
                            heard: list[dict[str, object]], reason: str) -> None:
    """The race's ``ratings`` as its racers heard them and as either process shows the race
    say it is casual, and why."""
    for ratings in heard:
        assert (ratings["rated"], ratings["changes"], ratings["casual"]) == (False, [], reason)
    for proc in pair:
        summary, _ = await asyncio.to_thread(fetch, proc.http + f"/api/races/{race}")
        assert summary["ratings"]["rated"] is False
        assert summary["ratings"]["casual"] == reason


async def test_the_same_two_across_processes_trade_wins_casually(
        pair: tuple[Solrace, Solrace]) -> None:
    """Win trading: the same two accounts, one on each process, race again and again (the
    races made on either process in turn); the 4th rated race of the day between them is
    casual, and their ratings stay where the 3rd left them."""
    a, b = pair
    ann, _ = await browser(a, "Ann", "10.1.0.11")
    bob, _ = await browser(b, "Bob", "10.1.0.12")
    seen = []
    for i in range(4):
        before = (await shown(a, "Ann"), await shown(b, "Bob"))
        race = await custom_race(pair[i % 2], ann, bob)
        await three_moves(ann, race)
        await three_moves(bob, race)
        await (bob if i % 2 else ann).resign(race)  # they take turns to win
        heard = [await ratings_of(ann, race), await ratings_of(bob, race)]
        seen.append(heard[0].get("casual"))
    assert seen == [None, None, None, "repeat_pair"] and None not in before
    await casual_everywhere(pair, race, heard, "repeat_pair")
    assert (await shown(b, "Ann"), await shown(a, "Bob")) == before
    for client in (ann, bob):
        await client.close()


async def test_puppets_on_another_process_make_a_custom_race_casual(
        pair: tuple[Solrace, Solrace]) -> None:
    """Puppets: three fresh accounts of one network, on process b, resign to a player on
    process a: the race is casual (``same_network``) and nobody's rating moves."""
    a, b = pair
    main, _ = await browser(a, "Main", "10.1.0.13")
    puppets = [(await browser(b, f"Pup{i}", "10.1.0.14"))[0] for i in range(3)]
    race = await custom_race(a, main, *puppets)
    for client in (main, *puppets):
        await three_moves(client, race)
    for client in puppets:
        await client.resign(race)
    heard = [await ratings_of(c, race) for c in (main, *puppets)]
    await casual_everywhere(pair, race, heard, "same_network")
    for proc in pair:
        assert [await shown(proc, n) for n in ("Main", "Pup0", "Pup1", "Pup2")] == [None] * 4
    for client in (main, *puppets):
        await client.close()
