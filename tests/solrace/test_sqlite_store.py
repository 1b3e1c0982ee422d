"""The SQLite store: batched commits, and races rebuilt from seed + log."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.protocol import messages
from solrace.store.sqlite_store import SQLiteStore as Storage

T0 = 1_000_000
ROWS = "SELECT (SELECT count(*) FROM log) + (SELECT count(*) FROM journal)"


async def test_flushed_means_committed_and_reload_rebuilds(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    storage = Storage(db)
    race = Race("r1", "scotch", 99, "salt", Options(2, 60, True), T0, "host", 0)
    storage.add_race(race)
    storage.append(race.join("ann", "tok", T0).log)
    storage.append(race.start("host", T0).log)
    race.tick(T0)
    for i in range(3):
        move = race.racers["p1"].game.legal_moves()[0].text()
        storage.append(race.move("p1", move, i + 1, T0 + i).log)
    # Nothing is committed until the end of the loop turn; flushed() waits for it.
    other = sqlite3.connect(db)
    assert other.execute(ROWS).fetchone() == (0,)
    await storage.flushed()
    assert other.execute(ROWS).fetchone() == (5,)
    storage.close()

    again = Storage(db)
    [loaded] = await again.startup_races()
    assert messages.state(loaded, "p1") == messages.state(race, "p1")
    p1 = race.racers["p1"]
    assert messages.snapshot(loaded, "p1", loaded.racers["p1"], 0) == messages.snapshot(
        race, "p1", p1, 0)
    # New entries continue the numbering after a reload.
    again.append(loaded.resign("p1", T0 + 10).log)
    again.mark_finished("r1", T0 + 10)
    await again.flushed()
    assert await again.startup_races() == []
    finished = await again.load("r1")
    assert finished is not None and finished.status == "finished"
    assert messages.summary(finished)["players"][0]["moves"] == race.racers["p1"].actions
    assert await again.load("nope") is None
    again.close()


async def test_time_limit_finish_survives_reload(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "t.db")
    race = Race("r2", "yukon", 5, "salt", Options(1, 1, True), T0, "host", 0)
    storage.add_race(race)
    storage.append(race.join("ann", "tok", T0).log)
    storage.append(race.start("host", T0).log)
    out = race.tick(T0 + 1000)
    assert out.finished and race.finished_at is not None
    storage.mark_finished("r2", race.finished_at)
    await storage.flushed()
    loaded = await storage.load("r2")
    assert loaded is not None and loaded.status == "finished"
    assert loaded.standings() == race.standings()
    storage.close()


async def test_recovery_moves_races_on_to_the_current_time(tmp_path: Path) -> None:
    from solrace.net.app import App

    storage = Storage(tmp_path / "r.db")
    started = Race("r3", "scotch", 1, "salt", Options(2, 60, True), T0, "host", 3000)
    storage.add_race(started)
    storage.append(started.join("ann", "tok", T0).log)
    storage.append(started.start("host", T0).log)  # countdown ends at T0 + 3000
    expired = Race("r4", "scotch", 2, "salt", Options(1, 1, True), T0, "host", 0)
    storage.add_race(expired)
    storage.append(expired.join("bob", "tok2", T0).log)
    storage.append(expired.start("host", T0).log)  # time limit: T0 + 1000
    await storage.flushed()
    storage.close()

    again = Storage(tmp_path / "r.db")
    app = App(again, clock=lambda: T0 + 5000, client=tmp_path)
    assert await app.hub.recover() == 2
    live = app.races["r3"]
    assert live.status == "running" and live.started_at == T0 + 3000
    r4 = app.hub.get("r4")
    assert "r4" not in app.races and r4 is not None and r4.status == "finished"
    assert r4.finished_at == T0 + 1000
    app.close()
    again.close()
    assert Storage(tmp_path / "r.db").unfinished()[0].race == "r3"


async def test_checkpoints_run_off_the_loop_and_commits_wait_for_them(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    storage = Storage(db, checkpoint_bytes=1, check_wal_every=1)  # checkpoint every commit
    race = Race("r5", "scotch", 3, "salt", Options(1, 60, True), T0, "host", 0)
    storage.add_race(race)
    storage.append(race.join("ann", "tok", T0).log)
    await storage.flushed()
    assert storage._checkpointing is not None, "the first commit started a checkpoint"
    # Queued while the checkpoint runs: committed right after it, still before the ack.
    storage.append(race.start("host", T0).log)
    await storage.flushed()
    assert storage.checkpoints >= 1
    other = sqlite3.connect(db)
    assert other.execute(ROWS).fetchone() == (2,)
    storage.close()
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size < 1 << 20
    reloaded = await Storage(db).load("r5")
    assert reloaded is not None and reloaded.status == "countdown"


async def test_journal_is_archived_into_log_race_by_race(tmp_path: Path) -> None:
    """Entries go to the journal first; every ``archive_rows`` rows they move to ``log`` in the
    same transaction; races read back the same from either table, and after a restart."""
    db = tmp_path / "j.db"
    storage = Storage(db, archive_rows=7)
    races = [Race(f"r{i}", "scotch", 10 + i, "salt", Options(1, 60, True), T0, "host", 0)
             for i in range(2)]
    for race in races:
        storage.add_race(race)
        storage.append(race.join("ann", "tok", T0).log)
        storage.append(race.start("host", T0).log)
        race.tick(T0)
    await storage.flushed()
    other = sqlite3.connect(db)
    counts = []
    for i in range(5):
        for race in races:  # interleaved, as under load
            move = race.racers["p1"].game.legal_moves()[0].text()
            storage.append(race.move("p1", move, i + 1, T0 + i).log)
            await storage.flushed()
            counts.append(other.execute(
                "SELECT (SELECT count(*) FROM log), (SELECT count(*) FROM journal)"
            ).fetchone())
    assert counts[-1] == (14, 0), counts  # two archives of 7 rows, journal empty again
    assert any(journal > 0 for _, journal in counts)
    assert sum(counts[-1]) == 14
    for race in races:
        storage.append([race._log(T0 + 9, "resign", "p1")])
    await storage.flushed()
    assert other.execute("SELECT count(*) FROM journal").fetchone() == (2,)
    for race in races:
        loaded = await storage.load(race.race)
        assert loaded is not None
        assert loaded.racers["p1"].actions == race.racers["p1"].actions
    rows = other.execute("SELECT race, n FROM log").fetchall()
    assert rows == sorted(rows)
    # A restart (even after a crash: nothing else is needed) moves the journal into log.
    storage._writer.close()
    storage.db.close()
    again = Storage(db)
    assert other.execute(
        "SELECT (SELECT count(*) FROM log), (SELECT count(*) FROM journal)"
    ).fetchone() == (16, 0)
    for race in races:
        loaded = await again.load(race.race)
        assert loaded is not None
        assert loaded.racers["p1"].actions == race.racers["p1"].actions
        assert loaded.racers["p1"].resigned
    again.close()


async def test_the_moves_of_one_loop_turn_share_one_commit_and_wait_for_it(tmp_path: Path) -> None:
    """Group commits (issue 31): what is queued in one loop turn — several racers' moves —
    is written in one transaction, and no acknowledgement runs before it is on disk."""
    db = tmp_path / "g.db"
    storage = Storage(db)
    race = Race("r6", "scotch", 7, "salt", Options(2, 60, True), T0, "host", 0)
    storage.add_race(race)
    storage.append(race.join("ann", "t1", T0).log)
    storage.append(race.join("bob", "t2", T0).log)
    storage.append(race.start("host", T0).log)
    race.tick(T0)
    await storage.flushed()
    other = sqlite3.connect(db)
    rows = other.execute(ROWS).fetchone()[0]
    commits = storage._commits
    acked: list[tuple[int, int]] = []

    def ack(n: int) -> Callable[[], None]:
        # An acknowledgement looks, from another connection, at what is on disk by then.
        return lambda: acked.append((n, other.execute(ROWS).fetchone()[0]))

    for i, player in enumerate(["p1", "p2"] * 3):
        move = race.racers[player].game.legal_moves()[0].text()
        storage.append(race.move(player, move, i // 2 + 1, T0 + i).log)
        storage.after_commit(ack(i))
    assert acked == [] and other.execute(ROWS).fetchone()[0] == rows
    await storage.flushed()
    assert storage._commits == commits + 1, "one transaction for the turn's six moves"
    assert acked == [(n, rows + 6) for n in range(6)], "in order, each after all six are durable"
    storage.close()
