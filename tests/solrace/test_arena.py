"""The arena, sans-I/O: pairing by the table (never the last opponent while anyone else waits),
points and streaks, a racer who never moved loses and is paused, the end, and a rebuild from the
log that agrees exactly."""

from __future__ import annotations

import pytest
from solrace.core.arena import PAIR_EVERY_MS, Arena, ArenaResult, ArenaSettings
from solrace.core.tournament_parts import TLogEntry, TournamentError

T0 = 1_000_000_000


def arena(minutes: int = 30) -> tuple[Arena, list[TLogEntry]]:
    a = Arena("ab12cd34ef", ArenaSettings("Test arena", "scotch", T0, minutes), T0 - 60_000)
    return a, []


def enter(a: Arena, log: list[TLogEntry], *players: str, at: int = T0 - 1000) -> None:
    for p in players:
        log += a.join(p, p.upper(), at, account=True, net=f"n-{p}").log


def pairs_at(a: Arena, log: list[TLogEntry], now: int) -> list[tuple[str, list[str]]]:
    out = a.tick(now)
    log += out.log
    return [(plan.race, plan.entrants) for plan in out.plans]


def win(a: Arena, log: list[TLogEntry], race: str, winner: str, now: int,
        shared: bool = False, moved: bool = True) -> None:
    a_, b_ = a.running[race]
    loser = b_ if winner == a_ else a_
    results = [ArenaResult(winner, 1, shared, True),
               ArenaResult(loser, 1 if shared else 2, shared, moved)]
    log += a.race_over(race, results, now).log


def rows(a: Arena) -> list[tuple[str, int | None, int, int]]:
    return [(r["player"], r["place"], r["points"], r["streak"]) for r in a.standings()]


def test_entrants_are_paired_at_the_start_by_the_table() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4")
    assert a.status(T0 - 1) == "upcoming" and a.tick(T0 - 1).plans == []
    assert a.next_deadline() == T0  # the start
    assert pairs_at(a, log, T0) == [("ab12cd34ef-1", ["p1", "p2"]),
                                    ("ab12cd34ef-2", ["p3", "p4"])]
    assert a.status(T0) == "running" and a.waiting() == []
    assert all(r["racing"] for r in a.standings())


def test_points_and_streaks() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4")
    now = T0
    pairs_at(a, log, now)
    win(a, log, "ab12cd34ef-1", "p1", now + 10_000)
    win(a, log, "ab12cd34ef-2", "p3", now + 20_000, shared=True)
    assert rows(a)[:2] == [("p1", 1, 2, 1), ("p3", 2, 1, 0)]
    assert {r["player"]: r["points"] for r in a.standings()}["p4"] == 1  # shared: 1 each
    # p1 wins twice more: the third win in a row scores 4.
    for _step in range(2):
        now += 60_000
        race = next(r for r, _ in pairs_at(a, log, now) if "p1" in a.running[r])
        win(a, log, race, "p1", now + 1000)
    p1 = next(r for r in a.standings() if r["player"] == "p1")
    assert p1["points"] == 2 + 2 + 4 and p1["streak"] == 3 and p1["wins"] == 3
    assert p1["form"] == "WWW"
    # A race not won ends the streak.
    now += 60_000
    race = next(r for r, _ in pairs_at(a, log, now) if "p1" in a.running[r])
    other = next(p for p in a.running[race] if p != "p1")
    win(a, log, race, other, now + 1000)
    p1 = next(r for r in a.standings() if r["player"] == "p1")
    assert p1["points"] == 8 and p1["streak"] == 0 and p1["form"] == "WWWL"


def test_never_the_last_opponent_while_someone_else_waits() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2")
    [(race, _)] = pairs_at(a, log, T0)
    win(a, log, race, "p1", T0 + 5000)
    # Only they two wait: they meet again.
    assert [p for _, p in pairs_at(a, log, T0 + 5000 + PAIR_EVERY_MS)] == [["p1", "p2"]]
    race = a.entrants["p1"].racing
    assert race is not None
    enter(a, log, "p3", at=T0 + 7000)
    win(a, log, race, "p2", T0 + 8000)
    # Now p3 waits too: p2 (first in the table, 2 points... ) does not meet p1 again.
    got = pairs_at(a, log, T0 + 8000 + PAIR_EVERY_MS)
    assert len(got) == 1 and set(got[0][1]) != {"p1", "p2"}


def test_a_racer_who_never_moved_loses_and_is_paused() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2")
    [(race, _)] = pairs_at(a, log, T0)
    win(a, log, race, "p1", T0 + 40_000, moved=False)
    assert next(r for r in a.standings() if r["player"] == "p2")["paused"] is True
    assert [e.player for e in a.waiting()] == ["p1"]
    enter(a, log, "p2", at=T0 + 50_000)  # he comes back: he waits again
    assert {e.player for e in a.waiting()} == {"p1", "p2"}
    with pytest.raises(TournamentError):
        a.pause("nobody", T0)


def test_a_pause_keeps_the_points_and_a_flag_takes_the_place() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3")
    pairs = pairs_at(a, log, T0)
    log += a.race_over(pairs[0][0], [ArenaResult("p1", 1, False, True, flagged=True),
                                      ArenaResult("p2", 2, False, True)], T0 + 1000).log
    log += a.pause("p2", T0 + 2000).log
    table = a.standings()
    assert [(r["player"], r["place"]) for r in table] == [("p2", 1), ("p3", 2), ("p1", None)]
    assert table[-1]["flagged"] is True and table[-1]["points"] == 0
    # p1 is flagged, not paused: he waits, and is paired with p3 (who was alone).
    assert [p for _, p in pairs_at(a, log, T0 + 5000)] == [["p3", "p1"]]


def test_the_end_no_new_pairs_then_over_when_the_last_race_ends() -> None:
    a, log = arena(minutes=1)
    enter(a, log, "p1", "p2", "p3", "p4")
    pairs = pairs_at(a, log, T0)
    ends = T0 + 60_000
    win(a, log, pairs[0][0], "p1", ends - 10_000)
    assert pairs_at(a, log, ends) == []  # over time: nobody is paired again
    out = a.tick(ends)
    assert not out.finished  # a race is still under way
    last = a.race_over(pairs[1][0], [ArenaResult("p3", 1, False, True),
                                     ArenaResult("p4", 2, False, True)], ends + 30_000)
    log += last.log
    assert last.finished and a.status(ends + 30_000) == "finished"
    assert [e.kind for e in last.events] == ["arena_standings", "arena_over"]
    with pytest.raises(TournamentError):
        a.join("p5", "P5", ends + 31_000)
    assert a.race_over("ab12cd34ef-9", [], ends + 32_000).log == []


def test_the_log_rebuilds_the_arena_exactly() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4", "p5")
    now = T0
    for step in range(6):
        for race, _ in pairs_at(a, log, now):
            first = a.running[race][step % 2]
            win(a, log, race, first, now + 20_000, shared=step == 3)
        if step == 2:
            log += a.pause("p5", now).log
        now += 30_000
    log += a.race_over("ab12cd34ef-1", [], now).log  # counted already: nothing
    again = Arena(a.tid, a.settings, a.created_at)
    for entry in log:
        again.replay(entry)
    assert again.standings() == a.standings() and again.v == a.v == len(log)
    assert again.running == a.running and again.pairs == a.pairs
    assert again.next_deadline() == a.next_deadline()
    again_settings = ArenaSettings.from_record(a.settings.as_record())
    assert again_settings == a.settings and a.settings.as_record()["kind"] == "arena"


def test_past_the_end_with_a_race_under_way_nothing_is_due() -> None:
    a, log = arena(minutes=1)
    enter(a, log, "p1", "p2")
    pairs_at(a, log, T0)
    ends = T0 + 60_000
    assert a.next_deadline(ends - 1) == ends
    assert a.next_deadline(ends + 5) is None  # the race's result ends it, no timer spins


def test_the_table_is_built_once_per_change_and_follows_every_change() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4")
    table = a.standings()
    assert a.standings() is table  # no change: the same table (a burst shares one)
    assert a.row("p3") == table[2] and a.row("nobody") is None
    pairs_at(a, log, T0)
    assert a.standings() is not table and all(r["racing"] for r in a.standings())
    win(a, log, "ab12cd34ef-2", "p4", T0 + 10_000)
    row = a.row("p4")
    assert row is not None and row["place"] == 1 and row["points"] == 2
    assert not row["racing"] and a.standings()[0] == row
    a.pause("p4", T0 + 11_000)
    assert a.row("p4")["paused"] is True  # type: ignore[index]
    assert [e.player for e in a.waiting()] == ["p3"]  # p1, p2 race; p4 paused


def test_the_first_rows_alone_are_the_whole_tables_first_rows() -> None:
    """A message carries the table's first rows: only those are built, and they are the
    whole table's, before and after a change (and the whole table after them)."""
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4", "p5")
    top = a.standings(2)
    assert len(top) == 2 and a.standings(2) is top  # no change: built once
    assert a.standings(10) == a.standings() and len(a.standings()) == 5
    assert a.standings(2) == a.standings()[:2]
    pairs_at(a, log, T0)
    win(a, log, "ab12cd34ef-2", "p4", T0 + 10_000)
    top = a.standings(2)
    assert top[0]["player"] == "p4" and top == a.standings()[:2]
    assert a.standings(0) == []


def test_a_closed_account_loses_its_place_is_paired_no_more_and_the_log_keeps_it() -> None:
    a, log = arena()
    enter(a, log, "p1", "p2", "p3", "p4")
    pairs = pairs_at(a, log, T0)
    win(a, log, pairs[0][0], "p1", T0 + 10_000)  # p1 first, with 2 points
    win(a, log, pairs[1][0], "p3", T0 + 20_000)
    out = a.close_account("p1", T0 + 30_000)
    log += out.log
    assert [e.kind for e in out.events] == ["arena_standings"]
    assert a.close_account("p1", T0 + 31_000).log == []  # once
    assert a.close_account("nobody", T0 + 31_000).log == []
    table = a.standings()
    assert [(r["player"], r["place"]) for r in table] == [
        ("p3", 1), ("p2", 2), ("p4", 3), ("p1", None)]
    assert table[-1]["closed"] is True and table[-1]["points"] == 2
    assert a.row("p1") == table[-1]
    # Never paired again, and he cannot come back in.
    assert all("p1" not in p for _, p in pairs_at(a, log, T0 + 40_000))
    with pytest.raises(TournamentError) as err:
        a.join("p1", "P1", T0 + 41_000)
    assert err.value.code == "closed"
    again = Arena(a.tid, a.settings, a.created_at)
    for entry in log:
        again.replay(entry)
    assert again.standings() == a.standings() and again.v == a.v
