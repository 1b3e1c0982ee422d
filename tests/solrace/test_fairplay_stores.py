"""The fair-play side of the player stores, SQLite and Redis held to one contract: a flagged
race's ratings held until a moderator clears it (then applied once, from the ratings as they
are then), an account closed for fair play (its opponents' lost points refunded once, out of
the leaderboard, its held races dropped), the history of rated races between two players,
walkouts, and the fields the daily table and the moderators need."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from solrace.cluster.connect import connect
from solrace.core.fairplay import Signals
from solrace.core.identity import Player
from solrace.core.scoring import scoring
from solrace.store.player_base import PlayerStore
from solrace.store.sqlite_store import SQLiteStore

from .servers import RedisServer
from .test_player_stores import rated_race


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path,
                 redis: RedisServer) -> AsyncIterator[tuple[PlayerStore, Any]]:
    if request.param == "sqlite":
        races = SQLiteStore(tmp_path / "race.db")
        yield races.players(), races.moderation()
        races.close()
    else:
        from solrace.store.redis_moderation import RedisModeration
        from solrace.store.redis_players import RedisPlayers

        client = connect(redis.url)
        await client.flushdb()
        yield RedisPlayers(client), RedisModeration(client)
        await client.aclose()


def flagged(moves: int = 40) -> Signals:
    return Signals(moves=moves, manual=moves, median_gap_ms=40, fast_share=1.0,
                   longest_think_ms=90, undos=0, hints=0, finished=True, agreement=1.0,
                   line_ratio=1.0, rules=("machine_speed", "engine_line"))


def clean(moves: int = 40) -> Signals:
    return Signals(moves=moves, manual=moves, median_gap_ms=2400, fast_share=0.0,
                   longest_think_ms=30_000, undos=3, hints=0, finished=True)


async def players(store: PlayerStore, *pids: str) -> None:
    for pid in pids:
        assert await store.create(Player(pid, pid.upper(), 1_000), "k" + pid)


async def test_a_flagged_race_is_held_until_cleared_then_rated_once(
        stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "pa", "pb")
    race = rated_race("r1", ["pa", "pb"])
    body = await store.score(scoring(race, {"p1": flagged(), "p2": clean()}))
    assert body is not None and body["rated"] is False and body["held"] is True
    assert body["changes"] == []
    assert await store.ratings("pa") == {} and await store.ratings("pb") == {}
    mine = (await store.results("pa"))[0]
    assert mine["flagged"] is True and mine["held"] is True and mine["rated"] is False
    assert mine["signals"]["rules"] == ["machine_speed", "engine_line"]
    assert mine["racer"] == "p1" and mine["net"] == "net0"
    listed = await mod.flagged(10)
    assert [(r["race"], r["player"], r["player_name"]) for r in listed] == [("r1", "pa", "PA")]
    # Meanwhile pa's rating moves in another race: the clear starts from it.
    await store.score(scoring(rated_race("r2", ["pa", "pc"])))
    before = (await store.ratings("pa"))["scotch"]
    assert await mod.clear("r1", "pb", None, 5_000) is None  # pb's result is not flagged
    done = await mod.clear("r1", "pa", "plmod", 5_000)
    assert done is not None and done["ratings"]["rated"] is True
    changes = {c["id"]: c for c in done["ratings"]["changes"]}
    assert changes["pa"]["before"] == before.shown and changes["pa"]["delta"] > 0
    assert changes["pb"]["delta"] < 0
    assert (await store.ratings("pa"))["scotch"].races == 2
    assert await store.scored("r1") == done["ratings"]
    mine = next(r for r in await store.results("pa") if r["race"] == "r1")
    assert mine["rated"] is True and mine["held"] is False and mine["cleared"] is True
    assert mine["after"] == changes["pa"]["after"]
    assert await mod.clear("r1", "pa", "plmod", 6_000) is None  # once
    assert (await store.ratings("pa"))["scotch"].races == 2
    assert await mod.flagged(10) == []


async def test_two_flagged_results_of_one_race_both_need_clearing(
        stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "pa", "pb")
    await store.score(scoring(rated_race("r1", ["pa", "pb"]), {"p1": flagged(),
                                                               "p2": flagged()}))
    first = await mod.clear("r1", "pb", None, 5_000)
    assert first is not None and first["ratings"] is None  # pa's still waits
    assert await store.ratings("pa") == {}
    second = await mod.clear("r1", "pa", None, 5_000)
    assert second is not None and second["ratings"]["rated"] is True
    assert (await store.ratings("pb"))["scotch"].races == 1


async def test_closing_an_account_refunds_what_its_opponents_lost_once(
        stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "cheat", "pb", "pc", "pd")
    for i in range(6):  # cheat beats pb and pc, and loses once to pd
        await store.score(scoring(rated_race(f"w{i}", ["cheat", "pb" if i % 2 else "pc"])))
    await store.score(scoring(rated_race("lost", ["cheat", "pd"], winner=1)))
    await store.score(scoring(rated_race("held", ["cheat", "pd"]),
                              {"p1": flagged(), "p2": clean()}))
    lost_b = sum(r["before"] - r["after"] for r in await store.results("pb"))
    b_before = (await store.ratings("pb"))["scotch"]
    d_before = (await store.ratings("pd"))["scotch"]
    assert lost_b > 0
    board = [row["id"] for row in await store.leaderboard("scotch", 3, 400.0, 10)]
    assert "cheat" in board
    done = await mod.close("cheat", "plmod", "fair_play", 9_000)
    assert done["closed"] is True and done["dropped"] == ["held"]
    refunded = {(r["race"], r["player"]): r["points"] for r in done["refunds"]}
    assert sum(p for (_, who), p in refunded.items() if who == "pb") == lost_b
    assert ("lost", "pd") not in refunded  # pd won that one: nothing to give back
    b_after = (await store.ratings("pb"))["scotch"]
    assert round(b_after.mu - b_before.mu) == lost_b
    assert (await store.ratings("pd"))["scotch"] == d_before  # the held race counts for nobody
    body = await store.scored("held")
    assert body is not None and body["rated"] is False and body["casual"] == "closed"
    assert "cheat" not in [row["id"] for row in await store.leaderboard("scotch", 3, 400.0, 10)]
    assert await mod.closed(["cheat", "pb"]) == {"cheat"}
    assert (await mod.closure("cheat"))["reason"] == "fair_play"
    again = await mod.close("cheat", "plmod", "fair_play", 9_500)
    assert again["closed"] is False and again["refunds"] == []
    assert (await store.ratings("pb"))["scotch"] == b_after


async def test_rated_races_together_and_walkouts(stores: tuple[PlayerStore, Any]) -> None:
    store, _ = stores
    await players(store, "pa", "pb", "pc")
    for i in range(3):
        await store.score(scoring(rated_race(f"r{i}", ["pa", "pb"])))
    await store.score(scoring(rated_race("rc", ["pa", "pc"])))
    assert await store.together("pa", "pb", 0) == 3
    assert await store.together("pa", "pc", 0) == 1
    assert await store.together("pb", "pc", 0) == 0
    race = rated_race("later", ["pa", "pb"])
    assert race.finished_at is not None
    assert await store.together("pa", "pb", race.finished_at + 1) == 0  # none since then
    # A walkout: pb aborts a rated race (resigns at once).
    from solrace.core.race import Race
    from solrace.core.race_parts import Options

    walk = Race("wk", "scotch", 7, "salt", Options(players=2, rated=True), 0, "host")
    walk.join("A", "t1", 0, pid="pa", net="n1", account=True)
    walk.join("B", "t2", 0, pid="pb", net="n2", account=True)
    walk.start("host", 0)
    walk.tick(10_000)
    walk.resign("p2", 20_000)
    body = await store.score(scoring(walk))
    assert body is not None and body["rated"] is False and body["casual"] == "too_few"
    assert await store.walkouts("pb", 0) == [20_000]
    assert await store.walkouts("pa", 0) == []  # pa did nothing wrong: no walkout
    mine = next(r for r in await store.results("pb") if r["race"] == "wk")
    assert mine["aborted"] is True and mine["walkout"] is True and mine["casual"] == "aborted"
    theirs = next(r for r in await store.results("pa") if r["race"] == "wk")
    # pa made no move either, but the race ended before he could: aborted, not his walkout.
    assert theirs["aborted"] is True and theirs["walkout"] is False


async def test_scorers_racing_on_a_held_race_hold_it_once(
        stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "pa", "pb")
    race = rated_race("r1", ["pa", "pb"])
    bodies = await asyncio.gather(*(store.score(scoring(race, {"p1": flagged()}))
                                    for _ in range(3)))
    assert sum(1 for b in bodies if b is not None) == 1
    done = await mod.clear("r1", "pa", None, 5_000)
    assert done is not None and (await store.ratings("pa"))["scotch"].races == 1


async def test_roles(stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "pa")
    assert await mod.role("pa") is None
    await mod.set_role("pa", "moderator")
    assert await mod.role("pa") == "moderator" and await mod.roles() == [("pa", "moderator")]
    await mod.set_role("pa", None)
    assert await mod.role("pa") is None and await mod.roles() == []
