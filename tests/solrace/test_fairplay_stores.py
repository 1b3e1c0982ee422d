"""The fair-play side of the player stores, SQLite and Redis held to one contract: a flagged
race's ratings held until a moderator clears it (then applied once, from the ratings as they
are then), an account closed for fair play (its opponents' lost points refunded once, out of
the leaderboard, its held races dropped), the history of rated races between two players,
walkouts, and the fields the daily table and the moderators need."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from solrace.core.fairplay import Signals
from solrace.core.identity import Player
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.scoring import scoring
from solrace.runtime.redis_connect import connect
from solrace.settings import REPEAT_WINDOW_MS
from solrace.store.player_base import PlayerStore
from solrace.store.sqlite_store import SQLiteStore

from .servers import RedisServer
from .test_player_stores import committed_moves, rated_race


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


def daily_race(race_id: str, pid: str, moves: int, day: str = "2026-12-02",
               net: str = "n1") -> Race:
    """A finished attempt of an account at the day's deal: ``moves`` moves, then a resign
    (fewer than three: aborted)."""
    race = Race(race_id, "scotch", 5, "salt",
                Options(players=1, time_limit=900, kind="daily", day=day), 0, "host")
    race.join(f"N{pid}", "tok", 0, pid=pid, net=net, account=True)
    race.start("host", 0)
    race.tick(10_000)
    at = committed_moves(race, "p1", moves, 11_000)
    race.resign("p1", at)
    return race


async def test_every_field_of_a_result_is_kept(stores: tuple[PlayerStore, Any]) -> None:
    """A result reads back as it was written (``Result.as_dict``), ``cleared`` False."""
    store, _ = stores
    await players(store, "pa", "pb", "pc")
    held = scoring(rated_race("r1", ["pa", "pb"]), {"p1": flagged(), "p2": clean()})
    casual = scoring(rated_race("r2", ["pa", "pc"], nets=["same", "same"]))
    assert casual.casual == "same_network"  # a custom race, one network
    for s in (held, casual):
        await store.score(s)
    for s in (held, casual):
        for r in s.results:
            mine = next(row for row in await store.results(r.player) if row["race"] == r.race)
            assert mine == {**r.as_dict(), "cleared": False}


async def test_the_daily_table_keeps_what_it_ranks_by(stores: tuple[PlayerStore, Any]) -> None:
    """The day's results carry the fair-play fields; an aborted attempt keeps no streak alive;
    a moderator's clear shows in the day's table."""
    store, mod = stores
    await players(store, "pa", "pb")
    await store.score(scoring(daily_race("d1", "pa", 4), {"p1": flagged(4)}))
    await store.score(scoring(daily_race("d2", "pb", 1, net="n2")))
    rows = {r["player"]: r for r in await store.daily_results("scotch", "2026-12-02")}
    assert rows["pa"]["flagged"] is True and rows["pa"]["cleared"] is False
    assert rows["pa"]["account"] is True and rows["pa"]["net"] == "n1"
    assert rows["pb"]["aborted"] is True and rows["pb"]["flagged"] is False
    assert await store.days_played("pa", "scotch") == ["2026-12-02"]
    assert await store.days_played("pb", "scotch") == []
    listed = await mod.flagged(10)
    assert [(r["race"], r["player"]) for r in listed] == [("d1", "pa")]
    done = await mod.clear("d1", "pa", None, 5_000)
    assert done is not None and done["ratings"] is None  # a daily race is never rated
    rows = {r["player"]: r for r in await store.daily_results("scotch", "2026-12-02")}
    assert rows["pa"]["cleared"] is True
    assert (await store.results("pa"))[0]["cleared"] is True


async def test_every_attempt_at_the_daily_deal_is_kept_with_its_network(
        stores: tuple[PlayerStore, Any]) -> None:
    """Who opened an attempt at the day's deal, from which network and when, ended or not (a
    scout need not end his): the first attempt of each player, for that game and day only."""
    store, _ = stores
    assert await store.daily_attempt("yukon", "2026-12-02", "pa", "r1", "n1", 1_000) == "r1"
    assert await store.daily_attempt("yukon", "2026-12-02", "pa", "r2", "n9", 2_000) == "r1"
    assert await store.daily_attempt("yukon", "2026-12-02", "pb", "r3") == "r3"
    await store.daily_attempt("scotch", "2026-12-02", "pc", "r4", "n1", 3_000)
    lookers = sorted(await store.daily_lookers("yukon", "2026-12-02"), key=lambda r: r["player"])
    assert lookers == [{"player": "pa", "net": "n1", "at": 1_000},
                       {"player": "pb", "net": "", "at": 0}]
    assert await store.daily_lookers("yukon", "2026-12-03") == []


def test_a_database_from_before_keeps_its_attempts(tmp_path: Path) -> None:
    """A database whose attempts had no network gets the columns, its attempts kept."""
    path = tmp_path / "race.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE daily_attempts (game TEXT NOT NULL, day TEXT NOT NULL, "
                   "player TEXT NOT NULL, race TEXT NOT NULL, PRIMARY KEY (game, day, player))")
        db.execute("INSERT INTO daily_attempts VALUES ('yukon', '2026-12-02', 'pa', 'r1')")
    db.close()
    races = SQLiteStore(path)
    try:
        lookers = asyncio.run(races.players().daily_lookers("yukon", "2026-12-02"))
    finally:
        races.close()
    assert lookers == [{"player": "pa", "net": "", "at": 0}]


async def test_a_closed_account_stays_off_the_leaderboard(
        stores: tuple[PlayerStore, Any]) -> None:
    store, mod = stores
    await players(store, "cheat", "pb")
    for i in range(3):
        await store.score(scoring(rated_race(f"r{i}", ["cheat", "pb"])))
    assert "cheat" in [row["id"] for row in await store.leaderboard("scotch", 3, 400.0, 10)]
    await mod.close("cheat", None, "fair_play", 9_000)
    await store.score(scoring(rated_race("later", ["cheat", "pb"])))  # rated all the same
    assert (await store.ratings("cheat"))["scotch"].races == 4
    assert [row["id"] for row in await store.leaderboard("scotch", 3, 400.0, 10)] == ["pb"]


async def test_rated_pairs_count_within_the_window(stores: tuple[PlayerStore, Any]) -> None:
    store, _ = stores
    await players(store, "pa", "pb")
    await store.score(scoring(rated_race("old", ["pa", "pb"])))
    later = REPEAT_WINDOW_MS + 60_000
    race = rated_race("new", ["pa", "pb"], start=later)
    await store.score(scoring(race))
    assert race.finished_at is not None
    assert await store.together("pa", "pb", race.finished_at - REPEAT_WINDOW_MS) == 1
    assert await store.together("pa", "pb", race.finished_at) == 1


# -------------------------------------------------------------------------- Redis only
async def test_redis_keeps_only_the_windows_of_pairs_and_walkouts(redis: RedisServer) -> None:
    """What a score adds to the history of rated pairs (and of walkouts) is trimmed to the
    window when written, and the key expires after it: a player's pairs cannot grow without
    end."""
    from solrace.store.redis_player_data import pair_key
    from solrace.store.redis_players import RedisPlayers

    client = connect(redis.url)
    await client.flushdb()
    store = RedisPlayers(client)
    await players(store, "pa", "pb")
    for i in range(3):
        await store.score(scoring(rated_race(f"old{i}", ["pa", "pb"])))
    assert await client.zcard(pair_key("pa", "pb")) == 3
    await store.score(scoring(rated_race("new", ["pa", "pb"], start=REPEAT_WINDOW_MS + 60_000)))
    assert await client.zrange(pair_key("pb", "pa"), 0, -1) == [b"new"]
    assert 0 < await client.pttl(pair_key("pa", "pb")) <= REPEAT_WINDOW_MS
    await client.aclose()


async def test_redis_history_cap_drops_what_falls_off(redis: RedisServer) -> None:
    """``APPLY``'s push: a result that falls off a player's capped history leaves his results
    and the flagged set with it (the entry of a result from before fair play just goes)."""
    from solrace.store.redis_player_data import (
        FLAGGED,
        Ops,
        Scripts,
        history,
        history_key,
        results_key,
    )

    client = connect(redis.url)
    await client.flushdb()
    scripts = Scripts(client)
    legacy = msgpack.packb({"race": "r0", "player": "pa", "game": "scotch", "at": 1,
                            "place": 1, "racers": 2, "time_ms": None, "foundation": 3,
                            "total": 52, "finished": False, "name": "PA", "rated": True,
                            "before": 1500, "after": 1520, "deviation": 300})
    await client.rpush(history_key("pa"), legacy)
    for i in (1, 2, 3):
        ops = Ops()
        ops.hset(results_key("pa"), f"r{i}", msgpack.packb(
            {"race": f"r{i}", "player": "pa", "game": "scotch", "at": 10 * i, "place": 1,
             "racers": 1, "time_ms": None, "foundation": 0, "total": 52, "finished": False,
             "name": "PA", "flagged": True}))
        ops.zadd(FLAGGED, 1.0, f"r{i}|pa")
        ops.push_result("pa", f"r{i}", 2)
        assert await scripts.apply(ops)
        rows = [row for _, row in await history(client, "pa", 10)]
        if i == 1:  # the old result reads with the fields it never had
            assert [r["race"] for r in rows] == ["r1", "r0"]
            assert rows[1]["delta"] == 20 and rows[1]["aborted"] is False
            assert rows[1]["cleared"] is False and rows[1]["signals"] is None
    assert [r["race"] for r in rows] == ["r3", "r2"]
    assert sorted(await client.hkeys(results_key("pa"))) == [b"r2", b"r3"]
    assert await client.zrange(FLAGGED, 0, -1) == [b"r2|pa", b"r3|pa"]
    await client.aclose()


async def test_redis_apply_writes_nothing_when_a_value_read_changed(
        redis: RedisServer) -> None:
    """A check that fails stops every write of the script, also the ones before it."""
    from solrace.store.redis_player_data import Conflict, Ops, Scripts

    client = connect(redis.url)
    await client.flushdb()
    scripts = Scripts(client)
    await client.hset("sr:{pl}:x", "f", "now")
    ops = Ops()
    ops.hset("sr:{pl}:y", "g", "written")
    ops.same("sr:{pl}:x", "f", "before")
    with pytest.raises(Conflict):
        await scripts.apply(ops)
    assert await client.exists("sr:{pl}:y") == 0
    ops = Ops()
    ops.same("sr:{pl}:x", "f", "now")
    ops.same("sr:{pl}:x", "absent", None)
    ops.hset("sr:{pl}:y", "g", "written")
    assert await scripts.apply(ops)
    assert await client.hget("sr:{pl}:y", "g") == b"written"
    await client.aclose()


class Meanwhile:
    """The scripts of a Redis store, with ``other()`` run once just before its first one: what
    another process does between this store's reads and its write. Counts the scripts sent."""

    def __init__(self, client: Any, other: Callable[[], Awaitable[Any]]) -> None:
        from solrace.store.redis_player_data import Scripts

        self.scripts = Scripts(client)
        self.other: Callable[[], Awaitable[Any]] | None = other
        self.sent = 0

    async def run(self, body: str, keys: list[str], args: list[Any]) -> Any:
        return await self.scripts.run(body, keys, args)

    async def apply(self, ops: Any) -> bool:
        if self.other is not None:
            other, self.other = self.other, None
            await other()
        self.sent += 1
        return await self.scripts.apply(ops)


@pytest.fixture
async def redis_stores(redis: RedisServer) -> AsyncIterator[tuple[Any, Any, Any]]:
    from solrace.store.redis_moderation import RedisModeration
    from solrace.store.redis_players import RedisPlayers

    client = connect(redis.url)
    await client.flushdb()
    yield RedisPlayers(client), RedisModeration(client), client
    await client.aclose()


async def test_redis_a_clear_between_anothers_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """pa's clear has read that pb's flagged result waits; pb's clear runs to its end; pa's
    script then finds pb's result changed, writes nothing, and reads again: now nothing waits,
    and it applies the race's ratings."""
    store, mod, client = redis_stores
    await players(store, "pa", "pb")
    await store.score(scoring(rated_race("r1", ["pa", "pb"]), {"p1": flagged(),
                                                               "p2": flagged()}))
    second = type(mod)(client)
    mod.scripts = Meanwhile(client, lambda: second.clear("r1", "pb", None, 5_000))
    first = await mod.clear("r1", "pa", None, 5_000)
    assert mod.scripts.sent == 2  # a conflict, then the clear
    assert first is not None and first["ratings"] is not None
    assert (await store.ratings("pa"))["scotch"].races == 1
    assert (await store.ratings("pb"))["scotch"].races == 1
    assert await store.scored("r1") == first["ratings"]
    rows = {r["player"]: r for p in ("pa", "pb") for r in await store.results(p)}
    assert all(r["cleared"] and r["rated"] and not r["held"] for r in rows.values())


async def test_redis_a_score_between_a_clears_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """A held race's clear has read pa's rating; a race of pa is scored meanwhile: the clear
    reads again and starts from the rating that race left (none of the two is lost)."""
    store, mod, client = redis_stores
    await players(store, "pa", "pb", "pc")
    await store.score(scoring(rated_race("r1", ["pa", "pb"]), {"p1": flagged()}))
    mod.scripts = Meanwhile(client, lambda: store.score(scoring(rated_race("r2", ["pa", "pc"]))))
    done = await mod.clear("r1", "pa", None, 5_000)
    assert mod.scripts.sent == 2
    assert done is not None and done["ratings"] is not None
    assert (await store.ratings("pa"))["scotch"].races == 2
    mine = {r["race"]: r for r in await store.results("pa")}
    assert mine["r1"]["before"] == mine["r2"]["after"]
    assert (await store.ratings("pa"))["scotch"].shown == mine["r1"]["after"]


async def test_redis_a_clear_between_a_scores_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """The other way round: the score has read pa's rating when the clear applies r1's."""
    store, mod, client = redis_stores
    await players(store, "pa", "pb", "pc")
    await store.score(scoring(rated_race("r1", ["pa", "pb"]), {"p1": flagged()}))
    store.scripts = Meanwhile(client, lambda: mod.clear("r1", "pa", None, 5_000))
    assert await store.score(scoring(rated_race("r2", ["pa", "pc"]))) is not None
    assert store.scripts.sent == 2
    assert (await store.ratings("pa"))["scotch"].races == 2
    mine = {r["race"]: r for r in await store.results("pa")}
    assert mine["r2"]["before"] == mine["r1"]["after"]


async def test_redis_a_close_between_anothers_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """Two accounts that beat pb closed at once: the first close's refund to pb is worked out
    from pb's rating before the second one's refund; it reads again, and pb gets both."""
    store, mod, client = redis_stores
    await players(store, "c1", "c2", "pb")
    for i in range(2):
        await store.score(scoring(rated_race(f"a{i}", ["c1", "pb"])))
        await store.score(scoring(rated_race(f"b{i}", ["c2", "pb"])))
    lost = sum(r["before"] - r["after"] for r in await store.results("pb"))
    before = (await store.ratings("pb"))["scotch"]
    other = type(mod)(client)
    mod.scripts = Meanwhile(client, lambda: other.close("c2", None, "fair_play", 9_000))
    done = await mod.close("c1", None, "fair_play", 9_000)
    assert mod.scripts.sent == 2 and done["closed"] is True
    after = (await store.ratings("pb"))["scotch"]
    assert round(after.mu - before.mu) == lost
    board = [row["id"] for row in await store.leaderboard("scotch", 1, 400.0, 10)]
    assert board == ["pb"]


async def test_redis_a_score_between_a_closes_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """A race of the account is scored while it is being closed: the close reads again (the
    account's history changed), and the race's refund and leaderboard are taken care of."""
    store, mod, client = redis_stores
    await players(store, "cheat", "pb")
    await store.score(scoring(rated_race("r1", ["cheat", "pb"])))
    mod.scripts = Meanwhile(client, lambda: store.score(scoring(rated_race(
        "r2", ["cheat", "pb"], game="yukon"))))
    done = await mod.close("cheat", None, "fair_play", 9_000)
    assert mod.scripts.sent == 2
    assert sorted(r["race"] for r in done["refunds"]) == ["r1", "r2"]
    for game in ("scotch", "yukon"):  # the game he had no rating in when the close read
        assert [r["id"] for r in await store.leaderboard(game, 1, 400.0, 10)] == ["pb"]


async def test_redis_a_refund_between_a_scores_reads_and_write(
        redis_stores: tuple[Any, Any, Any]) -> None:
    """A refund changes a rating but not its count of races: the score checks the whole rating
    it read, so it reads again and keeps the refund."""
    store, mod, client = redis_stores
    await players(store, "cheat", "pb", "pc")
    await store.score(scoring(rated_race("r1", ["cheat", "pb"])))
    lost = (await store.results("pb"))[0]
    was = (await store.ratings("pb"))["scotch"]
    store.scripts = Meanwhile(client, lambda: mod.close("cheat", None, "fair_play", 9_000))
    assert await store.score(scoring(rated_race("r2", ["pc", "pb"]))) is not None
    assert store.scripts.sent == 2
    mine = {r["race"]: r for r in await store.results("pb")}
    assert mine["r2"]["before"] == round(was.mu + lost["before"] - lost["after"])
    assert (await store.ratings("pb"))["scotch"].races == 2
    assert (await store.ratings("pb"))["scotch"].shown == mine["r2"]["after"]
