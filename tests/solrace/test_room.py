"""The sans-I/O race room: no sockets, no clock, every transition checked directly."""

from __future__ import annotations

from typing import Any

import pytest
import solrules
from solrace.core.race import Race
from solrace.core.race_parts import LogEntry, Options, RaceError, commitment
from solrace.protocol import messages
from solrace.settings import CLAIM_AFTER_MS, HINT_PENALTY_MS, LOBBY_TTL_MS

T0 = 1_000_000


def new_race(players: int = 2, undo: bool = True, time_limit: int = 60, seed: int = 7) -> Race:
    return Race("r1", "scotch", seed, "salt", Options(players, time_limit, undo), T0, "host", 1000)


def running(n: int = 2, **kw: Any) -> Race:
    race = new_race(players=max(n, 2), **kw)
    for i in range(n):
        race.join(f"racer{i}", f"token{i}", T0)
    race.start("host", T0)
    race.tick(T0 + 1000)
    assert race.status == "running"
    return race


def seed_with_home_move() -> int:
    """A Scotch deal whose first player can send a card home at once."""
    return next(seed for seed in range(1, 1000)
                if any(">f" in m.text() for m in solrules.new_game("scotch", seed).legal_moves()))


def first_legal(race: Race, player: str) -> str:
    return race.racers[player].game.legal_moves()[0].text()


def codes(fn: Any) -> str:
    with pytest.raises(RaceError) as info:
        fn()
    return info.value.code


class FakeWinningGame:
    """Stands in for a deal that one move wins (real deals take hundreds of moves)."""

    def __init__(self, real: solrules.Game) -> None:
        self.real = real
        self.won = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def push(self, move: solrules.Move) -> None:
        self.real.push(move)
        self.won = True

    def is_won(self) -> bool:
        return self.won

    def progress(self) -> tuple[int, int]:
        return (52, 52) if self.won else self.real.progress()


def test_commitment_is_sha256_of_game_seed_salt() -> None:
    race = new_race()
    assert race.commitment == commitment("scotch", 7, "salt")
    assert len(race.commitment) == 64 and race.commitment == race.commitment.lower()


def test_lifecycle_events_are_numbered() -> None:
    race = new_race()
    events = race.join("ann", "t1", T0).events + race.join("bob", "t2", T0, bot=True).events
    assert [e.fields["bot"] for e in events] == [False, True]
    events += race.ready("p1", T0).events
    out = race.ready("p2", T0 + 5)
    assert [e.kind for e in out.events] == ["ready", "countdown"]
    assert out.events[-1].fields["starts_at"] == T0 + 5 + 1000
    assert race.next_deadline() == T0 + 1005
    assert race.tick(T0 + 1004).events == []
    late = race.tick(T0 + 2000)  # late tick: the start still happens at starts_at
    assert race.started_at == T0 + 1005 and race.ends_at == T0 + 1005 + 60_000
    assert [e.kind for e in late.events] == ["started"]
    assert late.started and late.views  # every racer gets its first state now
    vs = [e.v for e in events + out.events + late.events]
    assert vs == list(range(1, len(vs) + 1))


def test_one_ready_racer_does_not_start_alone() -> None:
    race = new_race()
    race.join("ann", "t1", T0)
    assert [e.kind for e in race.ready("p1", T0).events] == ["ready"]
    assert race.status == "lobby"


def test_join_limits_and_tokens() -> None:
    race = new_race(players=2)
    race.join("ann", "secret-a", T0)
    race.join("bob", "secret-b", T0)
    assert codes(lambda: race.join("cat", "c", T0)) == "race_full"
    assert race.find_token("secret-b") is race.racers["p2"]
    assert race.find_token("nope") is None
    race.start("host", T0)
    race.tick(T0 + 1000)
    assert codes(lambda: new_race_started_join(race)) == "race_started"


def new_race_started_join(race: Race) -> None:
    race.join("late", "x", T0 + 2000)


def test_start_needs_host_token_and_a_racer() -> None:
    race = new_race()
    assert codes(lambda: race.start("host", T0)) == "no_racers"
    race.join("ann", "t", T0)
    assert codes(lambda: race.start("not-host", T0)) == "forbidden"
    out = race.start("host", T0)
    assert out.events[0].kind == "countdown" and race.status == "countdown"
    assert codes(lambda: race.start("host", T0)) == "race_started"


def test_move_before_start_is_race_not_running() -> None:
    race = new_race()
    race.join("ann", "t", T0)
    assert codes(lambda: race.move("p1", "t1>t2", 1, T0)) == "race_not_running"


def test_move_checks_and_replies() -> None:
    race = running()
    move = first_legal(race, "p1")
    out = race.move("p1", move, 1, T0 + 2000)
    assert [e.kind for e in out.events] == ["progress"]
    assert out.events[0].fields == {"player": "p1", "progress": race.racers["p1"].progress()}
    assert out.moved == ["p1"]  # its board goes out as a throttled, unnumbered view
    assert out.acted == "p1" and not out.views  # Scotch: nothing was face down
    state = messages.state(race, "p1", rid=9)
    assert state["type"] == "state" and state["seq"] == 1 and state["rid"] == 9
    assert state["legal"] == [m.text() for m in race.racers["p1"].game.legal_moves()]
    assert out.log == [LogEntry("r1", T0 + 2000, "move", "p1", move)]
    assert race.racers["p1"].times == [T0 + 2000]
    # A repeated seq is not applied twice: the reply is the current state.
    again = race.move("p1", move, 1, T0 + 2001)
    assert again.events == [] and again.log == [] and again.acted == "p1"
    assert race.racers["p1"].seq == 1
    assert codes(lambda: race.move("p1", move, 5, T0)) == "bad_seq"
    assert codes(lambda: race.move("p2", "zz", 1, T0)) == "illegal_move"
    assert codes(lambda: race.move("p2", "t1>t1", 1, T0)) == "illegal_move"
    assert codes(lambda: race.move(None, move, 1, T0)) == "forbidden"
    assert codes(lambda: race.move("p9", move, 1, T0)) == "forbidden"
    assert race.racers["p2"].seq == 0


def test_illegal_move_message_comes_from_the_rules() -> None:
    race = running()
    game = race.racers["p1"].game
    legal = {m.text() for m in game.legal_moves()}
    bad = next(
        f"t{a}>t{b}" for a in range(1, 19) for b in range(1, 19)
        if a != b and f"t{a}>t{b}" not in legal
    )
    with pytest.raises(RaceError) as info:
        race.move("p1", bad, 1, T0)
    assert info.value.message == game.refusal(solrules.Move.from_text(bad))


def test_undo_counts_as_action_and_can_be_forbidden() -> None:
    race = running()
    assert codes(lambda: race.undo("p1", 1, T0)) == "illegal_move"  # nothing to undo
    before = race.racers["p1"].game.board()
    race.move("p1", first_legal(race, "p1"), 1, T0)
    out = race.undo("p1", 2, T0)
    assert out.acted == "p1" and [e.kind for e in out.events] == ["progress"]
    assert race.racers["p1"].seq == 2 and race.racers["p1"].game.board() == before
    assert race.racers["p1"].actions[-1] == "undo"
    strict = running(undo=False)
    assert codes(lambda: strict.undo("p1", 1, T0)) == "forbidden"


def test_finish_resign_and_standings() -> None:
    race = running(3)
    race.racers["p2"].game = FakeWinningGame(race.racers["p2"].game)  # type: ignore[assignment]
    out = race.move("p2", first_legal(race, "p2"), 1, T0 + 5000)
    finished = [e.fields for e in out.events if e.kind == "finished"]
    assert finished and finished[0]["place"] == 1 and finished[0]["time_ms"] == 4000
    assert out.views  # a racer who stops racing changes what outsiders may see
    assert codes(lambda: race.move("p2", "t1>t2", 2, T0)) == "race_not_running"
    race.resign("p1", T0 + 6000)
    assert race.status == "running"
    out = race.resign("p3", T0 + 7000)
    assert out.finished and race.status == "finished" and race.revealed
    over = messages.event(race, out.events[-1])
    assert over["type"] == "race_over" and over["seed"] == "7" and over["salt"] == "salt"
    table = over["standings"]
    assert table[0]["player"] == "p2"
    # p1 and p3 resigned with no card home, reached at the start: equal results, one place.
    assert [s["place"] for s in table] == [1, 2, 2]
    assert table[1]["time_ms"] is None and table[1]["resigned"] is True


def test_standings_ties_by_who_got_there_first() -> None:
    race = running(2)
    # Find a move to a foundation for both racers (same deal) and play it at different times.
    game = race.racers["p1"].game
    path: list[str] = []
    for _ in range(200):
        home = [m for m in game.legal_moves() if m.dst.startswith("f")]
        if home:
            path.append(home[0].text())
            break
        move = game.legal_moves()[0]
        path.append(move.text())
        game.push(move)
    else:
        pytest.skip("no foundation move reached on this deal")
    while game.move_stack:
        game.pop()
    for i, text in enumerate(path):
        race.move("p2", text, i + 1, T0 + 1000 + i)
    for i, text in enumerate(path):
        race.move("p1", text, i + 1, T0 + 5000 + i)
    race.tick(race.ends_at or 0)
    assert race.status == "finished"
    assert [s["player"] for s in race.standings()] == ["p2", "p1"]


def test_time_limit_ends_the_race() -> None:
    race = running(2, time_limit=10)
    assert race.next_deadline() == T0 + 1000 + 10_000
    out = race.tick(T0 + 1000 + 10_000)
    assert out.finished and out.events[-1].kind == "race_over"
    assert codes(lambda: race.move("p1", "t1>t2", 1, T0)) == "race_not_running"


def test_an_abandoned_lobby_closes() -> None:
    race = new_race()
    race.join("ann", "t", T0)
    assert race.next_deadline() == T0 + LOBBY_TTL_MS
    assert race.tick(T0 + LOBBY_TTL_MS - 1).events == []
    out = race.tick(T0 + LOBBY_TTL_MS + 5)
    assert out.finished and race.finished_at == T0 + LOBBY_TTL_MS
    assert codes(lambda: race.join("bob", "u", T0)) == "race_started"


def test_no_seed_or_hidden_card_before_race_over() -> None:
    race = Race("r", "yukon", 123456789, "s4lt", Options(2, 60, True), T0, "host", 0)
    race.join("ann", "t", T0)
    race.start("host", T0)
    out = race.tick(T0)
    snap = messages.snapshot(race, None, None, T0)
    texts = [repr(snap), repr([messages.event(race, e) for e in out.events]),
             repr(messages.state(race, "p1")), repr(messages.summary(race))]
    for text in texts:
        assert "123456789" not in text and "s4lt" not in text
    # Every card a face-down position holds is null, all 21 of them, and nothing else is.
    full = race.racers["p1"].game.board(reveal=True)["piles"]
    shown = snap["players"][0]["board"]["piles"]
    hidden = [(p["pile"], i) for p, q in zip(full, shown, strict=True)
              for i, c in enumerate(q["cards"]) if c is None]
    assert len(hidden) == 21
    for pile, seen in zip(full, shown, strict=True):
        assert [c for c in seen["cards"] if c] == pile["cards"][len(pile["cards"]) - len(
            [c for c in seen["cards"] if c]):]


def test_replay_rebuilds_the_same_race() -> None:
    race = running(2)
    log: list[LogEntry] = []
    fresh = new_race()
    for racer in race.racers.values():
        data = {"name": racer.name, "token": racer.token}
        log.append(LogEntry("r1", T0, "join", racer.player, data))
    log.append(LogEntry("r1", T0, "start"))
    for i in range(5):
        out = race.move("p1", first_legal(race, "p1"), i + 1, T0 + 2000 + i)
        log += out.log
    log += race.undo("p1", 6, T0 + 3000).log
    log += race.resign("p2", T0 + 4000).log
    for entry in log:
        fresh.replay(entry)
    assert messages.snapshot(fresh, "p1", fresh.racers["p1"], 0) == messages.snapshot(
        race, "p1", race.racers["p1"], 0)
    assert messages.state(fresh, "p1") == messages.state(race, "p1")
    assert fresh.racers["p1"].times == race.racers["p1"].times


def test_a_lobby_nobody_joins_closes_after_ten_minutes() -> None:
    from solrace.settings import EMPTY_LOBBY_TTL_MS

    empty = new_race()
    assert empty.next_deadline() == T0 + EMPTY_LOBBY_TTL_MS
    assert empty.tick(T0 + EMPTY_LOBBY_TTL_MS).finished
    joined = new_race()
    joined.join("ann", "t", T0 + 5)
    assert joined.next_deadline() == T0 + LOBBY_TTL_MS  # someone is there: the hour holds


def test_a_racers_actions_are_capped() -> None:
    from solrace.settings import MAX_ACTIONS

    race = running(1)
    move = first_legal(race, "p1")
    for seq in range(1, MAX_ACTIONS + 1):
        if seq % 2:
            race.move("p1", move, seq, T0)
        else:
            race.undo("p1", seq, T0)
    assert race.racers["p1"].seq == MAX_ACTIONS
    assert codes(lambda: race.move("p1", move, MAX_ACTIONS + 1, T0)) == "limit_reached"
    # A repeated seq is still answered (nothing is applied).
    assert race.move("p1", move, MAX_ACTIONS, T0).log == []


def home_move(race: Race, player: str) -> str | None:
    return next((m.text() for m in race.racers[player].game.legal_moves()
                 if ">f" in m.text()), None)


def test_a_resign_is_a_loss_and_a_race_of_two_ends_at_once() -> None:
    race = Race("r1", "scotch", seed_with_home_move(), "salt", Options(2, 60, True), T0,
                "host", 1000)
    race.join("ann", "t1", T0)
    race.join("bob", "t2", T0)
    race.start("host", T0)
    race.tick(T0 + 1000)
    home = home_move(race, "p1")
    assert home is not None
    race.move("p1", home, 1, T0 + 1500)  # ann is ahead on cards...
    out = race.resign("p1", T0 + 2000)  # ... and resigns: bob wins, the race is over
    assert out.finished and race.reason == "resigned"
    table = out.events[-1].fields["standings"]
    assert [(s["player"], s["place"], s["resigned"]) for s in table] == [
        ("p2", 1, False), ("p1", 2, True)]
    assert race.places() == {"p1": 2, "p2": 1}


def test_resigners_come_after_everyone_else_and_share_places_among_themselves() -> None:
    race = running(4)
    home = home_move(race, "p1")
    if home is not None:
        race.move("p1", home, 1, T0 + 1500)
    assert not race.resign("p1", T0 + 2000).finished  # two still racing: it goes on
    assert not race.resign("p3", T0 + 3000).finished
    out = race.resign("p4", T0 + 3000)  # one left racing: he has won
    assert out.finished and race.reason == "resigned"
    places = race.places()
    assert places["p2"] == 1  # no card home, but he did not resign
    # p3 and p4 resigned with nothing home, both reaching 0 at the start: a shared place.
    assert places["p3"] == places["p4"]
    if home is not None:  # p1 resigned with a card home: ahead of the other resigners
        assert places["p1"] == 2 and places["p3"] == 3
    else:
        assert places["p1"] == places["p3"] == 2


def test_hints_cost_a_card_to_a_racer_who_does_not_finish() -> None:
    race = Race("r1", "scotch", seed_with_home_move(), "salt",
                Options(2, 60, True, hints=True), T0, "host", 1000)
    race.join("ann", "t1", T0)
    race.join("bob", "t2", T0)
    race.start("host", T0)
    race.tick(T0 + 1000)
    for player, at in (("p1", T0 + 1500), ("p2", T0 + 2500)):
        home = home_move(race, player)
        assert home is not None
        race.move(player, home, 1, at)
    assert race.places() == {"p1": 1, "p2": 2}  # one card each: ann reached it first
    race.hint("p1", T0 + 3000)  # a hint: a card less for a racer who does not finish
    assert race.places() == {"p1": 2, "p2": 1}
    out = race.tick(T0 + 61_000)  # the time runs out: the standings say it
    table = out.events[-1].fields["standings"]
    assert [(s["player"], s["hints"]) for s in table] == [("p2", 0), ("p1", 1)]


def test_a_racer_with_fewer_than_three_moves_is_aborted() -> None:
    race = running(2)
    for seq in (1, 2):
        race.move("p1", first_legal(race, "p1"), seq, T0 + 1000 + seq)
    race.move("p2", first_legal(race, "p2"), 1, T0 + 1500)
    race.undo("p2", 2, T0 + 1600)  # an undo is no move
    race.move("p2", first_legal(race, "p2"), 3, T0 + 1700)
    race.move("p1", first_legal(race, "p1"), 3, T0 + 1900)  # ann: three moves
    out = race.tick(T0 + 61_000)
    table = {s["player"]: s for s in out.events[-1].fields["standings"]}
    assert race.racers["p1"].moves == 3 and not race.racers["p1"].aborted
    assert race.racers["p2"].moves == 2 and race.racers["p2"].aborted  # bob: two
    assert "aborted" not in table["p1"] and table["p2"]["aborted"] is True


def test_hints_cost_time_in_the_standings() -> None:
    race = Race("r1", "scotch", 7, "salt", Options(2, 600, True, hints=True), T0, "host", 1000)
    race.join("ann", "t1", T0)
    race.join("bob", "t2", T0)
    race.start("host", T0)
    race.tick(T0 + 1000)
    race.hint("p1", T0 + 1500)  # ann asks for one hint: 30 s
    assert race.racers["p1"].penalty_ms == HINT_PENALTY_MS
    for p in ("p1", "p2"):
        race.racers[p].game = FakeWinningGame(race.racers[p].game)  # type: ignore[assignment]
    first = race.move("p1", first_legal(race, "p1"), 1, T0 + 11_000)  # 10 s + 30 s
    fin = next(e.fields for e in first.events if e.kind == "finished")
    assert fin["place"] == 1 and fin["penalty_ms"] == HINT_PENALTY_MS
    second = race.move("p2", first_legal(race, "p2"), 1, T0 + 21_000)  # 20 s, no hint
    fin = next(e.fields for e in second.events if e.kind == "finished")
    assert fin["place"] == 1 and fin["places"] == {"p1": 2, "p2": 1}
    table = second.events[-1].fields["standings"]
    assert [(s["player"], s["place"], s["penalty_ms"]) for s in table] == [
        ("p2", 1, 0), ("p1", 2, HINT_PENALTY_MS)]


def test_a_race_ends_when_its_humans_are_done_even_if_bots_still_play() -> None:
    race = new_race(players=3)
    race.join("ann", "t1", T0)
    race.join("bot1", "t2", T0, bot=True)
    race.join("bot2", "t3", T0, bot=True)
    race.start("host", T0)
    race.tick(T0 + 1000)
    race.move("p2", first_legal(race, "p2"), 1, T0 + 1500)
    out = race.resign("p1", T0 + 2000)
    assert out.finished and race.reason == "humans_done"
    # The bots stop where they stand: not resigned, not finished, ranked by their cards.
    assert not any(r.done for p, r in race.racers.items() if p != "p1")
    assert codes(lambda: race.move("p2", first_legal(race, "p2"), 2, T0 + 2500)) == \
        "race_not_running"
    only_bots = new_race(players=3)
    for i in (1, 2, 3):
        only_bots.join(f"b{i}", f"t{i}", T0, bot=True)
    only_bots.start("host", T0)
    only_bots.tick(T0 + 1000)
    assert not only_bots.resign("p1", T0 + 2000).finished  # no human: bots race on


def test_a_racer_claims_the_race_once_the_others_were_offline_for_a_minute() -> None:
    race = running(3, time_limit=600)
    ann, bob, cid = (race.racers[p] for p in ("p1", "p2", "p3"))
    ann.connections = 1
    bob.connections, bob.offline_since = 0, T0 + 2000
    cid.connections, cid.offline_since = 1, None
    assert codes(lambda: race.claim("p1", T0 + 70_000)) == "forbidden"  # cid is online
    cid.connections, cid.offline_since = 0, T0 + 30_000
    assert codes(lambda: race.claim("p1", T0 + 70_000)) == "forbidden"  # only 40 s
    out = race.claim("p1", T0 + 30_000 + CLAIM_AFTER_MS)
    assert out.finished and race.reason == "claimed"
    assert [e.kind for e in out.log] == ["claim"]
    again = Race("r1", "scotch", 7, "salt", Options(3, 600, True), T0, "host", 1000)
    for entry in [LogEntry("r1", T0, "join", f"p{i}", {"name": f"racer{i}", "token": f"t{i}"})
                  for i in range(3)] + [LogEntry("r1", T0, "start"), *out.log]:
        again.replay(entry)
    assert again.status == "finished" and again.reason == "claimed"


def seated_race() -> tuple[Race, list[LogEntry]]:
    """A race of two seats, 15 s to take them; Ann took hers, Bob has not yet."""
    race = Race("rs", "scotch", 7, "salt", Options(2, 300), T0, "host", countdown_ms=0,
                seated_until=T0 + 15_000, forfeit=True)
    log: list[LogEntry] = []
    for name in ("Ann", "Bob"):
        log += race.join(name, f"tok-{name}", T0).log
    log += race.ready("p1", T0 + 1_000).log
    return race, log


def rebuilt(log: list[LogEntry]) -> Race:
    from solrace.store.records import race_from_record, race_record, replay

    race, _ = seated_race()
    return replay(race_from_record("rs", race_record(race)), log, None)


def test_seats_closed_by_the_clock_are_logged_and_replay_as_they_were() -> None:
    race, log = seated_race()
    out = race.tick(T0 + 15_000)
    assert [e.kind for e in out.log] == ["seated"] and out.log[0].at == T0 + 15_000
    # Bob forfeits, and with him gone the race of two is Ann's.
    assert race.status == "finished" and race.racers["p2"].resigned
    log += out.log
    again = rebuilt(log)
    assert again.status == "finished" and again.racers["p2"].resigned
    # Its seats were closed where everyone saw it: no second grace for Bob.
    assert again.reseat(T0 + 40_000, T0 + 25_000).log == []


def test_a_race_nobody_ran_past_its_grace_gives_the_absent_seats_a_new_one() -> None:
    """The process that ran it died before the seats closed; the one that takes it over 20 s
    later gives Bob 15 s from then instead of resigning him on the spot."""
    _, log = seated_race()
    taken = rebuilt(log)  # nothing logged after Ann's seat: nobody was told it closed
    now = T0 + 20_000
    out = taken.reseat(now + 15_000, now)
    out.extend(taken.tick(now))
    assert taken.status == "lobby" and taken.seated_until == now + 15_000
    assert [e.kind for e in out.log] == ["reseat"]
    log += out.log
    # Durable: a third process rebuilding it later sees the new grace, and it is kept.
    third = rebuilt(log)
    assert third.status == "lobby" and third.seated_until == now + 15_000
    assert third.reseat(now + 14_000, now).log == []  # a shorter grace never shortens it
    log += third.ready("p2", now + 5_000).log  # Bob takes his seat in time: the race is on
    assert third.status != "lobby" and not third.racers["p2"].resigned
    assert rebuilt(log).status == third.status
    # Once every seat is taken there is nothing to give.
    assert third.reseat(now + 60_000, now + 6_000).log == []
