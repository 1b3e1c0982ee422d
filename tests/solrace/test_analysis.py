"""Post-race analyses: the review of a racer's line (solrace.solver.analysis: which positions
are solved, what a verdict proves, where the deal was lost), and the route that serves it on a
real server with its real solver process (solrace.solver.analyst): only after the reveal,
worked out once, bounded per client address."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import solrules
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.net.app import App
from solrace.runtime.supervisor import Supervisor
from solrace.solver.analysis import (
    LINES,
    Review,
    Tree,
    accuracy,
    drive,
    moves_summary,
    thinks,
)
from solrace.solver.analyst import Analyst
from solrace.solver.jobs import Solver
from solrace.solver.worker import replay
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.lines import racer_line

from .conftest import Server, T, serving
from .test_accounts import browser
from .test_http import get, port_of
from .test_server import drain

#: A Scotch deal, a line from it that keeps it winnable, and a move that then loses it: the
#: move buries a card under a King so that the Kings wait for each other in a circle (the
#: solver proves it in a few hundred positions). Found once with the solver; checked below.
SEED = 5
BEFORE = ["t6>f1", "t16>f2", "t7>f1", "t7>t2", "t7>f2", "t1>t15", "t1>t6", "t8>t14", "t10>t17",
          "t8>t10", "t8>f2", "t16>t11", "t16>f2", "t6>f2", "t6>f2", "t13>t3", "t9>t13",
          "t9>t2", "t12>t2"]
LOSING = "t12>t6"
BUDGET = solrules.Budget(20_000)


def solve_at(actions: Sequence[str], calls: list[int] | None = None) -> Any:
    def solve(i: int) -> tuple[str, Sequence[str]]:
        if calls is not None:
            calls.append(i)
        result = solrules.solve(replay("scotch", SEED, list(actions[:i])), BUDGET)
        return result.verdict, result.line
    return solve


def test_the_losing_move_loses() -> None:
    game = replay("scotch", SEED, BEFORE)
    assert solrules.solve(game, BUDGET).verdict == "won"
    game.push_text(LOSING)
    assert solrules.solve(game, BUDGET).verdict == "lost"


def test_the_first_losing_move_is_found_by_bisection() -> None:
    after = [m.text() for m in replay("scotch", SEED, [*BEFORE, LOSING]).legal_moves()][:3]
    line = [*BEFORE, LOSING]
    # Three more moves (each its first legal one), all in a lost position.
    game = replay("scotch", SEED, line)
    for _ in range(3):
        text = game.legal_moves()[0].text()
        game.push_text(text)
        line.append(text)
    assert after  # the position had moves left
    calls: list[int] = []
    review = Review(line, 40)
    drive(review, solve_at(line, calls))
    n = len(BEFORE) + 1
    assert review.verdicts == "w" * n + "l" * (len(line) - n + 1)
    [loss] = review.losses()
    best, winning = loss.pop("best"), loss.pop("line")
    assert loss == {"at": n, "move": LOSING, "winnable_at": n - 1, "exact": True,
                    "recovered_at": None}
    # The move that kept it: not his, and the deal is won by the line that starts with it.
    assert best == winning[0] and best != LOSING
    game = replay("scotch", SEED, BEFORE)
    for text in winning:
        game.push_text(text)
    assert game.is_won() and solrules.solve(
        replay("scotch", SEED, [*BEFORE, best]), BUDGET).verdict == "won"
    # The end, then the deal (whose winning line may follow the racer's first moves: every
    # position along it is won), then the middle: far fewer solves than positions.
    assert calls[:2] == [len(line), 0] and len(calls) <= len(line) // 3
    assert not review.incomplete
    summary = moves_summary(line, review.verdicts, {"verdict": "won", "moves": 75}, False)
    assert summary == {"moves": len(line), "undos": 0, "kept": len(line), "par": 75,
                       "after_loss": 3}


def test_an_undo_back_to_a_winnable_position_is_a_recovery() -> None:
    winning = solrules.solve(replay("scotch", SEED, BEFORE), BUDGET).line[0]
    line = [*BEFORE, LOSING, "undo", winning]
    review = Review(line, 40)
    drive(review, solve_at(line))
    n = len(BEFORE) + 1
    assert review.verdicts[n - 1:] == "wlww"
    [loss] = review.losses()
    assert loss["at"] == n and loss["exact"] and loss["recovered_at"] == n + 1
    assert moves_summary(line, review.verdicts, None, False)["undos"] == 1


def test_a_line_that_wins_needs_one_solve() -> None:
    game = solrules.new_game("scotch", SEED)
    line = list(solrules.solve(game, BUDGET).line)
    calls: list[int] = []
    review = Review(line, 40)
    drive(review, solve_at(line, calls))
    assert calls == [len(line)] and set(review.verdicts) == {"w"} and review.losses() == []


def fake(truth: str, calls: list[int]) -> Any:
    """A solver whose verdict at index i is ``truth[i]`` (w, l, or ? for unknown); its
    winning line is the one move ``kept``."""
    def solve(i: int) -> tuple[str, Sequence[str]]:
        calls.append(i)
        verdict = {"w": "won", "l": "lost"}.get(truth[i], "unknown")
        return verdict, ("kept",) if verdict == "won" else ()
    return solve


def test_unknown_positions_are_stepped_over_and_said() -> None:
    line = [f"t{i}>t{i + 1}" for i in range(1, 13)]  # twelve moves down one path
    calls: list[int] = []
    truth = "wwww????llll" + "l"
    review = Review(line, 40)
    drive(review, fake(truth, calls))
    [loss] = review.losses()
    # Somewhere after move 4 and by move 8: the report says it is not exact.
    assert loss["at"] == 8 and loss["winnable_at"] == 3 and not loss["exact"]
    assert loss["best"] == "kept" and loss["line"] == ["kept"]
    assert review.verdicts[:4] == "www?" or review.verdicts[:4] == "wwww"
    assert review.verdicts[8:] == "lllll"
    # A budget that runs out leaves positions unknown, and says so: lost by the end, no
    # position known winnable before.
    review = Review(line, 1)
    drive(review, fake(truth, []))
    assert review.verdicts == "?" * 12 + "l" and review.incomplete
    assert review.losses() == [{"at": 12, "move": "t12>t13", "winnable_at": None,
                                "exact": False, "recovered_at": None, "best": None,
                                "line": []}]


def test_a_loss_taken_back_again_and_again_is_listed_each_time() -> None:
    """A racer who plays the same losing move and takes it back 5,000 times: two positions,
    two solves, 5,000 losses, each recovered by the undo after it."""
    line = ["t1>t2", "undo"] * 5000
    calls: list[int] = []
    review = Review(line, 40)
    drive(review, fake("wl" * 5000 + "w", calls))
    assert sorted(calls) == [0, 1]
    losses = review.losses()
    assert len(losses) == 5000
    assert losses[0] == {"at": 1, "move": "t1>t2", "winnable_at": 0, "exact": True,
                         "recovered_at": 2, "best": "kept", "line": ["kept"]}
    assert losses[-1] == {"at": 9999, "move": "t1>t2", "winnable_at": 9998, "exact": True,
                          "recovered_at": 10000, "best": "kept", "line": []}
    # Every loss names the better move; only the first few carry the line (a report stays small).
    assert all(loss["best"] == "kept" for loss in losses)
    assert sum(1 for loss in losses if loss["line"]) == LINES


def test_a_deal_won_by_par_alone_is_solved_once_more_for_the_better_move() -> None:
    """Par says the deal is won but gives no line: a loss at the first move needs one solve of
    the deal for its better move, and no more however many losses share it."""
    calls: list[int] = []
    review = Review(["t1>t2", "undo", "t1>t2"], 40, deal="won")
    drive(review, fake("wlwl", calls))
    assert sorted(calls) == [0, 1]
    assert [(loss["at"], loss["best"]) for loss in review.losses()] == [(1, "kept"), (3, "kept")]


#: Lines a racer might play (cards home first most of the time, else any move, an undo now
#: and then), each with a loss the solver proves within BUDGET: (game, seed, rng seed).
#: Found once with the solver, like SEED above.
LOSING_LINES = [("scotch", 1, 1), ("yukon", 2, 2)]
#: Quadruple Canfield forgives nearly everything (any card fills a space, the waste turns over
#: without end): no such line loses. An endgame found by a random search does: all the cards
#: home but the black ones from 8 up, and filling the last space with the stack of t8 leaves
#: nothing that moves.
QC_ENDGAME = (
    "quadruple-canfield base=A f1:AC2C3C4C5C6C7C " + " ".join(
        f"f{f}:{''.join(r + suit for r in 'A23456789TJQK')}" for f, suit in
        [(2, "C"), (3, "C"), (4, "C")]) + " f5:AS2S3S4S5S6S7S " + " ".join(
        f"f{f}:{''.join(r + suit for r in 'A23456789TJQK')}" for f, suit in
        [(6, "S"), (7, "S"), (8, "S")] + [(9 + k, "H") for k in range(4)]
        + [(13 + k, "D") for k in range(4)])
    + " r: s: w:8SQC t1:JS t2:8CJC t3:9S t4:QS t5: t6:TS t7:9C t8:TCKSKC")
QC_LOSING = "t8>t5"




def after(start: solrules.Game, actions: Sequence[str]) -> solrules.Game:
    game = start.copy()
    for action in actions:
        if action == "undo":
            game.pop()
        else:
            game.push_text(action)
    return game


def losing_cases() -> list[tuple[str, solrules.Game, list[str]]]:
    cases = [(game, solrules.new_game(game, seed), racer_line(game, seed, 60, random.Random(rng)))
             for game, seed, rng in LOSING_LINES]
    start = solrules.parse_position(QC_ENDGAME)
    line = [QC_LOSING]
    line += [m.text() for m in after(start, line).legal_moves()][:3]
    return [*cases, ("quadruple-canfield", start, line)]


@pytest.mark.parametrize(("game", "start", "line"), losing_cases(),
                         ids=["scotch", "yukon", "quadruple-canfield"])
def test_every_loss_carries_a_better_move_the_solver_proves_winnable(
        game: str, start: solrules.Game, line: list[str]) -> None:
    def solve(i: int) -> tuple[str, Sequence[str]]:
        result = solrules.solve(after(start, line[:i]), BUDGET)
        return result.verdict, result.line
    review = Review(line, 40)
    drive(review, solve)
    losses = review.losses()
    assert losses and all(loss["winnable_at"] is not None for loss in losses)
    for loss in losses:
        before = after(start, line[:loss["winnable_at"]])
        assert before.name == game
        best = solrules.Move.from_text(loss["best"])
        assert before.is_legal(best), loss
        # Not the racer's own next move from there: his lost (or was not proved to keep it).
        assert loss["best"] != line[loss["winnable_at"]]
        assert solrules.solve(after(before, [loss["best"]]), BUDGET).verdict == "won"
        # The line from there wins, move by move as the rules accept it.
        end = after(before, loss["line"])
        assert end.is_won() and loss["line"][0] == loss["best"]


def test_accuracy_on_a_constructed_game() -> None:
    # a keeps it, b loses it, undo (not a move), b2 keeps it, c not decided: 2 of 3.
    got = accuracy(["a", "b", "undo", "b2", "c"], "wwlww?", None, False)
    assert got == {"judged": 3, "kept": 2, "share": 0.667}
    # A winner: his line (moves kept) against par.
    got = accuracy(["a", "undo", "a", "b", "c"], "wwwwww", {"verdict": "won", "moves": 2}, True)
    assert got == {"judged": 4, "kept": 4, "share": 1.0, "line": 3, "par": 2, "par_ratio": 1.5}
    # Moves from a lost position are not judged; a deal lost from the start has no share.
    assert accuracy(["a", "b"], "lll", {"verdict": "lost"}, False)["share"] is None
    assert accuracy(["a", "b"], "wll", None, False) == {"judged": 1, "kept": 0, "share": 0.0}


def test_the_tree_merges_a_move_played_again_after_an_undo() -> None:
    tree = Tree(["a", "b", "undo", "b", "undo", "undo", "c"])
    assert tree.node == [0, 1, 2, 1, 2, 1, 0, 3]
    assert tree.first == [0, 1, 2, 7]


def test_the_longest_thinks() -> None:
    got = thinks(["a", "b", "undo", "c"], [4000, 5000, 12000, 13000])
    assert got == [{"at": 3, "move": "undo", "ms": 7000, "time": 12000},
                   {"at": 1, "move": "a", "ms": 4000, "time": 4000},
                   {"at": 2, "move": "b", "ms": 1000, "time": 5000}]


# ----------------------------------------------------------------------- on a real server
@pytest.fixture
async def solver_server(tmp_path: Path) -> AsyncIterator[Server]:
    storage = SQLiteStore(tmp_path / "race.db")
    app = App(storage, countdown=0.05, rate_limit=0, client=tmp_path,
              solver=Solver(hint_seconds=0, par_seconds=5.0, nice=0))
    async with serving(app) as srv:
        yield srv
    await app.stop()
    storage.close()


async def analysis(server: Server, race: str, player: str, extra: str = "", tries: int = 100
                   ) -> tuple[int, dict[str, Any]]:
    """The answer once it is no longer 202 (asked again as told, up to ``tries`` times, a
    quarter of a second apart); ``extra``: headers."""
    for _ in range(tries):
        status, headers, body = await get(port_of(server), f"/api/races/{race}/analysis/{player}",
                                          extra=extra)
        if status != 202:
            return status, json.loads(body)
        assert int(headers["retry-after"]) >= 1
        await asyncio.sleep(0.25)
    raise AssertionError("the analysis never came")


async def test_a_racers_losing_move_is_found_after_the_reveal_and_never_before(
    solver_server: Server,
) -> None:
    host = await solver_server.client()
    race = (await host.create("scotch", players=2, seed=str(SEED)))["race"]
    ann, bob = await solver_server.client(), await solver_server.client()
    for client, name in ((ann, "ann"), (bob, "bob")):
        await client.join(race, name=name)
        await client.ready(race)
    await ann.wait_state(race, T)
    for text in [*BEFORE, LOSING]:
        await ann.move(race, text)
    # The race runs: nothing of the deal may be told, and nothing is worked out.
    port = port_of(solver_server)
    for player in ("p1", "p2"):
        status, _, body = await get(port, f"/api/races/{race}/analysis/{player}")
        assert status == 403
        assert json.loads(body) == {"error": "forbidden",
                                    "message": "the analysis opens once the deal is revealed"}
    analyst = solver_server.app.routes.analyst
    assert analyst.running == {} and analyst.done == {}
    assert (await get(port, f"/api/races/{race}/analysis/p9"))[0] == 404
    assert (await get(port, "/api/races/nosuchrace/analysis/p1"))[0] == 404
    await ann.resign(race)  # a race of two: it ends, Bob wins
    await drain(bob, "race_over")
    status, report = await analysis(solver_server, race, "p1")
    assert status == 200
    n = len(BEFORE) + 1
    loss = dict(report["lost_at"])
    assert loss.pop("time") >= report["thinks"][0]["time"] - report["thinks"][0]["ms"]
    best, winning = loss.pop("best"), loss.pop("line")
    assert loss == {"at": n, "move": LOSING, "winnable_at": n - 1, "exact": True,
                    "recovered_at": None}
    assert best == winning[0] and best != LOSING
    assert after(replay("scotch", SEED, BEFORE), winning).is_won()
    # Every move of hers was from a winnable position, all but the last kept it.
    assert report["accuracy"] == {"judged": n, "kept": n - 1,
                                  "share": round((n - 1) / n, 3)}
    assert report["verdicts"] == "w" * n + "l" and report["deal"] == "won"
    assert report["end"] == "lost" and not report["incomplete"]
    assert report["moves"]["moves"] == n and report["moves"]["after_loss"] == 0
    assert [t["at"] for t in report["thinks"]] and len(report["thinks"]) == 3
    assert 1 <= report["solves"] <= 8
    # Bob made no move: his only position is the deal, winnable.
    status, bobs = await analysis(solver_server, race, "p2")
    assert status == 200 and bobs["verdicts"] == "w" and bobs["lost_at"] is None
    # Worked out once: asked again, the same report at once.
    status, _, body = await get(port, f"/api/races/{race}/analysis/p1")
    assert status == 200 and json.loads(body) == report


async def test_analyses_are_bounded_per_address(solver_server: Server) -> None:
    analyst = solver_server.app.routes.analyst
    analyst.per_address = 1
    host = await solver_server.client()
    race = (await host.create("scotch", players=2, seed=str(SEED)))["race"]
    racers = [await solver_server.client(), await solver_server.client()]
    for i, client in enumerate(racers):
        await client.join(race, name=f"r{i}")
        await client.ready(race)
    await racers[0].wait_state(race, T)
    for client in racers:
        await client.resign(race)
    await drain(racers[1], "race_over")
    port = port_of(solver_server)
    analyst.solver = None  # nothing to wait for but the bookkeeping: still one at a time
    gate = asyncio.Event()
    review = analyst.review

    async def held(work: Any) -> dict[str, Any]:
        await gate.wait()
        return await review(work)

    analyst.review = held  # type: ignore[method-assign]
    assert (await get(port, f"/api/races/{race}/analysis/p1"))[0] == 202
    status, headers, body = await get(port, f"/api/races/{race}/analysis/p2")
    assert status == 202 and json.loads(body)["status"] == "queued"  # over the share: waits
    assert int(headers["retry-after"]) >= 1
    assert len(analyst.running) == 1  # not started
    assert (await get(port, f"/api/races/{race}/analysis/p1"))[0] == 202  # the same: shared
    gate.set()
    status, report = await analysis(solver_server, race, "p1")
    assert status == 200 and report["verdicts"] == "?" and report["incomplete"]
    status, report = await analysis(solver_server, race, "p2")  # its turn now
    assert status == 200


async def test_analyses_over_a_share_wait_and_newcomers_keep_a_reserve() -> None:
    """Admission (no solver: only the bookkeeping): an address over its share is not started,
    the last fifth of the process's analyses is kept for addresses that hold none, and
    nothing is started past the cap."""
    supervisor = Supervisor()
    analyst = Analyst(None, supervisor, limit=10, per_address=4)
    gate = asyncio.Event()
    review = analyst.review

    async def held(work: Any) -> dict[str, Any]:
        await gate.wait()
        return await review(work)

    analyst.review = held  # type: ignore[method-assign]
    races = []
    for n in range(4):
        race = Race(f"r{n}", "scotch", SEED, "salt", Options(4, 60, True), 0, "host", 1000)
        for i in range(4):
            race.join(f"racer{i}", f"token{i}", 0)
        race.start("host", 0)
        race.tick(1000)
        races.append(race)
    keys = iter([(race, p) for race in races for p in race.racers])

    def ask(address: str) -> str:
        race, player = next(keys)
        return analyst.ask(race, player, address)[0]

    assert [ask("10.0.0.1") for _ in range(5)] == ["computing"] * 4 + ["busy"]  # its share
    assert [ask("10.0.0.2") for _ in range(4)] == ["computing"] * 4  # 8: the reserve is left
    assert ask("10.0.0.3") == "computing"  # held none: takes from the reserve
    assert ask("10.0.0.3") == "full"  # holds one now: the rest is for those who hold none
    assert ask("10.0.0.4") == "computing"  # the last one
    assert ask("10.0.0.5") == "full"  # the cap
    assert len(analyst.running) == 10
    race, player = races[0], next(iter(races[0].racers))
    assert analyst.ask(race, player, "10.0.0.5") == ("computing", None)  # shared, not new
    gate.set()
    async with asyncio.timeout(T):
        while analyst.running:
            await asyncio.sleep(0.01)
    assert analyst.by_address == {} and len(analyst.done) == 10
    assert analyst.ask(race, player, "10.0.0.5")[0] == "done"
    await supervisor.close()


#: A Scotch deal the solver cannot decide (from seeds/catalogue/scotch.jsonl: unknown after
#: 10 s), nor any position a move from it within a test's half second: each such position of
#: an analysis takes its whole budget.
HARD = 2598931407658765443


@pytest.fixture
async def proxied_server(tmp_path: Path) -> AsyncIterator[Server]:
    """A server with its solver (no hints, no par) behind a proxy it trusts: each request's
    address is its ``X-Forwarded-For``."""
    storage = SQLiteStore(tmp_path / "race.db")
    app = App(storage, countdown=0.05, rate_limit=0, client=tmp_path,
              solver=Solver(hint_seconds=0, par_seconds=0, nice=0))
    app.routes.trust_proxy = True
    async with serving(app) as srv:
        yield srv
    await app.stop()
    storage.close()


async def played(server: Server, seed: int, lines: list[list[str]]) -> str:
    """A Scotch race of ``seed`` whose racers play ``lines`` (one each), over."""
    host = await server.client()
    race = (await host.create("scotch", players=len(lines), seed=str(seed)))["race"]
    racers = []
    for i in range(len(lines)):
        client = await server.client()
        await client.join(race, name=f"r{i}")
        racers.append(client)
    for client in racers:  # (all seated first: two ready would start it)
        await client.ready(race)
    await racers[0].wait_state(race, T)
    for client, line in zip(racers, lines, strict=True):
        for action in line:
            await (client.undo(race) if action == "undo" else client.move(race, action))
    for client in racers:
        await client.resign(race)
    await drain(racers[-1], "race_over")
    return race


async def test_a_newcomers_analysis_completes_while_four_addresses_keep_the_solver_busy(
    proxied_server: Server,
) -> None:
    """Four addresses each have two analyses of a long race worked out, whose every position
    takes its whole budget; then a fifth asks for his (a short race, a few quick positions):
    his is started at once, takes its turns among theirs (at most about one position of each
    other address per position of his), and is done while all of theirs still go on."""
    server = proxied_server
    analyst = server.app.routes.analyst
    solver = analyst.solver
    assert solver is not None
    analyst.position_seconds = 0.5  # the server's is 3 s: the same, only quicker
    # The long race: eight racers on the hard deal, each trying every move from the deal and
    # taking it back: 29 stretches of play, 29 positions to solve, none decided.
    deal = solrules.new_game("scotch", HARD)
    tries = [a for m in deal.legal_moves() for a in (m.text(), "undo")]
    long_race = await played(server, HARD, [tries] * 8)
    short_race = await played(server, SEED, [[*BEFORE, LOSING], []])
    port = port_of(server)

    def by(address: str) -> str:
        return f"X-Forwarded-For: {address}\r\n"

    for n in range(8):
        status, _, body = await get(port, f"/api/races/{long_race}/analysis/p{n + 1}",
                                    extra=by(f"10.0.0.{n // 2 + 1}"))
        assert status == 202 and json.loads(body)["status"] == "computing"
    # Eight positions of half a second each: beside a burner on both cores the worker gets a
    # small share of one (seen: more than a minute), hence the long limit, never idled.
    async with asyncio.timeout(T * 30):
        while solver.jobs_done < 8:  # theirs under way
            await asyncio.sleep(0.05)
    mark = solver.jobs_done
    newcomer = "192.0.2.7"
    status, _, body = await get(port, f"/api/races/{short_race}/analysis/p1", extra=by(newcomer))
    assert status == 202 and json.loads(body)["status"] == "computing"  # started, not queued
    status, report = await analysis(server, short_race, "p1", extra=by(newcomer), tries=300)
    assert status == 200 and report["solves"] >= 2
    # Theirs are all still being worked out.
    assert all((long_race, f"p{n + 1}") in analyst.running for n in range(8))
    jobs = list(solver.served)[len(solver.served) - (solver.jobs_done - mark):]
    his = [i for i, job in enumerate(jobs) if job.client == newcomer]
    assert len(his) == report["solves"]
    # Before each of his positions (since he asked, or since his last), at most two of each
    # other address: the one the worker had in hand, and one whose turn in the round came
    # before his.
    for a, b in zip([-1, *his], his, strict=False):
        between = Counter(job.client for job in jobs[a + 1:b])
        assert set(between) <= {f"10.0.0.{k}" for k in range(1, 5)}
        assert max(between.values(), default=0) <= 2, between


async def test_an_analysis_takes_its_turns_as_the_player_who_asked(
    proxied_server: Server,
) -> None:
    """Two players behind one address (their cookies say who they are) and a visitor with
    no player: each one's positions wait in his own line within the address's share."""
    server = proxied_server
    solver = server.app.routes.analyst.solver
    assert solver is not None
    ids = []
    cookies = []
    for name in ("Ann", "Bob"):
        client, key = await browser(server)
        me = await client.request({"type": "set_name", "name": name})
        ids.append(me["player"]["id"])
        cookies.append(f"Cookie: sr_player={key}\r\n")
    race = await played(server, SEED, [BEFORE, [], BEFORE[:3]])
    club = "X-Forwarded-For: 198.51.100.4\r\n"
    for player, extra in zip(("p1", "p2", "p3"), [*cookies, ""], strict=True):
        status, _ = await analysis(server, race, player, extra=club + extra)
        assert status == 200
    lines = {(job.client, job.player) for job in solver.served}
    assert lines == {("198.51.100.4", ids[0]), ("198.51.100.4", ids[1]), ("198.51.100.4", "")}
