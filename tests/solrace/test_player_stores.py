"""The player stores, SQLite and Redis (a real ``redis-server`` on a free port), held to one
contract: unique folded names, hashed keys, single-use tickets, a race scored exactly once
(also when several scorers race each other), the leaderboard's filter, the daily deal's
first-one-wins. (The quick-race queues' contract: test_seek_queues.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import solrules
from solrace.cluster.connect import connect
from solrace.core.identity import Player
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.scoring import scoring
from solrace.store.player_base import PlayerStore
from solrace.store.redis_players import RedisPlayers
from solrace.store.sqlite_store import SQLiteStore

from .servers import RedisServer


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path,
                redis: RedisServer) -> AsyncIterator[PlayerStore]:
    if request.param == "sqlite":
        races = SQLiteStore(tmp_path / "race.db")
        yield races.players()
        races.close()
    else:
        client = connect(redis.url)
        await client.flushdb()
        yield RedisPlayers(client)
        await client.aclose()


def player(pid: str, name: str) -> Player:
    return Player(pid, name, 1_000)


def rated_race(race_id: str, pids: list[str], winner: int = 0, game: str = "scotch") -> Race:
    """A finished rated race of these players: ``winner`` sent a card home, the rest not."""
    seed = next(s for s in range(1, 500)
                if any(">f" in m.text() for m in solrules.new_game(game, s).legal_moves()))
    race = Race(race_id, game, seed, "salt", Options(players=len(pids), rated=True), 0, "host")
    for i, pid in enumerate(pids):
        race.join(f"N{pid}", f"tok{i}", 0, pid=pid)
    race.start("host", 0)
    race.tick(10_000)
    racer = race.racers[f"p{winner + 1}"]
    home = next(m.text() for m in racer.game.legal_moves() if ">f" in m.text())
    race.move(racer.player, home, 1, 11_000)
    for p in race.racers:
        race.resign(p, 12_000)
    assert race.status == "finished"
    return race


async def test_names_keys_and_tickets(store: PlayerStore) -> None:
    assert await store.create(player("pl1", "Ann"), "k1")
    assert not await store.create(player("pl2", "ＡＮＮ"), "k2")  # the same name, folded
    assert await store.create(player("pl2", "Bob"), "k2")
    assert (await store.by_key("k1")) == player("pl1", "Ann")
    assert (await store.by_name("ann")) == player("pl1", "Ann")
    assert await store.by_key("nope") is None
    assert not await store.rename("pl2", "ann")
    assert await store.rename("pl1", "Annie")
    assert await store.rename("pl2", "Ann")  # freed
    assert (await store.by_name("ANN")).id == "pl2"  # type: ignore[union-attr]
    await store.set_password("pl1", "scrypt$1$2$3$aa$bb")
    assert (await store.by_id("pl1")).password == "scrypt$1$2$3$aa$bb"  # type: ignore[union-attr]
    await store.add_key("pl1", "k3", 5)
    assert (await store.by_key("k3")).id == "pl1"  # type: ignore[union-attr]
    await store.drop_key("k3")
    assert await store.by_key("k3") is None and (await store.by_key("k1")) is not None
    now = 10**12
    await store.put_ticket("t1", "pl1", now + 60_000)
    assert await store.take_ticket("t1", now) == "pl1"
    assert await store.take_ticket("t1", now) is None  # once
    await store.put_ticket("t2", "pl1", now + 60_000)
    assert await store.take_ticket("t2", now + 60_001) is None  # expired


async def test_a_race_is_scored_once_even_by_racing_scorers(store: PlayerStore) -> None:
    for pid in ("pa", "pb"):
        assert await store.create(player(pid, pid.upper()), "k" + pid)
    race = rated_race("r1", ["pa", "pb"])
    bodies = await asyncio.gather(*(store.score(scoring(race)) for _ in range(4)))
    done = [b for b in bodies if b is not None]
    assert len(done) == 1 and done[0]["rated"] is True
    assert (await store.ratings("pa"))["scotch"].races == 1
    assert (await store.scored("r1")) == done[0]
    assert (await store.results("pa"))[0]["place"] == 1


async def test_ratings_of_one_player_in_two_races_scored_at_once(store: PlayerStore) -> None:
    """Two races sharing a player, scored together: both count (none overwrites the other's
    update)."""
    for pid in ("pa", "pb", "pc"):
        assert await store.create(player(pid, pid.upper()), "k" + pid)
    one, two = rated_race("r1", ["pa", "pb"]), rated_race("r2", ["pa", "pc"])
    await asyncio.gather(store.score(scoring(one)), store.score(scoring(two)))
    assert (await store.ratings("pa"))["scotch"].races == 2
    assert {r["race"] for r in await store.results("pa")} == {"r1", "r2"}


async def test_leaderboard_and_daily(store: PlayerStore) -> None:
    for pid in ("pa", "pb"):
        assert await store.create(player(pid, pid.upper()), "k" + pid)
    for i in range(6):
        await store.score(scoring(rated_race(f"r{i}", ["pa", "pb"])))
    board = await store.leaderboard("scotch", 5, 400.0, 10)
    assert [row["id"] for row in board] == ["pa", "pb"] and board[0]["races"] == 6
    assert board[0]["rating"] > board[1]["rating"]
    assert await store.leaderboard("scotch", 7, 400.0, 10) == []
    assert await store.leaderboard("scotch", 5, 10.0, 10) == []  # all still uncertain
    assert await store.daily("scotch", "2026-12-02") is None
    kept = await store.put_daily("scotch", "2026-12-02", 42, "salt1")
    assert kept == (42, "salt1")
    assert await store.put_daily("scotch", "2026-12-02", 43, "salt2") == (42, "salt1")
    assert await store.daily_attempt("scotch", "2026-12-02", "pa", "rA") == "rA"
    assert await store.daily_attempt("scotch", "2026-12-02", "pa", "rB") == "rA"


async def test_a_redis_race_with_players_waits_on_the_list_until_scored(
        redis: RedisServer) -> None:
    """On Redis a race a player joined is put on the list to score in the pipeline of its
    commit; the sweep of any process (here, a second store) scores it once and takes it off."""
    from solrace.service.scoring import Scorer
    from solrace.service.supervisor import Supervisor
    from solrace.store.redis_store import RedisStore

    client = connect(redis.url)
    await client.flushdb()
    races = RedisStore(client, "p1")
    await races.start()
    race = rated_race("rd1", ["pa", "pb"])
    fresh = Race("rd1", race.game, race.seed, "salt", race.options, 0, "host")
    races.add_race(fresh)
    for i, pid in enumerate(["pa", "pb"]):
        races.append(fresh.join(f"N{pid}", f"tok{i}", 0, pid=pid).log)
    races.append(fresh.start("host", 0).log)
    fresh.tick(10_000)
    for p in list(fresh.racers):
        races.append(fresh.resign(p, 12_000).log)
    races.mark_finished("rd1", 12_000)
    await races.flushed()
    players = races.players()
    assert await players.to_score(10) == ["rd1"]
    published: list[Any] = []
    other = RedisStore(connect(redis.url), "p2")
    scorer = Scorer(players, other.load, lambda race, event: published.append(event),
                    Supervisor())
    assert await scorer.sweep() == 1
    assert await players.to_score(10) == []
    assert await scorer.sweep() == 0
    body = await players.scored("rd1")
    assert body is not None and body["rated"] is True and published
    await client.aclose()
    await other.client.aclose()
