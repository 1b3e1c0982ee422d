"""The player stores, SQLite and Redis (a real ``redis-server`` on a free port), held to one
contract: names unique by skeleton (and stores keyed under an earlier rule keyed again),
hashed keys, single-use tickets, sign-in failures, known networks and accounts per network
and day, a race scored exactly once (also when several scorers race each other), the
leaderboard's filter, the daily deal's first-one-wins. (The quick-race queues' contract:
test_seek_queues.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import solrules
from solrace.core.identity import Player
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.scoring import scoring
from solrace.runtime.redis_connect import connect
from solrace.settings import EARLY_RESIGN_MS
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


def committed_moves(race: Race, player: str, n: int, at: int, home_first: bool = False) -> int:
    """Play ``n`` moves for ``player`` (cards home first if ``home_first``; never an undo):
    enough not to abort the race. The time after them."""
    racer = race.racers[player]
    for _ in range(n):
        legal = [m.text() for m in racer.game.legal_moves()]
        home = [m for m in legal if ">f" in m]
        move = home[0] if home_first and home else legal[0]
        race.move(player, move, racer.seq + 1, at)
        at += 1000
    return at


def rated_race(race_id: str, pids: list[str], winner: int = 0, game: str = "scotch",
               nets: list[str] | None = None, accounts: bool = True, start: int = 0) -> Race:
    """A finished rated race of these players (accounts from networks of their own unless
    said), made at ``start``: each makes three moves (the winner sends cards home first), then
    everyone but the winner resigns (a minute on: an early resign would be a walkout)."""
    seed = next(s for s in range(1, 500)
                if any(">f" in m.text() for m in solrules.new_game(game, s).legal_moves()))
    race = Race(race_id, game, seed, "salt", Options(players=len(pids), rated=True), start,
                "host")
    nets = nets or [f"net{i}" for i in range(len(pids))]
    for i, pid in enumerate(pids):
        race.join(f"N{pid}", f"tok{i}", start, pid=pid, net=nets[i], account=accounts)
    race.start("host", start)
    race.tick(start + 10_000)
    at = start + 11_000
    for i, p in enumerate(race.racers):
        at = committed_moves(race, p, 3, at, home_first=i == winner)
    at += EARLY_RESIGN_MS
    for i, p in enumerate(race.racers):
        if i != winner and race.status != "finished":
            race.resign(p, at)
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


async def test_names_are_one_name_by_skeleton(store: PlayerStore) -> None:
    assert await store.create(player("pl1", "anna5629"), "k1")
    # A Cyrillic а, capitals, full width, a Greek Α: one name for a reader, one name here.
    for twin in ("\u0430nna5629", "ANNA5629", "\uff41\uff4e\uff4e\uff415629", "\u0391NNA5629"):
        assert not await store.create(player("pl2", twin), "k2"), twin
        assert (await store.by_name(twin)) == player("pl1", "anna5629"), twin
    assert await store.create(player("pl2", "Bob"), "k2")
    assert not await store.rename("pl2", "\u0430nna5629")
    assert (await store.by_name("B0B")).id == "pl2"  # type: ignore[union-attr]
    assert await store.rename("pl2", "B0b")  # 0 is o: his own name, written otherwise
    assert (await store.by_id("pl2")).name == "B0b"  # type: ignore[union-attr]
    assert await store.create(player("pl3", "rn"), "k3")
    assert not await store.create(player("pl4", "m"), "k4")  # m looks like rn


async def test_sign_in_failures_networks_and_accounts_per_day(store: PlayerStore) -> None:
    now = 10**12
    keys = ["n:ann", "a:tag1", "p:tag1:ann"]
    assert await store.failures(keys, now) == [(0, 0)] * 3
    await store.add_failure(keys, now)
    await store.add_failure(keys[:1], now + 5)
    assert await store.failures(keys, now + 10) == [(2, now + 5), (1, now), (1, now)]
    await store.clear_failures(keys[2:])
    assert await store.failures(keys, now + 10) == [(2, now + 5), (1, now), (0, 0)]
    assert await store.failures(["n:nobody"], now) == [(0, 0)]

    assert await store.create(player("pl1", "Ann"), "k1")
    assert not await store.known_network("pl1", "tag1", now)
    await store.add_network("pl1", "tag1", now)
    assert await store.known_network("pl1", "tag1", now + 1)
    assert not await store.known_network("pl1", "tag2", now + 1)
    assert not await store.known_network("pl1", "tag1", now + 91 * 86_400_000)  # long ago
    for i in range(25):  # only his latest networks are kept
        await store.add_network("pl1", f"net{i}", now + 1 + i)
    assert not await store.known_network("pl1", "tag1", now + 30)
    assert await store.known_network("pl1", "net24", now + 30)

    taken = [await store.take_account("tag1", "2026-12-04", 3) for _ in range(5)]
    assert taken == [True, True, True, False, False]
    assert await store.take_account("tag2", "2026-12-04", 3)  # another network
    assert await store.take_account("tag1", "2026-12-05", 3)  # the next day


async def test_redis_counts_are_one_count_for_every_process(redis: RedisServer) -> None:
    """Two processes' stores (two clients of one Redis) counting accounts of one network at
    once: never more than the cap between them; a failure counted by one is seen by the other."""
    client = connect(redis.url)
    await client.flushdb()
    one, two = RedisPlayers(client), RedisPlayers(connect(redis.url))
    taken = await asyncio.gather(*(store.take_account("net", "2026-12-04", 7)
                                   for store in (one, two) * 10))
    assert taken.count(True) == 7
    await one.add_failure(["n:ann"], 5)
    await two.add_failure(["n:ann"], 9)
    assert await one.failures(["n:ann"], 10) == [(2, 9)]
    await client.aclose()
    await two.client.aclose()


async def test_failures_are_forgotten_an_hour_after_the_last(tmp_path: Path) -> None:
    """In memory (the embedded server): forgotten after an hour, and bounded."""
    from solrace.store.memory_failures import MemoryFailures

    book = MemoryFailures(size=3)
    book.add(["a", "b"], 0)
    book.add(["a"], 3_000_000)
    assert book.get(["a", "b"], 3_700_000) == [(2, 3_000_000), (0, 0)]
    assert book.get(["a"], 6_600_001) == [(0, 0)]
    book.add(["c", "d", "e", "f"], 7_000_000)
    assert len(book.counts) == 3 and "c" not in book.counts  # the least recent forgotten


async def test_an_old_database_is_keyed_again_by_skeleton(tmp_path: Path) -> None:
    """Names keyed under the rule before (NFKC, case-folded): at the first start on the new
    rule the older of two players whose names are now one name keeps it; the newer keeps his
    name as shown, under a key of his own, and can rename himself."""
    import sqlite3
    import unicodedata

    path = tmp_path / "race.db"
    SQLiteStore(path).close()  # the schema
    db = sqlite3.connect(path)
    old = [("plold", "anna", 1_000), ("plnew", "\u0430nna", 2_000), ("plbob", "Bob", 3_000)]
    db.executemany("INSERT INTO players VALUES (?,?,?,?,NULL)",
                   [(pid, name, unicodedata.normalize("NFKC", name).casefold(), at)
                    for pid, name, at in old])
    db.executemany("INSERT INTO player_keys VALUES (?,?,0)",
                   [(f"k{pid}", pid) for pid, _, _ in old])
    db.commit()
    db.close()
    races = SQLiteStore(path)
    store = races.players()
    assert (await store.by_name("\u0430nna")).id == "plold"  # type: ignore[union-attr]
    assert (await store.by_key("kplnew")).name == "\u0430nna"  # type: ignore[union-attr]
    assert not await store.create(player("pl9", "ANNA"), "k9")
    assert await store.rename("plnew", "\u0430nna")  # his own name still
    assert await store.rename("plnew", "Annette")
    assert not await store.rename("plbob", "\u0430nna")  # the older one's
    races.close()
    races = SQLiteStore(path)  # keyed once: the second start changes nothing
    assert (await races.players().by_name("annette")).id == "plnew"  # type: ignore[union-attr]
    races.close()


async def test_redis_names_before_skeletons_are_indexed(redis: RedisServer) -> None:
    """Players written by the version before (their hash without ``nk``, the folded-name
    keys): the first identity call of a new process indexes them by skeleton, oldest first."""
    client = connect(redis.url)
    await client.flushdb()
    for pid, name, at in (("plold", "anna", 1_000), ("plnew", "\u0430nna", 2_000)):
        await client.hset(f"sr:{{pl}}:p:{pid}", mapping={"name": name, "created_at": at})
        await client.set(f"sr:{{pl}}:name:{name}", pid)
        await client.set(f"sr:{{pl}}:key:k{pid}", pid)
    first, second = RedisPlayers(client), RedisPlayers(connect(redis.url))
    got = await asyncio.gather(first.by_name("ANNA"), second.by_name("anna"))
    assert [p.id for p in got if p is not None] == ["plold", "plold"]
    assert not await first.create(player("pl9", "\u0430NNA"), "k9")
    assert await second.rename("plnew", "\u0430nna")  # his own name still
    assert await second.rename("plnew", "Annette")
    assert (await first.by_name("annette")).id == "plnew"  # type: ignore[union-attr]
    assert not await first.rename("plold", "Annette")
    await client.aclose()
    await second.client.aclose()


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
    from solrace.runtime.supervisor import Supervisor
    from solrace.service.scoring import Scorer
    from solrace.store.redis_store import RedisStore

    client = connect(redis.url)
    await client.flushdb()
    races = RedisStore(client, "p1")
    await races.start()
    race = rated_race("rd1", ["pa", "pb"])
    fresh = Race("rd1", race.game, race.seed, "salt", race.options, 0, "host")
    races.add_race(fresh)
    for i, pid in enumerate(["pa", "pb"]):
        races.append(fresh.join(f"N{pid}", f"tok{i}", 0, pid=pid, net=f"n{i}",
                                account=True).log)
    races.append(fresh.start("host", 0).log)
    fresh.tick(10_000)
    at = 11_000
    for p in list(fresh.racers):
        for _ in range(3):
            racer = fresh.racers[p]
            move = racer.game.legal_moves()[0].text()
            races.append(fresh.move(p, move, racer.seq + 1, at).log)
            at += 1000
    races.append(fresh.resign("p2", at).log)
    races.mark_finished("rd1", at)
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
