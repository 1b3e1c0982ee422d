"""The private pool of winnable deals (solrace.solver.pool): filled by a real solver process, taken
once whatever the number of takers (SQLite and a real Redis), and no lookup in the public
catalogue finds a deal it deals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import solrules
from solrace.net.app import App
from solrace.runtime.redis_connect import connect
from solrace.solver.catalogue import load_catalogue
from solrace.solver.jobs import Solver
from solrace.solver.pool import Pool
from solrace.store.redis_store import RedisStore
from solrace.store.sqlite_store import SQLiteStore

from .conftest import T, serving
from .servers import RedisServer


async def test_the_refill_solves_fresh_deals_until_the_pool_is_full(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "race.db")
    # At the normal priority: at nice 19 (the server's), a machine busy with other work at the
    # normal priority starves the refill by design, which is not what this test checks.
    refill = Solver(hint_seconds=0, par_seconds=1.0, nice=0)
    pool = Pool(store, ["scotch"], refill, size=2, reserve=1)
    pool.start()
    try:
        async with asyncio.timeout(T * 12):
            while pool.stats("scotch")["ready"] < 2 + 1:  # the pool, and this reserve
                await asyncio.sleep(0.05)
        stats = pool.stats("scotch")
        assert stats["tried"] >= stats["kept"] >= 3 and stats["kept_per_minute"] > 0
        assert pool.available("scotch") == 1
        deals = [pool.take("scotch")]
        await pool.claim("scotch", 100)
        deals += [pool.take("scotch") for _ in range(pool.available("scotch"))]
        assert len(deals) >= 3 and len({seed for seed, _ in deals}) == len(deals)
        for seed, moves in deals:  # each is won, as the pool says, with its par
            result = solrules.solve(solrules.new_game("scotch", seed), solrules.Budget(400_000))
            assert result.verdict == "won" and moves > 0
        # Taking wakes the refill: the reserve and the pool fill up again.
        async with asyncio.timeout(T * 12):
            while pool.available("scotch") < 1 or await store.pool_size("scotch") < 1:
                await asyncio.sleep(0.05)
    finally:
        await pool.stop()
        store.close()


async def test_two_processes_never_take_the_same_deal_from_sqlite(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path / "race.db")
    second = SQLiteStore(tmp_path / "race.db")
    await first.pool_put("yukon", [f"entry {i}" for i in range(1, 201)])
    try:
        takes = await asyncio.gather(*[store.pool_take("yukon", 7)
                                       for _ in range(15) for store in (first, second)])
        entries = [entry for taken in takes for entry in taken]
        assert len(entries) == 200 and len(set(entries)) == 200
        assert await first.pool_size("yukon") == 0
    finally:
        first.close()
        second.close()


async def test_two_processes_never_take_the_same_deal_from_redis(tmp_path: Path) -> None:
    redis = RedisServer(tmp_path / "redis")
    stores = [RedisStore(connect(redis.url), f"p{i}") for i in range(2)]
    try:
        await stores[0].pool_put("scotch", [f"s1.entry-{i}" for i in range(300)])
        takes = await asyncio.gather(*[store.pool_take("scotch", 11)
                                       for _ in range(15) for store in stores])
        entries = [entry for taken in takes for entry in taken]
        assert len(entries) == 300 and len(set(entries)) == 300
        assert all(entry.startswith("s1.entry-") for entry in entries)  # text round trip
        assert await stores[1].pool_size("scotch") == 0
    finally:
        for store in stores:
            await store.client.aclose()
        redis.stop()


def first_board(game: str, seed: int) -> str:
    """What a racer sees at the start: his board, face-down cards as null."""
    return json.dumps(solrules.new_game(game, seed).board(), sort_keys=True)


@pytest.mark.parametrize("demo", [False, True])
async def test_the_public_catalogue_does_not_find_a_pool_deal(tmp_path: Path,
                                                              demo: bool) -> None:
    """The attack: index every deal of the shipped catalogue by the board a racer sees at
    the start, then look up the board of a winnable race. A demo server deals from that
    catalogue (the attack works there: the control); a live server deals fresh seeds."""
    entries = load_catalogue("yukon")
    index = {first_board("yukon", e.seed): e.seed for e in entries}
    store = SQLiteStore(tmp_path / "race.db")
    fresh = []
    for seed in range(2**40, 2**40 + 4000):  # a few deals the solver wins at once
        if len(fresh) == 3:
            break
        result = solrules.solve(solrules.new_game("yukon", seed), solrules.Budget(20_000))
        if result.verdict == "won":
            fresh.append((seed, len(result.line)))
    pool = Pool(store, solrules.GAMES, size=0)
    await pool.put("yukon", fresh)
    app = App(store, countdown=0.05, rate_limit=0, client=tmp_path, demo_catalogue=demo,
              pool=None if demo else pool)
    found = []
    async with serving(app) as srv:
        for _ in range(3):
            host = await srv.client()
            created = await host.create("yukon", winnable=True)
            racer = await srv.client()
            await racer.join(created["race"], name="cheat")
            await host.start(created["race"], created["host_token"])
            state = await racer.wait_state(created["race"], T)
            found.append(index.get(json.dumps(state["board"], sort_keys=True)))
    app.close()
    store.close()
    if demo:
        assert all(seed is not None for seed in found)  # the attack works on the catalogue
    else:
        assert found == [None, None, None]
