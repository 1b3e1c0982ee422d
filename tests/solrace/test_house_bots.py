"""The house bots' pace when the solver cannot help: a bot of a solver level plays on, with
legal moves, when the solver gives no answer at all (its worker stopped) and when its budget is
too small to see a win (a hard deal); its fallback move is always legal. Real servers, real
solver processes, real WebSockets. How fast they play is measured in bench/bot_pace_bench.py,
not here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import solrules
from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.core.levels import fallback, reverse
from solrace.net.app import App
from solrace.service.house_bots import BotSession
from solrace.solver.jobs import Solver, SolverBusy

from tests.solrace.conftest import Server, T, serving
from tests.solrace.test_play import app_for, named, sit

#: Scotch deals the catalogue's solver left undecided after 10 s (seeds/catalogue): hard.
HARD_SCOTCH = 2598931407658765443
#: Moves a bot plays in each test: several paces' worth, each one chosen without the solver.
MOVES = 6


@contextlib.asynccontextmanager
async def server(tmp_path: Path, solver: Solver, seed: int | None = None
                 ) -> AsyncIterator[tuple[Server, App]]:
    app = app_for(tmp_path, solver=solver)
    if seed is not None:
        app.hub.deals.draw = lambda game, winnable=False: seed  # type: ignore[method-assign]
    await app.start()
    try:
        async with serving(app) as srv:
            yield srv, app
    finally:
        await app.stop()
        app.store.close()


async def bot_race(srv: Server, app: App, level: int) -> tuple[str, BotSession]:
    """A race of a guest against a house bot of ``level`` (Scotch), running; and the bot."""
    ann = await named(srv, "Ann")
    paired = await ann.request({"type": "play_bot", "game": "scotch", "level": level,
                                "time_limit": 600, "rated": False})
    race = await sit(ann, paired)
    await ann.wait_state(race, T)
    bots = [b for (r, _), b in app.house_bots.sessions.items() if r == race]
    assert len(bots) == 1
    return race, bots[0]


async def moves_made(bot: BotSession, count: int, timeout: float) -> None:
    """Wait until ``bot`` has made ``count`` moves (TimeoutError: it stalled)."""
    async with asyncio.timeout(timeout):
        while bot.moves < count:
            await asyncio.sleep(0.05)


async def test_a_bot_plays_on_when_the_solver_gives_no_answer(tmp_path: Path) -> None:
    async with server(tmp_path, Solver(hint_seconds=3.0, par_seconds=0, nice=0)) as (srv, app):
        race, bot = await bot_race(srv, app, level=5)  # Ace: the fastest pace
        lane = app.house_bots.lane
        assert lane is not None and lane is not app.house_bots.solver  # a worker of its own
        await moves_made(bot, 1, T * 4)
        pid = lane.worker_pid
        assert pid is not None  # it asked the lane (from the countdown on)
        os.kill(pid, signal.SIGSTOP)  # the solver answers nothing from now on
        try:
            start, alone = bot.moves, bot.fallbacks + bot.ahead
            await moves_made(bot, start + MOVES, T * 2)
            # Every one of those moves was chosen without the solver's answer (the next of
            # a line it had been answered, or a fallback)...
            assert lane.worker_pid == pid
            assert bot.fallbacks + bot.ahead - alone >= MOVES - 1  # (one may be answered)
        finally:
            os.kill(pid, signal.SIGCONT)
        # ... and the server took every move the bot sent (none illegal, none refused).
        assert bot.refused == 0
        assert app.hub.races[race].racers[bot.player].moves == bot.moves


async def test_a_bot_that_cannot_see_a_win_plays_on(tmp_path: Path) -> None:
    # A budget far too small for a hard deal: every answer is the solver's heuristic guess,
    # or none in time.
    tiny = Solver(hint_seconds=0.01, hint_nodes=50, par_seconds=0, nice=0)
    async with server(tmp_path, tiny, HARD_SCOTCH) as (srv, app):
        race, bot = await bot_race(srv, app, level=4)
        await moves_made(bot, MOVES * 2, T * 4)
        racer = app.hub.races[race].racers[bot.player]
        assert not racer.done  # it neither resigned nor stalled
        assert bot.refused == 0 and racer.moves == bot.moves


async def test_a_question_with_a_deadline_is_searched_until_then_or_answered_at_once() -> None:
    solver = Solver(hint_seconds=20.0, par_seconds=0, nice=0)
    loop = asyncio.get_running_loop()
    try:
        # The worker busy with one bot's question, on a hard deal: no line before its
        # deadline (3 s; the budget alone would give it 20).
        first = asyncio.ensure_future(solver.hint("scotch", HARD_SCOTCH, [], "r/p1", 1,
                                                  client="a", deadline=loop.time() + 3.0))
        async with asyncio.timeout(T):
            while solver.worker_pid is None:  # (it is started for the first's turn)
                await asyncio.sleep(0.01)
        # Another's, due sooner than the first can end: answered (busy) while it waits,
        # without ever reaching the worker.
        with pytest.raises(SolverBusy):
            await solver.hint("scotch", HARD_SCOTCH, [], "r/p2", 2, client="b",
                              deadline=loop.time() + 0.3)
        assert not first.done()
        answer = await first
        assert answer["source"] == "heuristic" and answer["move"] is not None
        assert [s.kind for s in solver.served] == ["hint"]  # one job reached the worker
        # Cut to its deadline, not its budget (its time counts the worker's start too).
        assert solver.served[0].seconds < 20.0 / 2
    finally:
        await solver.stop()


def positions() -> st.SearchStrategy[tuple[str, int, int]]:
    return st.tuples(st.sampled_from(["scotch", "yukon", "quadruple-canfield"]),
                     st.integers(0, 2**64 - 1), st.integers(0, 60))


@settings(max_examples=60, deadline=None)
@given(positions(), st.integers(0, 2**32 - 1))
def test_the_fallback_move_is_always_legal(where: tuple[str, int, int], salt: int) -> None:
    game_name, seed, steps = where
    rng = random.Random(salt)
    game = solrules.new_game(game_name, seed)
    last: str | None = None
    for _ in range(steps):  # somewhere along a random game
        legal = [m.text() for m in game.legal_moves()]
        if not legal:
            break
        last = rng.choice(legal)
        game.push_text(last)
    legal = [m.text() for m in game.legal_moves()]
    move = fallback(game, {"legal": legal, "safe": []}, last, rng)
    if not legal:
        assert move is None
        return
    assert move in legal
    # It does not take its last move straight back while it has anything else to play.
    if last is not None and len(legal) > 1:
        assert move != reverse(last)


@pytest.mark.parametrize("game_name", ["scotch", "yukon"])
def test_the_fallback_only_uses_what_the_bot_has_seen(game_name: str) -> None:
    # Two games that differ only in cards the racer has never seen give the same choices
    # (for the same random draws): the fallback reads no hidden card.
    game = solrules.new_game(game_name, 7)
    other = solrules.sample_unseen(game, random.Random(1))
    legal = [m.text() for m in game.legal_moves()]
    assert [m.text() for m in other.legal_moves()] == legal
    for salt in range(5):
        assert (fallback(game, {"legal": legal}, None, random.Random(salt))
                == fallback(other, {"legal": legal}, None, random.Random(salt)))


def test_the_tools_planner_with_no_time_left_still_plays_a_legal_move() -> None:
    # solrace.tools.bot thinks only while it waits out its pace: with none left, its search
    # gets MIN_THINK and it still answers a move (on a hard deal: no line within that).
    from solrace.tools.bot import Planner

    game = solrules.new_game("scotch", HARD_SCOTCH)
    planner = Planner(random.Random(3))
    for _ in range(3):
        board = game.board()
        state = {"legal": [m.text() for m in game.legal_moves()], "board": board, "safe": []}
        move = planner.choose(state, seconds=0.0)
        assert move in state["legal"]
        game.push_text(move)


def test_a_bots_question_gets_the_winning_line_and_a_racers_hint_one_move() -> None:
    from solrace.solver import worker

    job = {"k": "hint", "g": "scotch", "s": "0", "a": [], "n": 400_000, "t": 30.0, "r": 1}
    hint = worker.hint({**job, "p": "race/p1"})
    assert hint["source"] == "solver" and "line" not in hint  # a racer: one move, no more
    asked = worker.hint({**job, "p": "race/p2", "l": True})
    line = asked["line"]
    assert line[0] == asked["move"]
    game = solrules.new_game("scotch", 0)
    for move in line:  # Scotch hides nothing: the line wins the deal itself
        game.push_text(move)
    assert game.progress()[0] == game.progress()[1]
    # Followed move by move, the next answer's line is the rest of it.
    then = worker.hint({**job, "a": line[:3], "p": "race/p2", "l": True})
    assert then["line"] == line[3:]
