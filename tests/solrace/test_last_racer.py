"""The last one racing (issue 29, item 5): once every other racer is done, a person left alone
racing who makes no move for the race's ``last_idle_ms`` ends the race, as if its time had run
out. On the room alone (no clock: every time given), then on a real server over loopback: an
idle human against a bot that cleared the deal."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import solrules
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.protocol import messages
from solrace.store.records import race_from_record, race_record, replay
from solrace.tools.race_client import RaceClient

from .conftest import T
from .test_room import FakeWinningGame, first_legal
from .test_server import get

T0 = 1_000_000
IDLE = 60_000


def running(*bots: bool, time_limit: int = 600, idle: int = IDLE) -> Race:
    """A running race of ``len(bots)`` racers (p1, p2...), each a bot or not."""
    race = Race("r1", "scotch", 7, "salt", Options(max(2, len(bots)), time_limit, True), T0,
                "host", 1000, last_idle_ms=idle)
    for i, bot in enumerate(bots):
        race.join(f"racer{i}", f"token{i}", T0, bot=bot)
    race.start("host", T0)
    race.tick(T0 + 1000)
    assert race.status == "running"
    return race


def test_the_last_human_racing_who_stays_idle_ends_the_race() -> None:
    race = running(False, True)  # Ann and a bot that clears the deal
    race.racers["p2"].game = FakeWinningGame(race.racers["p2"].game)  # type: ignore[assignment]
    race.move("p1", first_legal(race, "p1"), 1, T0 + 2000)
    assert race.next_deadline() == race.ends_at  # two racing: only the time limit
    out = race.move("p2", first_legal(race, "p2"), 1, T0 + 5000)
    last = next(e.fields for e in out.events if e.kind == "last_racer")
    assert last == {"player": "p1", "ends_at": T0 + 5000 + IDLE, "idle_ms": IDLE}
    assert race.next_deadline() == T0 + 5000 + IDLE
    assert messages.header(race)["last_racer"] == last
    # A move (or an undo) gives him the whole minute again.
    race.move("p1", first_legal(race, "p1"), 2, T0 + 40_000)
    assert race.next_deadline() == T0 + 40_000 + IDLE
    assert not race.tick(T0 + 5000 + IDLE).events  # the first minute no longer counts
    over = race.tick(T0 + 40_000 + IDLE + 3)
    assert over.finished and race.reason == "idle"
    assert race.finished_at == T0 + 40_000 + IDLE  # at the deadline, however late the tick
    table = race.standings()
    assert [(s["player"], s["place"], s["resigned"]) for s in table] == [
        ("p2", 1, False), ("p1", 2, False)]
    assert messages.header(race)["last_racer"] is None


def test_the_rule_holds_only_for_a_person_left_alone_after_the_others() -> None:
    # Three racers: one resigns, two still race: only the time limit.
    race = running(False, False, False)
    assert not [e for e in race.resign("p3", T0 + 2000).events if e.kind == "last_racer"]
    assert race.next_deadline() == race.ends_at
    # A race of bots only races on: the last bot is not held to the minute.
    bots = running(True, True)
    bots.racers["p2"].game = FakeWinningGame(bots.racers["p2"].game)  # type: ignore[assignment]
    out = bots.move("p2", first_legal(bots, "p2"), 1, T0 + 2000)
    assert not [e for e in out.events if e.kind == "last_racer"]
    assert bots.next_deadline() == bots.ends_at
    # Alone from the start (the daily deal): he thinks as long as the time limit lets him.
    solo = Race("r2", "scotch", 7, "salt", Options(1, 600, True), T0, "host", 1000)
    solo.join("ann", "t", T0)
    solo.start("host", T0)
    solo.tick(T0 + 1000)
    assert solo.next_deadline() == solo.ends_at
    # The time limit first, when it comes before the minute is up.
    short = running(False, True, time_limit=30)
    short.racers["p2"].game = FakeWinningGame(short.racers["p2"].game)  # type: ignore[assignment]
    short.move("p2", first_legal(short, "p2"), 1, T0 + 2000)
    assert short.next_deadline() == short.ends_at
    assert short.tick(T0 + 31_000).finished and short.reason == "time"


def test_three_racers_two_done_the_third_is_held_to_the_minute() -> None:
    race = running(False, False, False)
    race.racers["p1"].game = FakeWinningGame(race.racers["p1"].game)  # type: ignore[assignment]
    race.move("p1", first_legal(race, "p1"), 1, T0 + 2000)  # Ann clears the deal
    out = race.resign("p3", T0 + 3000)
    assert [e.fields for e in out.events if e.kind == "last_racer"] == [
        {"player": "p2", "ends_at": T0 + 3000 + IDLE, "idle_ms": IDLE}]
    assert race.tick(T0 + 3000 + IDLE).finished and race.reason == "idle"
    assert [s["player"] for s in race.standings()] == ["p1", "p2", "p3"]


def winning_line(seed: int) -> list[str]:
    result = solrules.solve(solrules.new_game("scotch", seed),
                            solrules.Budget(nodes=200_000, seconds=20.0))
    assert result.verdict == "won"
    return list(result.line)


def test_the_log_rebuilds_the_same_end_and_an_older_race_keeps_its_rules() -> None:
    line = winning_line(1)
    race = Race("r1", "scotch", 1, "salt", Options(2, 600, True), T0, "host", 1000,
                last_idle_ms=IDLE)
    entries = race.join("ann", "t1", T0).log + race.join("bob", "t2", T0).log
    entries += race.start("host", T0).log
    race.tick(T0 + 1000)
    for i, move in enumerate(line):  # Bob clears the deal, a move every 100 ms
        entries += race.move("p2", move, i + 1, T0 + 2000 + 100 * i).log
    done = T0 + 2000 + 100 * (len(line) - 1)
    assert race.racers["p2"].finished_at == done and race.last_since == done
    entries += race.move("p1", first_legal(race, "p1"), 1, done + 30_000).log
    assert race.tick(done + 30_000 + IDLE).finished and race.reason == "idle"
    rebuilt = replay(race_from_record("r1", race_record(race)), entries, race.finished_at)
    assert (rebuilt.status, rebuilt.reason, rebuilt.finished_at) == (
        "finished", "idle", done + 30_000 + IDLE)
    assert rebuilt.standings() == race.standings()
    # A race stored before the rule (its record has no last_idle_ms) replays as it was
    # played: there, Ann's move long after the minute was accepted, and the race ran on.
    late = [*entries[:-1], entries[-1]._replace(at=done + 5 * IDLE)]
    older = replay(race_from_record("r1", {**race_record(race), "last_idle_ms": None}), late,
                   None)
    assert older.last_idle_ms == 0
    assert older.status == "running" and older.racers["p1"].seq == 1
    assert older.next_deadline() == older.ends_at


@contextlib.asynccontextmanager
async def serve(tmp_path: Path, idle_ms: int) -> AsyncIterator[str]:
    """``solrace serve`` (a process of its own, on loopback) whose races hold their last racer
    to ``idle_ms``; yields its base URL."""
    prelude = f"import solrace.settings as s; s.LAST_RACER_IDLE_MS = {idle_ms}"
    proc = subprocess.Popen(
        [sys.executable, "-c", f"{prelude}\nimport sys, solrace.tools.cli as cli; "
         "sys.exit(cli.main())", "serve", "--port", "0", "--db", str(tmp_path / "races.db"),
         "--countdown", "0.2", "--rate-limit", "0", "--pool", "0", "--arenas", "off"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), T * 2)
        assert "serving http://" in line, line
        yield line.split("serving ", 1)[1].strip().rstrip("/")
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(T)
        if proc.poll() is None:
            proc.kill()


async def test_an_idle_human_against_a_finished_bot_does_not_wait_out_the_time(
        tmp_path: Path) -> None:
    line = winning_line(1)
    async with serve(tmp_path, idle_ms=1500) as base:
        url = base.replace("http://", "ws://") + "/ws"
        clients: list[RaceClient] = []
        try:
            host, ann, robo, watcher = [await RaceClient.connect(url) for _ in range(4)]
            clients += [host, ann, robo, watcher]
            created = await host.create("scotch", seed="1", players=2, time_limit=600)
            race = created["race"]
            await ann.join(race, name="Ann")
            await robo.join(race, name="Robo", bot=True)
            await host.start(race, created["host_token"])
            await robo.wait_state(race, T)
            for move in line:  # the bot clears the deal; Ann never moves
                await robo.move(race, move)
            last = await ann.next_event("last_racer", timeout=T)
            assert last["player"] == "p1" and last["idle_ms"] == 1500
            snap = await watcher.watch(race)
            if snap["status"] == "running":  # a spectator is told too (unless it is over already)
                assert snap["last_racer"] == {k: last[k] for k in ("player", "ends_at", "idle_ms")}
            over = await ann.next_event("race_over", timeout=T * 2)
            assert over["reason"] == "idle"
            assert [(s["player"], s["place"]) for s in over["standings"]] == [("p2", 1), ("p1", 2)]
            _status, _, body = await get(f"{base}/api/races/{race}")
            summary: dict[str, Any] = json.loads(body)
            # When the idle time after the bot finished ran out, not at the ten minutes' limit.
            assert summary["finished_at"] == last["ends_at"] < summary["ends_at"]
            assert summary["reason"] == "idle" and summary["last_racer"] is None
        finally:
            for client in clients:
                await client.close()
