"""The solver in races, on a real server with its real solver process: hints, par, winnable
deals (solrace.solver.assist, solrace.solver.deal_source, solrace.solver.jobs)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import solrules
from solrace.net.app import App
from solrace.settings import ANALYSIS_TURN
from solrace.solver.deal_source import DealSource
from solrace.solver.jobs import Solver
from solrace.solver.pool import Pool
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient, ServerError

from .conftest import Server, T, serving
from .test_server import code_of, drain

WINNABLE = {"scotch": [0, 2, 3], "yukon": [3, 4]}  # solved in a few ms (see catalogue())
LOST_SCOTCH = 6  # proved lost at the deal: no card can move anywhere useful


def catalogue(directory: Path) -> dict[str, dict[int, int]]:
    """A small catalogue of winnable deals, in the shipped format; seed -> line length."""
    directory.mkdir(exist_ok=True)
    lengths: dict[str, dict[int, int]] = {}
    for game, seeds in WINNABLE.items():
        lines = []
        for i, seed in enumerate(seeds):
            result = solrules.solve(solrules.new_game(game, seed), solrules.Budget(50_000))
            assert result.verdict == "won"
            lengths.setdefault(game, {})[seed] = len(result.line)
            lines.append(json.dumps({"i": i, "seed": str(seed), "verdict": "won",
                                     "length": len(result.line), "nodes": result.nodes,
                                     "seconds": 0, "line": " ".join(result.line)}))
        (directory / f"{game}.jsonl").write_text("\n".join(lines) + "\n")
    return lengths


@pytest.fixture
async def solver_server(tmp_path: Path) -> AsyncIterator[Server]:
    """A server with its solver, and a private pool holding the deals of WINNABLE (put there
    as the pool's refill would: seed and par), which it deals once each."""
    storage = SQLiteStore(tmp_path / "race.db")
    # The test solvers run at the normal priority: at the server's (nice 10, and 19 for the
    # pool), a machine busy at the normal priority starves them by design, which is not what
    # these tests check (seen beside a CPU burner: a hint's job overran and came back empty).
    solver = Solver(hint_seconds=5.0, par_seconds=5.0, nice=0)
    lengths = catalogue(tmp_path / "catalogue")
    pool = Pool(storage, solrules.GAMES, solver=None, size=0)
    for game, by_seed in lengths.items():
        await pool.put(game, list(by_seed.items()))
    app = App(storage, countdown=0.05, rate_limit=0, client=tmp_path, solver=solver,
              pool=pool)
    async with serving(app) as srv:
        yield srv
    await app.stop()
    storage.close()


async def race_of(server: Server, game: str, seed: int | None = None, players: int = 2,
                  **opts: Any) -> tuple[str, list[RaceClient]]:
    host = await server.client()
    if seed is not None:
        opts["seed"] = str(seed)
    race = (await host.create(game, players=players, **opts))["race"]
    racers = []
    for i in range(players):
        client = await server.client()
        await client.join(race, name=f"r{i}")
        racers.append(client)
    for client in racers:  # once everyone is in: two ready start the countdown
        await client.ready(race)
    for client in racers:
        await client.wait_state(race, T)
    return race, racers


async def test_following_the_hints_wins_the_race(solver_server: Server) -> None:
    race, (ann, bob) = await race_of(solver_server, "scotch", 0, hints=True)
    asked = 0
    while True:
        hint = await patient_hint(ann, race)
        asked += 1
        assert hint["source"] == "solver" and not hint["lost"] and hint["hints"] == asked
        assert hint["move"] in ann.states[race]["legal"]  # from a winning line: legal here
        again = await patient_hint(ann, race)  # the same position: the same hint, not counted again
        assert again["move"] == hint["move"] and again["hints"] == asked
        state = await ann.move(race, hint["move"])
        if state["progress"]["foundation"] == state["progress"]["total"]:
            break
        assert asked < 200
    # Everyone saw the count go up; the standings carry it.
    events = await drain(bob, "finished")
    counts = [e["hints"] for e in events if e["type"] == "hinted" and e["player"] == "p1"]
    assert counts == list(range(1, asked + 1))
    await bob.resign(race)
    over = await drain(bob, "race_over")
    [row] = [r for r in over[-1]["standings"] if r["player"] == "p1"]
    assert row["hints"] == asked and row["place"] == 1
    assert over[-1]["reason"] == "done"


async def test_hints_are_refused_where_they_do_not_belong(solver_server: Server) -> None:
    race, (ann, _) = await race_of(solver_server, "scotch", 0)
    assert await code_of(ann.hint(race)) == "forbidden"  # the race does not allow hints
    race, (ann, bob, _) = await race_of(solver_server, "yukon", 3, players=3, hints=True)
    outsider = await solver_server.client()
    await outsider.watch(race)
    assert await code_of(outsider.hint(race)) == "forbidden"  # not a racer
    await ann.resign(race)
    assert await code_of(ann.hint(race)) == "race_not_running"  # no longer racing
    hint = await patient_hint(bob, race)
    assert hint["move"] in bob.states[race]["legal"] and hint["hints"] == 1


async def patient_hint(client: RaceClient, race: str) -> dict[str, Any]:
    """A hint, asked again while the solver says it is busy (a starved worker on a loaded
    machine overruns its budget and is replaced): as a player's client does."""
    for _ in range(5):
        try:
            return await client.hint(race)
        except ServerError as exc:
            if exc.code != "unavailable":
                raise
            await asyncio.sleep(0.5)
    return await client.hint(race)


async def test_a_hint_in_a_hidden_card_game_is_legal_and_the_count_survives_a_restart(
    tmp_path: Path,
) -> None:
    storage = SQLiteStore(tmp_path / "r.db")
    app = App(storage, countdown=0.05, rate_limit=0, client=tmp_path,
              solver=Solver(hint_seconds=5.0, par_seconds=0, nice=0))
    async with serving(app) as server:
        race, (ann, _bob) = await race_of(server, "quadruple-canfield", 42, hints=True)
        for _ in range(3):
            hint = await patient_hint(ann, race)
            assert hint["move"] is None or hint["move"] in ann.states[race]["legal"]
            if hint["move"] is None:
                break
            await ann.move(race, hint["move"])
        count = hint["hints"]
    await app.stop()
    storage.close()
    storage = SQLiteStore(tmp_path / "r.db")
    try:
        reloaded = storage.read(race)
        assert reloaded is not None and reloaded.options.hints
        assert reloaded.racers["p1"].hints == count >= 1
    finally:
        storage.close()


async def test_par_comes_once_the_deal_is_revealed(solver_server: Server) -> None:
    race, (ann, bob) = await race_of(solver_server, "scotch", LOST_SCOTCH)
    spectator = await solver_server.client()
    snap = await spectator.watch(race)
    assert "par" not in snap  # nothing about the deal before the end
    await ann.resign(race)
    await bob.resign(race)
    over = (await drain(spectator, "race_over"))[-1]
    par = over.get("par") or (await spectator.next_event("par", timeout=T))["par"]
    assert par == {"verdict": "lost"}
    assert (await spectator.watch(race))["par"] == {"verdict": "lost"}


async def test_a_winnable_race_draws_a_deal_of_the_pool_with_its_par_once(
    solver_server: Server, tmp_path: Path,
) -> None:
    lengths = catalogue(tmp_path / "catalogue")
    host = await solver_server.client()
    dealt = []
    for _ in lengths["yukon"]:  # as many winnable races as the pool has deals
        created = await host.create("yukon", winnable=True)
        assert created["options"]["winnable"] and not created["seed_chosen"]
        assert "seed" not in created and "demo_catalogue" not in created["options"]
        race = created["race"]
        ann = await solver_server.client()
        await ann.join(race, name="ann")
        await host.start(race, created["host_token"])
        await ann.wait_state(race, T)
        await ann.resign(race)
        over = (await drain(ann, "race_over"))[-1]
        seed = int(over["seed"])
        assert seed in lengths["yukon"]  # from the pool
        assert over["par"] == {"verdict": "won", "moves": lengths["yukon"][seed]}  # at once
        dealt.append(seed)
    assert sorted(dealt) == sorted(lengths["yukon"])  # each deal once, never again
    # The pool is empty now: the next winnable race waits for the refill.
    assert await code_of(host.create("yukon", winnable=True)) == "unavailable"
    # A winnable race cannot choose its seed; a game with nothing in the pool has none.
    assert await code_of(host.create("yukon", winnable=True, seed="5")) == "bad_message"
    assert await code_of(host.create("quadruple-canfield", winnable=True)) == "unavailable"


async def test_a_winnable_tournament_plays_deals_of_the_pool(solver_server: Server,
                                                             tmp_path: Path) -> None:
    lengths = catalogue(tmp_path / "catalogue")
    host = await solver_server.client()
    created = await host.request({"type": "tournament_create", "name": "Sure", "format":
                                  "rounds", "games": ["scotch", "yukon"], "race_size": 2,
                                  "winnable": True, "gap": 0})
    tid = created["tournament"]
    entrants = []
    for name in ("ann", "bob"):
        client = await solver_server.client()
        await client.request({"type": "tournament_join", "tournament": tid, "name": name})
        entrants.append(client)
    view = await host.request({"type": "tournament_watch", "tournament": tid})
    assert view["settings"]["winnable"] is True
    await host.request({"type": "tournament_start", "tournament": tid,
                        "token": created["host_token"]})
    seat = await entrants[0].next_event("round", timeout=T)
    race = solver_server.app.hub.races[seat["race"]]
    assert race.game == "scotch" and race.seed in lengths["scotch"]
    assert race.options.winnable


async def test_a_demo_server_deals_the_public_catalogue_and_says_so(tmp_path: Path) -> None:
    lengths = catalogue(tmp_path / "catalogue")
    storage = SQLiteStore(tmp_path / "race.db")
    app = App(storage, countdown=0.05, rate_limit=0, client=tmp_path, demo_catalogue=True)
    app.hub.assist.deals = DealSource(tmp_path / "catalogue", demo=True, games=solrules.GAMES)
    async with serving(app) as srv:
        host = await srv.client()
        created = await host.create("scotch", winnable=True)
        assert created["options"]["demo_catalogue"] is True  # racers are told
        race = app.hub.races[created["race"]]
        assert race.seed in lengths["scotch"] and race.par is not None
        watcher = await srv.client()
        assert (await watcher.watch(created["race"]))["options"]["demo_catalogue"] is True
    app.close()
    storage.close()


async def test_hints_are_off_without_a_solver(server: Server) -> None:
    race, (ann, _) = await race_of(server, "scotch", 0, hints=True)
    assert await code_of(ann.hint(race)) == "unavailable"


async def test_the_solver_bot_wins_a_winnable_deal(solver_server: Server) -> None:
    from solrace.tools.bot import play

    host = await solver_server.client()
    created = await host.create("scotch", players=2, seed="2")
    race = created["race"]
    rival = await solver_server.client()
    await rival.join(race, name="rival")
    await rival.ready(race)
    final = await asyncio.wait_for(
        play(solver_server.url, race, name="solver-bot", policy="solver", delay=0), 60)
    assert final["progress"]["foundation"] == final["progress"]["total"]
    snap = await rival.watch(race)
    [bot] = [p for p in snap["players"] if p["name"] == "solver-bot"]
    assert bot["bot"] and bot["finished"]


async def test_a_refused_hint_never_blocks_the_connection(solver_server: Server) -> None:
    race, (ann, _) = await race_of(solver_server, "scotch", 0)
    with pytest.raises(ServerError):
        await ann.hint(race)
    assert (await ann.ping())["type"] == "pong"


async def test_hints_take_turns_by_address_then_by_racer() -> None:
    """Ann asks three hints and Bob one, both behind one address (a club); another address
    asks two. The worker answers the addresses in turns, and within the club the racers in
    turns: Bob's waits for one of Ann's, not three."""
    solver = Solver(hint_seconds=2.0, par_seconds=0, nice=0)
    done: list[str] = []

    async def ask(client: str, racer: str, name: str) -> None:
        await solver.hint("scotch", 2, [], racer, 1, client=client)
        done.append(name)

    try:
        asks = [asyncio.ensure_future(ask(c, r, n)) for c, r, n in (
            ("10.0.0.1", "race1/p1", "ann0"), ("10.0.0.1", "race1/p1", "ann1"),
            ("10.0.0.1", "race1/p1", "ann2"), ("10.0.0.1", "race2/p1", "bob0"),
            ("10.0.0.2", "race3/p2", "other0"), ("10.0.0.2", "race3/p2", "other1"))]
        async with asyncio.timeout(60):
            await asyncio.gather(*asks)
        assert done == ["ann0", "other0", "bob0", "other1", "ann1", "ann2"]
        assert [(s.kind, s.client, s.player) for s in solver.served][:3] == [
            ("hint", "10.0.0.1", "race1/p1"), ("hint", "10.0.0.2", "race3/p2"),
            ("hint", "10.0.0.1", "race2/p1")]
    finally:
        await solver.stop()


async def test_a_flood_of_hints_does_not_hold_an_analysis_back() -> None:
    """Twelve addresses ask a hint each, then a position of an analysis waits: it goes after
    ANALYSIS_TURN hints, not after all twelve."""
    solver = Solver(hint_seconds=2.0, par_seconds=0, nice=0)
    done: list[str] = []

    async def hint(i: int) -> None:
        await solver.hint("scotch", 2, [], f"race{i}/p1", 1, client=f"10.1.0.{i}")
        done.append(f"hint{i}")

    async def position() -> None:
        await solver.position("scotch", 2, [], 1000, 1.0)
        done.append("position")

    try:
        asks = [asyncio.ensure_future(hint(i)) for i in range(12)]
        asks.append(asyncio.ensure_future(position()))
        async with asyncio.timeout(120):
            await asyncio.gather(*asks)
        assert done.index("position") == ANALYSIS_TURN
    finally:
        await solver.stop()
