"""The daily deal is always one the solver has won (solrace.service.daily, solrace.solver.pool's
``first_won``): with no pool, fresh secret seeds are solved by the server's solver until one is
won — never a lost one, never an unchecked one; two players asking at once share one draw; a
server with no solver at all answers ``unavailable``. Checked with a real solver process, in a
server in this process and in a ``solrace serve --pool 0``."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, cast

import pytest
import solrules
from solrace.core import daily as calendar
from solrace.net.app import App
from solrace.settings import PAR_NODES
from solrace.solver.catalogue import catalogue_dir
from solrace.solver.jobs import Par, Solver
from solrace.solver.pool import first_won
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import ServerError

from .conftest import Server, T, serving
from .test_accounts import browser
from .test_key_file import serve


def catalogued(game: str, verdict: str, n: int) -> list[int]:
    """``n`` seeds of the public catalogue the solver decided so (the lost ones of Scotch are
    proved lost at once)."""
    seeds = []
    with (catalogue_dir() / f"{game}.jsonl").open() as f:
        for line in f:
            entry = json.loads(line)
            if entry["verdict"] == verdict:
                seeds.append(int(entry["seed"]))
                if len(seeds) == n:
                    break
    return seeds


def won(game: str, seed: int) -> bool:
    """The solver's verdict on the deal, worked out here, with the server's par budget."""
    return solrules.solve(solrules.new_game(game, seed),
                          solrules.Budget(PAR_NODES)).verdict == "won"


class Logged(Solver):
    """The real solver, which notes each deal it was asked to solve and its verdict."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.asked: list[tuple[str, int, str]] = []

    async def solve(self, game: str, seed: int) -> Par:
        par = await super().solve(game, seed)
        self.asked.append((game, seed, par["verdict"]))
        return par


async def test_the_draw_skips_every_deal_not_won() -> None:
    """The loop alone, with the real solver: proved-lost deals first, then a won one."""
    lost = catalogued("scotch", "lost", 5)
    good = catalogued("scotch", "won", 2)
    solver = Logged(hint_seconds=0, par_seconds=5.0, nice=0)
    try:
        found = await first_won("scotch", solver.solve, iter([*lost, *good]))
        assert found is not None and found[0] == good[0] and found[1] > 0
        assert [s for _, s, _ in solver.asked] == [*lost, good[0]]  # nothing after the win
        assert [v for *_, v in solver.asked] == ["lost"] * 5 + ["won"]
        # Bounded: none won among the seeds given, none dealt.
        assert await first_won("scotch", solver.solve, iter(lost)) is None
    finally:
        await solver.stop()

    async def unknown(game: str, seed: int) -> Par:  # a job that failed, or ran out of budget
        return {"verdict": "unknown"}

    assert await first_won("yukon", unknown, range(3)) is None


@pytest.fixture
async def no_pool(tmp_path: Path) -> Any:
    """A server with a solver and no pool (``--pool 0`` in this process)."""
    store = SQLiteStore(tmp_path / "race.db")
    (tmp_path / "index.html").write_text("<!doctype html><title>solrace</title>")
    solver = Logged(hint_seconds=0, par_seconds=5.0, nice=0)
    app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=tmp_path, pool=None,
              solver=solver)
    yield app, solver
    await app.stop()
    store.close()


async def test_without_a_pool_every_daily_deal_is_won(no_pool: Any) -> None:
    """Twelve days of Scotch (about one deal in three is not won: an unchecked draw would
    deal one of those nearly surely), and today's deal of every game over a socket."""
    app, solver = no_pool
    today = int(time.time() * 1000)
    for i in range(12):
        day = calendar.day_of(today + i * calendar.DAY_MS)
        kept = await app.daily.deal("scotch", day)
        assert kept is not None and won("scotch", kept[0]), (day, kept)
        assert (await app.daily.deal("scotch", day)) == kept  # drawn once, kept
    # Every draw ended at its first won deal: one won deal solved per day drawn.
    assert [v for *_, v in solver.asked].count("won") == 12
    async with serving(app) as srv:
        ann, _ = await browser(srv)
        for game in solrules.GAMES:
            paired = await ann.request({"type": "daily", "game": game}, timeout=T * 12)
            assert paired["kind"] == "daily"
            seed, _ = await app.players.daily(game, calendar.day_of(app.hub.clock()))
            assert won(game, seed), (game, seed)
            # Its par is known at once: the solver's own verdict on it.
            assert solver.pars[game, seed]["verdict"] == "won"


async def test_two_players_asking_at_once_share_one_draw(no_pool: Any) -> None:
    app, solver = no_pool
    day = calendar.day_of(int(time.time() * 1000))
    draws: list[int] = []
    results = asyncio.gather(*[app.daily.deal("yukon", day) for _ in range(6)])
    while not results.done():
        draws.append(sum(name.startswith("draw the daily yukon")
                         for name in app.supervisor.running()))
        await asyncio.sleep(0)
    kept = results.result()
    assert len(set(kept)) == 1 and max(draws) == 1
    # One draw: deals solved in turn until the first won, which is the day's.
    verdicts = [v for *_, v in solver.asked]
    assert verdicts.count("won") == 1 and verdicts[-1] == "won"
    assert solver.asked[-1][1] == kept[0][0]


async def test_a_server_with_no_solver_deals_no_unchecked_daily_deal(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "race.db")
    (tmp_path / "index.html").write_text("<!doctype html><title>solrace</title>")
    app = App(store, countdown=0.05, rate_limit=0, http_rate=0, client=tmp_path, pool=None,
              solver=None)
    try:
        async with serving(app) as srv:
            ann, _ = await browser(srv)
            with pytest.raises(ServerError) as err:
                await ann.request({"type": "daily", "game": "scotch"}, timeout=T * 12)
            assert err.value.code == "unavailable" and "solver" in str(err.value)
        assert await app.players.daily("scotch", calendar.day_of(app.hub.clock())) is None
    finally:
        await app.stop()
        store.close()


async def daily_of(url: str, game: str) -> dict[str, Any]:
    """``daily`` asked of the server at ``url`` by a browser's client: its answer."""
    srv = Server(cast(App, None), url, url.replace("ws://", "http://").removesuffix("/ws"))
    try:
        ann, _ = await browser(srv)
        try:
            return dict(await ann.request({"type": "daily", "game": game}, timeout=T * 12))
        except ServerError as exc:
            return {"error": exc.code}
    finally:
        for client in srv.clients:
            await client.close()


async def test_solrace_serve_with_no_pool_deals_a_won_daily_deal(tmp_path: Path) -> None:
    db = tmp_path / "races.db"
    with serve("--db", str(db), "--par-seconds", "5") as server:
        assert (await daily_of(server.url, "scotch"))["kind"] == "daily"
    with sqlite3.connect(db) as conn:
        (seed,), = conn.execute("SELECT seed FROM daily WHERE game = 'scotch'").fetchall()
    conn.close()
    assert won("scotch", int(seed))
    # No solver at all (no par, no hints, no pool's refill): unavailable, nothing kept.
    with serve("--db", str(tmp_path / "other.db")) as server:
        assert await daily_of(server.url, "yukon") == {"error": "unavailable"}
    with sqlite3.connect(tmp_path / "other.db") as conn:
        assert conn.execute("SELECT count(*) FROM daily").fetchone() == (0,)
    conn.close()
