"""The private pool's deals are sealed at rest (solrace.solver.pool, solrace.core.keys), over
SQLite and over a real Redis: what the store holds, read directly (the SQLite file and its WAL,
every Redis key and its append-only file), tells none of the deals the pool deals; the deals
come back as they were put; a store read with another key deals nothing from those entries and
the pool refills; an entry altered, moved to another game or in the clear text of an older
version is dropped, never dealt."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import solrules
from solrace.core.keys import MasterKey
from solrace.runtime.redis_connect import connect, pool_key
from solrace.solver.jobs import Solver
from solrace.solver.pool import Pool
from solrace.store.base import Store
from solrace.store.redis_store import RedisStore
from solrace.store.sqlite_store import SQLiteStore

from .conftest import T
from .servers import RedisServer

#: Nearly every deal is won, and fast: the refill fills a pool in a second or two.
GAME = "quadruple-canfield"
OTHER_GAME = "yukon"
KEY = MasterKey(b"the deployment's key, 32 bytes.!")
ANOTHER_KEY = MasterKey(b"another deployment's key, 32 b.!")


class Backend:
    """A store, and what it holds at rest read behind its back."""

    def __init__(self, kind: str, where: Path) -> None:
        self.kind = kind
        self.where = where
        self.redis: RedisServer | None = None
        self.store: Store
        if kind == "sqlite":
            self.store = SQLiteStore(where / "race.db")
        else:
            self.redis = RedisServer(where / "redis")
            self.store = RedisStore(connect(self.redis.url), "p0")

    async def at_rest(self) -> bytes:
        """Every byte the store keeps: the database's files, or every Redis key's value and
        the append-only files."""
        if self.redis is None:
            return b"".join(p.read_bytes() for p in sorted(self.where.glob("race.db*")))
        assert isinstance(self.store, RedisStore)
        client = self.store.client
        out = []
        async for name in client.scan_iter(count=1000):
            out.append(name if isinstance(name, bytes) else str(name).encode())
            out.append(await client.dump(name) or b"")
            if await client.type(name) in (b"list", "list"):
                out.extend(await client.lrange(name, 0, -1))
        out += [p.read_bytes() for p in sorted(self.redis.dir.rglob("*")) if p.is_file()]
        return b"\n".join(out)

    async def entries(self, game: str) -> list[str]:
        """The pool's entries of ``game`` as the store holds them."""
        if self.redis is None:
            with sqlite3.connect(self.where / "race.db") as db:
                return [e for (e,) in db.execute(
                    "SELECT entry FROM pool WHERE game = ? ORDER BY id", (game,))]
        assert isinstance(self.store, RedisStore)
        return [e.decode() for e in await self.store.client.lrange(pool_key(game), 0, -1)]

    async def replace(self, game: str, index: int, raw: bytes | str,
                      to_game: str | None = None) -> None:
        """Overwrite the ``index``-th entry of ``game`` behind the store's back (and move it
        to ``to_game``'s pool)."""
        if self.redis is None:
            with sqlite3.connect(self.where / "race.db") as db:
                (row,) = db.execute("SELECT id FROM pool WHERE game = ? ORDER BY id LIMIT 1 "
                                    "OFFSET ?", (game, index)).fetchall()
                db.execute("UPDATE pool SET entry = ?, game = ? WHERE id = ?",
                           (raw, to_game or game, row[0]))
            return
        assert isinstance(self.store, RedisStore)
        client = self.store.client
        if to_game is None:
            await client.lset(pool_key(game), index, raw)
        else:
            await client.lset(pool_key(game), index, b"moved")
            await client.lrem(pool_key(game), 1, b"moved")
            await client.rpush(pool_key(to_game), raw)

    async def close(self) -> None:
        if isinstance(self.store, RedisStore):
            await self.store.client.aclose()
        else:
            self.store.close()
        if self.redis is not None:
            self.redis.stop()


@pytest.fixture(params=["sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    made = Backend(request.param, tmp_path)
    yield made
    await made.close()


def won_deals(game: str, n: int, start: int = 2**62) -> list[tuple[int, int]]:
    """``n`` deals of ``game`` the solver wins (seed, moves), big seeds: 19 decimal digits."""
    found = []
    seed = start
    while len(found) < n:
        result = solrules.solve(solrules.new_game(game, seed), solrules.Budget(100_000))
        if result.verdict == "won":
            found.append((seed, len(result.line)))
        seed += 7919
    return found


def forms(seed: int) -> list[bytes]:
    """Every way a seed could be written in a store: decimal, hex, 8 bytes either way."""
    return [str(seed).encode(), f"{seed:x}".encode(), f"{seed:X}".encode(),
            f"{seed:016x}".encode(), seed.to_bytes(8, "big"), seed.to_bytes(8, "little")]


def taken(pool: Pool, game: str) -> list[tuple[int, int]]:
    return [pool.take(game) for _ in range(pool.available(game))]


async def test_a_filled_pool_tells_no_deal_at_rest(backend: Backend) -> None:
    """The pool filled by its own refill (a real solver process), the store read directly:
    the entries are there, no seed of theirs is; then the same deals are dealt back, won."""
    refill = Solver(hint_seconds=0, par_seconds=1.0, nice=0)
    filler = Pool(backend.store, [GAME], refill, size=3, reserve=0, key=KEY)
    filler.start()
    try:
        async with asyncio.timeout(T * 12):
            while await backend.store.pool_size(GAME) < 3:
                await asyncio.sleep(0.05)
    finally:
        await filler.stop()
    entries = await backend.entries(GAME)
    at_rest = await backend.at_rest()
    assert len(entries) >= 3 and all(e.encode() in at_rest for e in entries)  # the control
    # Another process of the same deployment (the same key) deals them.
    dealer = Pool(backend.store, [GAME], size=0, key=KEY)
    await dealer.claim(GAME, 100)
    deals = taken(dealer, GAME)
    assert len(deals) == len(entries) == filler.tally[GAME].kept
    assert await backend.store.pool_size(GAME) == 0 and dealer.tally[GAME].dropped == 0
    for seed, moves in deals:
        assert not [f for f in forms(seed) if f in at_rest], seed
        result = solrules.solve(solrules.new_game(GAME, seed), solrules.Budget(400_000))
        assert result.verdict == "won" and moves > 0


async def test_deals_come_back_as_they_were_put(backend: Backend) -> None:
    deals = [(2**64 - 1, 1), (0, 0), (2**63 + 5, 4321), (12345, 2**31)]
    pool = Pool(backend.store, [GAME, OTHER_GAME], size=0, key=KEY)
    await pool.put(GAME, deals)
    await pool.put(OTHER_GAME, deals[:1])
    await pool.claim(GAME, 10)
    await pool.claim(OTHER_GAME, 10)
    assert taken(pool, GAME) == deals and taken(pool, OTHER_GAME) == deals[:1]
    # Equal deals are sealed apart: nothing in the store says two entries are one deal.
    await pool.put(GAME, [deals[0], deals[0]])
    first, second = await backend.entries(GAME)
    assert first != second


async def test_a_store_read_with_another_key_deals_nothing_and_refills(
        backend: Backend) -> None:
    mine = won_deals(GAME, 3)
    await Pool(backend.store, [GAME], size=0, key=KEY).put(GAME, mine)
    refill = Solver(hint_seconds=0, par_seconds=1.0, nice=0)
    other = Pool(backend.store, [GAME], refill, size=2, reserve=1, key=ANOTHER_KEY)
    try:
        await other.claim(GAME, 2)
        # Every entry was taken out of the store, none dealt.
        assert other.available(GAME) == 0 and other.tally[GAME].dropped == 3
        assert await backend.store.pool_size(GAME) == 0
        assert other.stats(GAME)["dropped"] == 3
        other.start()
        async with asyncio.timeout(T * 12):
            while other.available(GAME) < 1 or await backend.store.pool_size(GAME) < 2:
                await asyncio.sleep(0.05)
        refilled = [other.take(GAME)]
        await other.claim(GAME, 10)
        refilled += taken(other, GAME)
        assert len(refilled) >= 3 and not {s for s, _ in refilled} & {s for s, _ in mine}
        assert other.tally[GAME].dropped == 3
    finally:
        await other.stop()


async def test_altered_moved_and_clear_text_entries_are_dropped(backend: Backend) -> None:
    deals = won_deals(GAME, 5)
    pool = Pool(backend.store, [GAME, OTHER_GAME], size=0, key=KEY)
    await pool.put(GAME, deals)
    entries = await backend.entries(GAME)
    middle = len(entries[1]) // 2
    flipped = entries[1][:middle] + ("A" if entries[1][middle] != "A" else "B") \
        + entries[1][middle + 1:]
    await backend.replace(GAME, 1, flipped)
    await backend.replace(GAME, 2, entries[2] + "AAAA")
    # A clear-text deal as the version before wrote it, and one moved to another game's pool.
    clear: Any = (msgpack.packb([str(deals[3][0]), deals[3][1]]) if backend.redis
                  else str(deals[3][0]))
    await backend.replace(GAME, 3, clear)
    await backend.replace(GAME, 4, entries[4], to_game=OTHER_GAME)
    await pool.claim(GAME, 10)
    await pool.claim(OTHER_GAME, 10)
    assert taken(pool, GAME) == [deals[0]] and taken(pool, OTHER_GAME) == []
    assert pool.tally[GAME].dropped == 3 and pool.tally[OTHER_GAME].dropped == 1
    assert await backend.store.pool_size(GAME) == await backend.store.pool_size(OTHER_GAME) == 0


async def test_an_older_database_drops_its_clear_text_pool(tmp_path: Path) -> None:
    """A database of the version that kept the pool in clear (pool(id, game, seed, moves)):
    its deals are dropped when the store opens, never dealt; the new pool works."""
    path = tmp_path / "race.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE pool (id INTEGER PRIMARY KEY, game TEXT NOT NULL, "
                   "seed TEXT NOT NULL, moves INTEGER NOT NULL)")
        db.executemany("INSERT INTO pool (game, seed, moves) VALUES (?,?,?)",
                       [(GAME, str(2**62 + i), 90) for i in range(5)])
    db.close()
    store = SQLiteStore(path)
    try:
        assert await store.pool_size(GAME) == 0
        pool = Pool(store, [GAME], size=0, key=KEY)
        await pool.put(GAME, [(7, 70)])
        await pool.claim(GAME, 10)
        assert taken(pool, GAME) == [(7, 70)] and pool.tally[GAME].dropped == 0
    finally:
        store.close()
