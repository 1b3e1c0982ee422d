"""The tournament machine on its own: seating, places, points, every tie-break of the table, the
knockout bracket with byes and a no-show, and replay of its log; and a race's order as the
messages carry it, shared places included."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from solrace.core.tournament import (
    Result,
    Settings,
    TLogEntry,
    Tournament,
    TournamentError,
    bracket_order,
    split,
)
from solrace.protocol import messages

T0 = 1_800_000_000_000


def seeds() -> Any:
    counter = itertools.count(1000)
    return lambda game: next(counter)


def entered(fmt: str, n: int, **kw: Any) -> tuple[Tournament, list[TLogEntry]]:
    t = Tournament("t1", Settings("Cup", fmt, ("scotch", "yukon", "quadruple-canfield"), **kw),
                   "host", T0)
    log: list[TLogEntry] = []
    for i in range(n):
        log += t.join(f"racer{i + 1}", f"tok{i + 1}", i == 0, kw.get("code"), T0).log
    return t, log


def test_split_and_bracket_order() -> None:
    assert split(7, 3) == [3, 2, 2]
    assert split(200, 8) == [8] * 25
    assert split(9, 8) == [5, 4] and split(8, 8) == [8] and split(1, 8) == [1]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert bracket_order(2) == [1, 2]


def fin(entrant: str, time_ms: int) -> Result:
    return Result(entrant, True, time_ms, 52, time_ms, False)


def dnf(entrant: str, cards: int, reached_ms: int = 0) -> Result:
    return Result(entrant, False, None, cards, reached_ms, False)


#: Three rounds of seven entrants in races of 3, 2 and 2 (e1-e3, e4-e5, e6-e7), scripted so
#: that the table ties on points three times: e5/e4 are then decided by total time (equal
#: cards), e3/e2 by cards home, e6/e7 by entry order (equal cards and time).
ROUNDS = [
    {"A": [fin("e1", 100), dnf("e3", 20), dnf("e2", 10)],
     "B": [fin("e5", 200), fin("e4", 300)],
     "C": [dnf("e6", 40), dnf("e7", 30)]},
    {"A": [fin("e1", 100), dnf("e3", 40), dnf("e2", 20)],
     "B": [fin("e5", 250), fin("e4", 260)],
     "C": [dnf("e7", 30), dnf("e6", 10)]},
    {"A": [fin("e2", 100), fin("e1", 150), dnf("e3", 44, 20)],
     "B": [dnf("e4", 44, 10), dnf("e5", 44, 30)],
     "C": [dnf("e6", 20), dnf("e7", 10)]},
]


def test_a_three_round_tournament_computes_the_table() -> None:
    t, log = entered("rounds", 7, race_size=3, gap=0)
    draw = seeds()
    out = t.start("host", T0, draw)
    log += out.log
    for number, results in enumerate(ROUNDS, start=1):
        rnd = t.current()
        assert rnd is not None and rnd.number == number
        assert [len(rnd.seats[r]) for r in rnd.races] == [3, 2, 2]
        assert len({rnd.seeds[r] for r in rnd.races}) == 1  # one deal for the whole field
        assert rnd.game == ("scotch", "yukon", "quadruple-canfield")[number - 1]
        if number == 1:
            assert [p.race for p in out.plans] == rnd.races
        for race, key in zip(rnd.races, "ABC", strict=True):
            assert sorted(rnd.seats[race]) == sorted(r.entrant for r in results[key])
            log += t.race_over(race, results[key], T0 + number * 1000).log
        assert rnd.over
        if number < 3:
            assert t.waiting() and t.next_deadline() is None  # gap 0: only the host starts
            with pytest.raises(TournamentError):
                t.next("not-host", T0, draw)
            log += t.next("host", T0 + number * 1000 + 5, draw).log
    assert t.status == "finished"
    table = t.standings()
    assert [row["entrant"] for row in table] == ["e1", "e5", "e4", "e3", "e2", "e6", "e7"]
    assert [row["points"] for row in table] == [17, 12, 12, 7, 7, 4, 4]
    by = {row["entrant"]: row for row in table}
    assert (by["e5"]["cards"], by["e5"]["time_ms"]) == (148, 450)
    assert (by["e4"]["cards"], by["e4"]["time_ms"]) == (148, 560)  # time decides
    assert by["e3"]["cards"] == 104 and by["e2"]["cards"] == 82  # cards decide
    assert (by["e6"]["cards"], by["e6"]["time_ms"]) == (by["e7"]["cards"], by["e7"]["time_ms"])
    assert by["e1"]["rounds"] == [6, 6, 5] and by["e2"]["rounds"] == [0, 1, 6]
    # The log rebuilds exactly the same tournament.
    again = Tournament("t1", t.settings, "host", T0)
    for entry in log:
        again.replay(entry)
    assert again.standings() == table and again.status == "finished" and again.v == t.v


def results_of(t: Tournament, race: str, winner: str, absent: str | None = None) -> list[Result]:
    rnd = t.current()
    assert rnd is not None
    out = []
    for e in rnd.seats[race]:
        if e == absent:
            out.append(Result(e, False, None, 0, 0, True))
        elif e == winner:
            out.append(fin(e, 1000))
        else:
            out.append(dnf(e, 10))
    return out


def play_knockout(t: Tournament, pick: Any, absent: str | None = None) -> list[TLogEntry]:
    """Play every game: ``pick(entrants)`` says who wins; ``absent`` never shows up."""
    draw = seeds()
    log = t.start("host", T0, draw).log
    now = T0
    while t.status != "finished":
        rnd = t.current()
        assert rnd is not None
        for race in [r for r in rnd.races if r not in rnd.results]:
            entrants = rnd.seats[race]
            winner = next(e for e in entrants if e != absent) if absent in entrants else pick(
                entrants)
            now += 1000
            log += t.race_over(race, results_of(t, race, winner, absent), now).log
        if t.status != "finished":
            assert t.waiting()
            log += t.tick(t.next_deadline() or now, draw).log
    return log


def test_an_eight_entrant_best_of_three_knockout() -> None:
    t, log = entered("knockout", 8, best_of=3, gap=5)
    # The better seed (earlier entry) wins 2-1 against everyone but e6, who wins every
    # match; e8 never shows up and loses his games.
    games: dict[frozenset[str], int] = {}

    def pick(entrants: list[str]) -> str:
        a, b = entrants
        if "e6" in entrants:
            return "e6"
        n = games.setdefault(frozenset(entrants), 0)
        games[frozenset(entrants)] = n + 1
        better = min(a, b, key=lambda e: int(e[1:]))
        worse = b if better == a else a
        return worse if n == 1 else better  # 2-1 to the better seed

    log += play_knockout(t, pick, absent="e8")
    bracket = t.bracket()
    assert bracket is not None
    first = [m for m in bracket["matches"] if m["round"] == 1]
    assert [m["entrants"] for m in first] == [["e1", "e8"], ["e4", "e5"], ["e2", "e7"],
                                               ["e3", "e6"]]  # no bye: 8 is a power of two
    assert [m["winner"] for m in first] == ["e1", "e4", "e2", "e6"]
    assert first[0]["wins"] == {"e1": 2}  # e8 absent: two games lost, 2-0
    assert first[1]["wins"] == {"e4": 2, "e5": 1} and len(first[1]["games"]) == 3
    semis = [m for m in bracket["matches"] if m["round"] == 2]
    assert [m["entrants"] for m in semis] == [["e1", "e4"], ["e2", "e6"]]
    final = [m for m in bracket["matches"] if m["round"] == 3]
    assert final[0]["entrants"] == ["e1", "e6"] and final[0]["winner"] == "e6"
    table = t.standings()
    assert [r["entrant"] for r in table[:2]] == ["e6", "e1"]
    assert {r["entrant"] for r in table[2:4]} == {"e4", "e2"}
    # Out in the semi-finals: both third; out in the first round: all four fifth.
    assert [r["place"] for r in table] == [1, 2, 3, 3, 5, 5, 5, 5]
    again = Tournament("t1", t.settings, "host", T0)
    for entry in log:
        again.replay(entry)
    assert again.bracket() == bracket and again.standings() == table


def test_a_five_entrant_knockout_gives_byes_to_the_first_entrants() -> None:
    t, _ = entered("knockout", 5, best_of=1, gap=1)
    t.start("host", T0, seeds())
    first = [m for m in t.matches if m.round == 1]
    assert [m.entrants for m in first] == [["e1", None], ["e4", "e5"], ["e2", None],
                                           ["e3", None]]
    assert [m.winner for m in first] == ["e1", None, "e2", "e3"]
    rnd = t.current()
    assert rnd is not None and [rnd.seats[r] for r in rnd.races] == [["e4", "e5"]]


def test_host_tools() -> None:
    t, _ = entered("rounds", 3, code="sesame", gap=10)
    with pytest.raises(TournamentError) as info:
        t.join("late", "x", False, "wrong", T0)
    assert info.value.code == "forbidden"
    t.set_entry("host", False, T0)
    with pytest.raises(TournamentError) as info:
        t.join("late", "x", False, "sesame", T0)
    assert info.value.code == "entry_closed"
    t.remove("host", "e3", T0)
    draw = seeds()
    t.start("host", T0, draw)
    rnd = t.current()
    assert rnd is not None and rnd.entrants == ["e1", "e2"]  # e3 was taken out
    with pytest.raises(TournamentError) as info:
        t.next("host", T0, draw)
    assert info.value.code == "nothing_waiting"
    old = list(rnd.races)
    out = t.redeal("host", 1, T0 + 5, draw)
    assert rnd.void == old and rnd.races != old and len(out.plans) == 1
    assert out.log[0].data["seed"] == out.plans[0].seed  # a new deal, written down
    for race in rnd.races:
        t.race_over(race, [fin("e1", 10), dnf("e2", 3)], T0 + 10)
    assert t.next_deadline() == T0 + 10 + 10_000
    t.set_paused("host", True, T0 + 11)
    assert t.next_deadline() is None and t.tick(T0 + 99_000, draw).plans == []
    t.set_paused("host", False, T0 + 20)
    assert t.next_deadline() == T0 + 20 + 10_000
    out = t.finish("host", T0 + 21)
    assert out.finished and t.status == "finished"


def test_equal_results_share_a_place_and_the_points() -> None:
    t, _ = entered("rounds", 4, race_size=4, gap=0, rounds=1)
    t.start("host", T0, seeds())
    rnd = t.current()
    assert rnd is not None
    # e1 and e2 finish in the same millisecond; e3 and e4 both resign with nothing home.
    results = [fin("e1", 500), fin("e2", 500), Result("e3", False, None, 0, 0, True),
               Result("e4", False, None, 0, 0, True)]
    t.race_over(rnd.races[0], results, T0 + 1000)
    assert t.round_places(rnd) == {"e1": 1, "e2": 1, "e3": 3, "e4": 3}
    table = t.standings()
    assert [(r["entrant"], r["place"], r["points"]) for r in table] == [
        ("e1", 1, 3), ("e2", 1, 3), ("e3", 3, 1), ("e4", 3, 1)]


def test_a_race_order_carries_its_shared_places() -> None:
    """The rounds' lists show each race's order with its places: a shared one is shared there
    too, not counted on (issue 29, item 5: two entrants sharing 3rd were shown 3rd and 4th)."""
    t, _ = entered("rounds", 4, race_size=4, gap=0, rounds=1)
    out = t.start("host", T0, seeds())
    rnd = t.current()
    assert rnd is not None
    race = rnd.races[0]
    # e3 finishes, e1 stops with 12 cards home, e2 and e4 resign with nothing home.
    results = [dnf("e1", 12, 300), Result("e2", False, None, 0, 0, True), fin("e3", 900),
               Result("e4", False, None, 0, 0, True)]
    out = t.race_over(race, results, T0 + 1000)
    view = messages.tournament_view(t)["rounds"][0]
    assert view["results"][race] == ["e3", "e1", "e2", "e4"]
    assert view["places"][race] == [1, 2, 3, 3]
    event = next(messages.tournament_event(t, ev) for ev in out.events if ev.kind == "standings")
    assert (event["results"], event["places"]) == (["e3", "e1", "e2", "e4"], [1, 2, 3, 3])


def test_a_knockout_game_tied_for_first_goes_to_the_better_seed() -> None:
    t, _ = entered("knockout", 2, best_of=1, gap=0)
    t.start("host", T0, seeds())
    rnd = t.current()
    assert rnd is not None
    race = rnd.races[0]
    both_out = [Result("e2", False, None, 0, 0, True), Result("e1", False, None, 0, 0, True)]
    t.race_over(race, both_out, T0 + 1000)
    assert t.matches[0].winner == "e1" and t.status == "finished"


def test_the_csv_shows_every_name_as_text() -> None:
    import csv
    import io

    from solrace.protocol.messages import standings_csv

    hostile = ["x;=1+1;", "＝1+1", "＋SUM(A1)", "a,@b", "=cmd", "ok-name", "plain"]
    t = Tournament("t1", Settings("Cup", "rounds", ("scotch",)), "host", T0)
    for i, name in enumerate(hostile):
        t.join(name, f"tok{i}", False, None, T0)
    text = standings_csv(t)
    rows = list(csv.reader(io.StringIO(text)))
    names = [row[1] for row in rows[1:]]
    assert sorted(names) == sorted(["x;'=1+1;", "'＝1+1", "'＋SUM(A1)", "a,'@b", "'=cmd",
                                    "ok-name", "plain"])
    # Every cell is quoted: a reader that splits on ";" keeps "x;=1+1;" in one cell.
    assert all(line.startswith('"') for line in text.splitlines())
    semicolon = list(csv.reader(io.StringIO(text), delimiter=";"))
    assert all(not cell.lstrip().startswith(("=", "@")) for row in semicolon for cell in row)


def test_a_resign_is_a_loss_and_a_flagged_result_gets_no_place() -> None:
    t, log = entered("rounds", 4, race_size=4, gap=0, rounds=1)
    log += t.start("host", T0, seeds()).log
    rnd = t.current()
    assert rnd is not None
    # e2 resigned with more cards than e3, who ran out of time: e3 is ahead of him. e1 finished
    # first but at machine speed: kept off the table's places.
    results = [Result("e1", True, 300, 52, 300, False, True), fin("e4", 500),
               Result("e2", False, None, 20, 100, True), dnf("e3", 5, 50)]
    log += t.race_over(rnd.races[0], results, T0 + 1000).log
    assert t.round_places(rnd) == {"e4": 1, "e3": 2, "e2": 3, "e1": 4}
    table = t.standings()
    assert [(r["entrant"], r["place"], r.get("flagged", False)) for r in table] == [
        ("e4", 1, False), ("e3", 2, False), ("e2", 3, False), ("e1", None, True)]
    # The flag is in the tournament's log: a tournament rebuilt from it agrees.
    again, _ = entered("rounds", 4, race_size=4, gap=0, rounds=1)
    rebuilt = Tournament("t1", again.settings, "host", T0)
    for entry in log:
        rebuilt.replay(entry)
    assert rebuilt.standings() == table


def test_a_closed_account_has_no_place_and_its_rivals_take_its_places() -> None:
    t = Tournament("t1", Settings("Cup", "rounds", ("scotch",), race_size=4, gap=0, rounds=1),
                   "host", T0)
    log: list[TLogEntry] = []
    for i in range(4):  # e1 is the player "pl1", the others anonymous but e3 ("pl3")
        player = {0: "pl1", 2: "pl3"}.get(i)
        log += t.join(f"racer{i + 1}", f"tok{i + 1}", False, None, T0, player=player).log
    log += t.start("host", T0, seeds()).log
    rnd = t.current()
    assert rnd is not None
    log += t.race_over(rnd.races[0], [fin("e1", 300), fin("e2", 400), dnf("e3", 20),
                                      dnf("e4", 10)], T0 + 1000).log
    before = {r["entrant"]: (r["place"], r["points"]) for r in t.standings()}
    assert before == {"e1": (1, 3), "e2": (2, 2), "e3": (3, 1), "e4": (4, 0)}
    assert t.close_account("nobody", T0 + 2000).log == []
    out = t.close_account("pl1", T0 + 2000)
    log += out.log
    assert [e.kind for e in out.events] == ["standings"]
    assert t.close_account("pl1", T0 + 3000).log == []  # once
    table = t.standings()
    assert [(r["entrant"], r["place"], r["points"], r.get("closed", False)) for r in table] == [
        ("e2", 1, 3, False), ("e3", 2, 2, False), ("e4", 3, 1, False), ("e1", None, 0, True)]
    assert "closed" in messages.standings_csv(t).splitlines()[-1]
    # The closure is in the tournament's log: a tournament rebuilt from it agrees.
    rebuilt = Tournament("t1", t.settings, "host", T0)
    for entry in log:
        rebuilt.replay(entry)
    assert rebuilt.standings() == table and rebuilt.v == t.v


def test_a_closed_account_has_no_place_in_a_knockout_table() -> None:
    t = Tournament("t1", Settings("Cup", "knockout", ("scotch",), best_of=1, gap=0), "host", T0)
    for i in range(2):
        t.join(f"racer{i + 1}", f"tok{i + 1}", False, None, T0, player=f"pl{i + 1}")
    t.start("host", T0, seeds())
    rnd = t.current()
    assert rnd is not None
    t.race_over(rnd.races[0], [fin("e1", 300), fin("e2", 400)], T0 + 1000)
    assert [(r["entrant"], r["place"]) for r in t.standings()] == [("e1", 1), ("e2", 2)]
    t.close_account("pl1", T0 + 2000)
    assert [(r["entrant"], r["place"], r.get("closed")) for r in t.standings()] == [
        ("e2", 1, None), ("e1", None, True)]
