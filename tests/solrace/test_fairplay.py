"""Fair play, pure: the signals of a result (timing of the manual moves, the solver's line
followed), the rules that flag it, the pause after walkouts, and the rules of rated play
(:mod:`solrace.core.scoring`) — no sockets, no store."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

import pytest
import solrules
from solrace.core import fairplay
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.scoring import scoring
from solrace.settings import (
    AGREEMENT,
    EARLY_RESIGN_MS,
    FAIRPLAY_RESOLVE_NODES,
    FAIRPLAY_RESOLVES,
    FAST_GAP_MS,
    HARD_NODES_PER_MOVE,
    MIN_MANUAL,
    PAR_PACE_MS,
    PAUSE_AFTER_WALKOUTS,
    PAUSE_MS,
    REPEAT_PAIR_RATED,
    WALKOUT_WINDOW_MS,
)

T0 = 1_000_000


@cache
def won_deal(game: str = "scotch") -> tuple[int, tuple[str, ...]]:
    """A deal the solver wins, and its line."""
    for seed in range(1, 200):
        result = solrules.solve(solrules.new_game(game, seed), solrules.Budget(nodes=100_000))
        if result.verdict == "won" and len(result.line) >= 30:
            return seed, tuple(result.line)
    raise AssertionError("no won deal")


def times(n: int, gap: int, start: int = T0) -> list[int]:
    return [start + gap * (i + 1) for i in range(n)]


@pytest.mark.parametrize("gap", [20, 60, 100])
def test_the_solvers_line_at_machine_speed_is_flagged(gap: int) -> None:
    seed, line = won_deal()
    sig = fairplay.signals("scotch", seed, line, times(len(line), gap), T0, True, line=line)
    assert sig.agreement == 1.0 and sig.line_ratio == 1.0 and sig.undos == 0
    assert sig.manual >= MIN_MANUAL and sig.median_gap_ms == gap
    assert sig.rules == ("machine_speed", "engine_line") and sig.flagged
    assert sig.as_dict()["suspicion"] > 4


def test_the_solvers_line_a_little_faster_than_a_bot_is_engine_play() -> None:
    seed, line = won_deal()
    sig = fairplay.signals("scotch", seed, line, times(len(line), 300), T0, True, line=line)
    assert sig.rules == ("engine_line",)


@pytest.mark.parametrize("gap", [600, 1200, 2500])  # the house bots' paces: not flagged
def test_the_solvers_line_at_a_human_pace_is_not_flagged(gap: int) -> None:
    seed, line = won_deal()
    sig = fairplay.signals("scotch", seed, line, times(len(line), gap), T0, True, line=line)
    assert sig.agreement == 1.0 and not sig.flagged


def test_auto_played_safe_moves_are_not_counted_as_manual() -> None:
    seed, line = won_deal()
    game = solrules.new_game("scotch", seed)
    at, stamps, safe = T0, [], 0
    for move in line:  # a person: 2 s a move, but a safe move right after the one before
        if move in solrules.safe_moves(game):
            at += 30
            safe += 1
        else:
            at += 2000
        stamps.append(at)
        game.push_text(move)
    assert safe > 0
    sig = fairplay.signals("scotch", seed, line, stamps, T0, True)
    assert sig.manual == len(line) - safe and sig.fast_share == 0.0
    assert sig.median_gap_ms == 2000 and not sig.flagged


def solve_from(seed: int, game: str = "scotch"
               ) -> Callable[[list[str]], tuple[str, ...] | None]:
    """The referee's re-solve, as the solver's process does it: the position after ``moves``,
    every card known, the fair-play budget."""
    def solve(moves: list[str]) -> tuple[str, ...] | None:
        board = solrules.new_game(game, seed)
        for move in moves:
            board.push_text(move)
        result = solrules.solve(board, solrules.Budget(nodes=FAIRPLAY_RESOLVE_NODES))
        return result.line if result.verdict == "won" else None
    return solve


def another_way(seed: int, line: tuple[str, ...], at: int = 0) -> list[str] | None:
    """The solver's line up to ``at``, then another move from which the deal is still won, then
    the solver's line from there (None if there is no such move)."""
    game = solrules.new_game("scotch", seed)
    for text in line[:at]:
        game.push_text(text)
    for move in game.legal_moves():
        if move.text() == line[at]:
            continue
        game.push(move)
        rest = solrules.solve(game, solrules.Budget(nodes=100_000))
        if rest.verdict == "won":
            return [*line[:at], move.text(), *rest.line]
        game.pop()
    return None


def judged(seed: int, line: tuple[str, ...], actions: list[str], gap: int,
           scouted: bool = False, daily: bool = False) -> fairplay.Signals:
    """The signals as the referee works them out: the line from the deal, then ``tracking``
    where it is worth the solver's time."""
    sig = fairplay.signals("scotch", seed, actions, times(len(actions), gap), T0, True,
                           line=line, scouted=scouted, daily=daily)
    if fairplay.worth_tracking(sig, daily):
        tracker = fairplay.track(fairplay.final_moves(actions), line, FAIRPLAY_RESOLVES,
                                 solve_from(seed))
        sig = fairplay.tracked(sig, tracker, daily)
    return sig


def test_the_solvers_line_from_another_first_move_is_engine_play() -> None:
    """The audit's case: another first move, then the solver's line from there, at 200 ms a
    move. The line from the deal is followed for none of it (``agreement`` 0, as before), but
    every move after the first is the next move of the solver's line from where he stood."""
    seed, line = won_deal()
    actions = another_way(seed, line)
    if actions is None:
        pytest.skip("no other winning first move")
    sig = judged(seed, line, actions, 200)
    assert sig.agreement == 0.0 and sig.resolves == 1
    assert sig.tracking == round((len(actions) - 1) / len(actions), 3)
    assert sig.rules == ("engine_line",)  # 200 ms: not machine speed, but the engine's lines
    assert sig.as_dict()["tracking"] == sig.tracking


def test_a_copied_line_with_a_few_deviations_is_engine_play() -> None:
    seed, line = won_deal()
    actions = list(line)
    strays = 0
    for at in (5, 15, 25, 35):  # a deviation every ten moves, each from the line he follows
        if at >= len(actions) - 1:
            break
        way = another_way(seed, tuple(actions), at)
        if way is not None:
            actions, strays = way, strays + 1
    assert strays >= 3
    sig = judged(seed, line, actions, 300)
    assert sig.agreement is not None and sig.agreement < AGREEMENT
    assert sig.resolves == strays and sig.tracking is not None and sig.tracking >= 0.9
    assert sig.rules == ("engine_line",)


@pytest.mark.parametrize("gap", [600, 1200])
def test_another_way_at_a_persons_pace_is_not_flagged(gap: int) -> None:
    """At the house bots' pace the solver's time is not spent (no rule could use it), and even
    worked out, ``tracking`` flags nothing at that pace."""
    seed, line = won_deal()
    actions = another_way(seed, line)
    if actions is None:
        pytest.skip("no other winning first move")
    sig = judged(seed, line, actions, gap)
    assert sig.tracking is None and sig.resolves == 0 and not sig.flagged
    tracker = fairplay.track(actions, line, FAIRPLAY_RESOLVES, solve_from(seed))
    assert not fairplay.tracked(sig, tracker).flagged


def test_a_scouted_daily_deal_played_from_another_first_move_is_flagged_at_any_pace() -> None:
    seed, line = won_deal()
    actions = another_way(seed, line)
    if actions is None:
        pytest.skip("no other winning first move")
    plain = judged(seed, line, actions, 800, daily=True)
    assert plain.tracking is None and not plain.flagged  # not scouted: no re-solve at 0.8 s
    scouted = judged(seed, line, actions, 800, scouted=True, daily=True)
    assert scouted.tracking is not None and scouted.tracking >= AGREEMENT
    assert scouted.rules == ("scouted_line",)


def test_the_tracker_asks_for_a_line_where_the_racer_leaves_one_and_no_more() -> None:
    asked: list[list[str]] = []

    def solve(moves: list[str]) -> tuple[str, ...] | None:
        asked.append(moves)
        return {3: ("c", "d", "e"), 5: None}.get(len(moves))

    tracker = fairplay.track(["a", "b", "x", "c", "d", "y", "z", "w"], ["a", "b", "c", "d"], 2,
                             solve)
    # a b: the deal's line; x leaves it (a line from after x: c d e); c d follow it; y leaves
    # it (no line from there); z: no line, and no re-solve left; w: the last move.
    assert asked == [["a", "b", "x"], ["a", "b", "x", "c", "d", "y"]]
    assert tracker.matches == 4 and tracker.resolves == 2 and tracker.tracking == 0.5


def test_a_racer_who_leaves_every_line_tracks_little_and_costs_a_bounded_number_of_solves(
        ) -> None:
    moves = [f"m{i}" for i in range(100)]
    asked: list[list[str]] = []

    def solve(ms: list[str]) -> tuple[str, ...]:
        asked.append(ms)
        return ("nope",)

    tracker = fairplay.track(moves, ["other"], FAIRPLAY_RESOLVES, solve)
    assert len(asked) == tracker.resolves == FAIRPLAY_RESOLVES and tracker.tracking == 0.0


def test_a_fast_finish_on_a_hard_deal_is_more_suspicious() -> None:
    """``par_pace_ms`` and ``deal_nodes``: no rule, but the moderators' order."""
    seed, line = won_deal()
    stamps = times(len(line), 300)
    easy = fairplay.signals("scotch", seed, line, stamps, T0, True, line=line,
                            nodes=len(line))
    hard = fairplay.signals("scotch", seed, line, stamps, T0, True, line=line,
                            nodes=len(line) * HARD_NODES_PER_MOVE)
    assert easy.par_pace_ms == hard.par_pace_ms == 300 and easy.par_moves == len(line)
    assert hard.deal_nodes == len(line) * HARD_NODES_PER_MOVE
    assert easy.rules == hard.rules  # no rule reads them
    assert fairplay.hard_and_fast(easy) == 0.0
    assert fairplay.hard_and_fast(hard) == round(1 - 300 / PAR_PACE_MS, 3)
    assert hard.as_dict()["suspicion"] > easy.as_dict()["suspicion"]
    slow = fairplay.signals("scotch", seed, line, times(len(line), PAR_PACE_MS), T0, True,
                            line=line, nodes=len(line) * HARD_NODES_PER_MOVE)
    assert fairplay.hard_and_fast(slow) == 0.0


def test_a_move_taken_back_does_not_hide_the_line() -> None:
    seed, line = won_deal()
    game = solrules.new_game("scotch", seed)
    other = next(m.text() for m in game.legal_moves() if m.text() != line[0])
    actions = [other, "undo", *line]  # a decoy taken back, then the line
    sig = fairplay.signals("scotch", seed, actions, times(len(actions), 100), T0, True,
                           line=line)
    assert sig.agreement == 1.0 and sig.undos == 1 and "engine_line" in sig.rules


def test_a_few_fast_moves_are_no_machine() -> None:
    seed, line = won_deal()
    stamps = times(len(line), 1500)
    for i in range(0, 12, 2):  # six quick double clicks among dozens of slow moves
        stamps[i + 1] = stamps[i] + FAST_GAP_MS // 3
    stamps.sort()
    sig = fairplay.signals("scotch", seed, line, stamps, T0, True)
    assert 0 < sig.fast_share < 0.5 and not sig.flagged


def disguised(game: str, seed: int, line: Sequence[str]) -> list[str]:
    """The solver's line as a scout with time on his hands disguises it: the cards of the first
    two foundations go each to the other one, and the first two moves that may be played in
    either order are swapped (None if this line has no such moves)."""
    swap = {"f1": "f2", "f2": "f1"}
    moves = [re.sub(r"\bf[12]\b", lambda m: swap[m.group(0)], move) for move in line]
    board = solrules.new_game(game, seed)
    for i in range(len(moves) - 1):
        twin = board.copy()
        try:
            twin.push_text(moves[i + 1])
            twin.push_text(moves[i])
        except ValueError:
            board.push_text(moves[i])  # an illegal disguise fails the test here
            continue
        moves[i], moves[i + 1] = moves[i + 1], moves[i]
        return moves
    raise AssertionError("no two moves of the line commute")


@pytest.mark.parametrize("game", ["scotch", "yukon"])
def test_a_disguised_line_is_still_the_solvers_line(game: str) -> None:
    """Two independent moves swapped and the aces sent to other foundations: ``agreement``
    (the line's moves in its order) stops at the swap, ``positions`` does not; a scouted
    daily result is flagged for it at a person's pace, an unscouted one is not."""
    seed, line = won_deal(game)
    actions = disguised(game, seed, line)
    stamps = times(len(actions), 800)
    plain = fairplay.signals(game, seed, actions, stamps, T0, True, line=line, daily=True)
    assert plain.agreement is not None and plain.agreement < 0.2 and not plain.flagged
    scouted = fairplay.signals(game, seed, actions, stamps, T0, True, line=line,
                               scouted=True, daily=True)
    assert scouted.positions is not None and scouted.positions >= 0.9
    assert scouted.rules == ("scouted_line",)


def test_a_scouted_daily_deal_is_flagged_at_a_human_pace_when_it_follows_the_line() -> None:
    seed, line = won_deal()
    stamps = times(len(line), 800)
    plain = fairplay.signals("scotch", seed, line, stamps, T0, True, line=line, daily=True)
    assert not plain.flagged  # the solver's line at 0.8 s a move, no scout: not enough alone
    scouted = fairplay.signals("scotch", seed, line, stamps, T0, True, line=line,
                               scouted=True, daily=True)
    assert scouted.rules == ("scouted_line",)
    wandering = fairplay.signals("scotch", seed, line, times(len(line), 3000), T0, True,
                                 line=None, scouted=True, daily=True)
    assert not wandering.flagged  # a school's second pupil, playing it himself


def test_the_pause_grows_with_walkouts_and_ends() -> None:
    now = T0 + WALKOUT_WINDOW_MS
    few = [now - 60_000 * i for i in range(1, PAUSE_AFTER_WALKOUTS)]
    assert fairplay.pause_until(few, now) is None
    enough = [now - 1000, *few]
    assert fairplay.pause_until(enough, now) == now - 1000 + PAUSE_MS
    more = [now - 500, *enough]
    assert fairplay.pause_until(more, now) == now - 500 + 2 * PAUSE_MS
    assert fairplay.pause_until(more, now + 2 * PAUSE_MS) is None  # served
    old = [t - WALKOUT_WINDOW_MS for t in more]
    assert fairplay.pause_until(old, now) is None  # outside the window


# ---------------------------------------------------------------- the rules of rated play
def two(kind: str | None = "quick", nets: tuple[str, str] = ("n1", "n2"),
        accounts: tuple[bool, bool] = (True, True), moves: tuple[int, int] = (3, 3),
        bot_level: int | None = None, resign_after: int = 0) -> Race:
    """A finished rated race of two (the second a house bot with ``bot_level``): each makes
    ``moves``, then the second resigns (the first if the second is a bot), ``resign_after`` ms
    after the last move."""
    race = Race("r1", "scotch", won_deal()[0], "salt",
                Options(players=2, rated=True, kind=kind), T0, "host", 1000)
    race.join("Ann", "t1", T0, pid="pa", net=nets[0], account=accounts[0])
    if bot_level is None:
        race.join("Bob", "t2", T0, pid="pb", net=nets[1], account=accounts[1])
    else:
        race.join("Ace bot", "t2", T0, bot=True, level=bot_level)
    race.start("host", T0)
    race.tick(T0 + 1000)
    at = T0 + 2000
    for player, n in zip(("p1", "p2"), moves, strict=True):
        for _ in range(n):
            racer = race.racers[player]
            race.move(player, racer.game.legal_moves()[0].text(), racer.seq + 1, at)
            at += 1000
    race.resign("p1" if bot_level is not None else "p2", at + resign_after)
    assert race.status == "finished"
    return race


def test_a_rated_race_between_two_accounts_is_rated() -> None:
    s = scoring(two())
    assert s.rated and s.casual is None and not s.held
    assert [k for k, _ in s.counted] == ["pa", "pb"]
    assert [r.casual for r in s.results] == [None, None]


def test_a_guest_is_casual_and_so_is_his_opponent() -> None:
    s = scoring(two(accounts=(True, False)))
    assert not s.rated and s.casual == "too_few"
    assert {r.player: r.casual for r in s.results} == {"pa": "too_few", "pb": "guest"}


def test_two_accounts_of_one_network_are_casual() -> None:
    s = scoring(two(nets=("same", "same")))
    assert not s.rated and s.casual == "same_network"


def test_the_same_two_again_and_again_are_casual() -> None:
    assert scoring(two(), together=lambda a, b: REPEAT_PAIR_RATED - 1).rated
    s = scoring(two(), together=lambda a, b: REPEAT_PAIR_RATED)
    assert not s.rated and s.casual == "repeat_pair"


def test_an_aborted_opponent_rates_nobody_and_only_the_one_who_left_walked_out() -> None:
    s = scoring(two(moves=(3, 1)))  # Bob resigns after one move
    assert not s.rated and s.casual == "too_few"
    ann, bob = s.results
    assert bob.aborted and bob.walkout and bob.casual == "aborted"
    assert not ann.aborted and not ann.walkout


def test_a_custom_race_is_rated_only_among_accounts_of_their_own_networks() -> None:
    assert scoring(two(kind=None)).rated
    assert scoring(two(kind=None, accounts=(True, False))).casual == "not_all_accounts"
    assert scoring(two(kind=None, nets=("n1", ""))).casual == "not_all_accounts"
    assert scoring(two(kind=None, nets=("n1", "n1"))).casual == "same_network"


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_resigning_against_a_house_bot_is_a_loss(level: int) -> None:
    s = scoring(two(kind="bot", bot_level=level, moves=(3, 0)))
    assert s.rated and s.places == {"p1": 2, "p2": 1}
    from solrace.core.scoring import new_ratings

    assert new_ratings(s, {})["pa"].mu < 1500


@pytest.mark.parametrize("level", [1, 5])
def test_resigning_at_once_against_a_bot_rates_nothing(level: int) -> None:
    s = scoring(two(kind="bot", bot_level=level, moves=(0, 0)))
    assert not s.rated and s.casual == "too_few"
    [ann] = s.results
    assert ann.aborted and ann.walkout


def test_a_flagged_result_holds_the_race() -> None:
    seed, line = won_deal()
    race = two()
    sig = fairplay.signals("scotch", seed, line, times(len(line), 20), T0, True, line=line)
    s = scoring(race, {"p1": sig})
    assert s.rated and s.held and s.body([]) == {"rated": False, "game": "scotch",
                                                 "changes": [], "held": True}
    assert [r.flagged for r in s.results] == [True, False]
    assert [r.held for r in s.results] == [True, True]


# ---------------------------------------------------------------- closed accounts
def test_a_closed_account_makes_any_rated_race_casual() -> None:
    for kind in ("quick", None):  # a quick race he was paired in before, a custom race
        s = scoring(two(kind=kind), closed={"pb"})
        assert not s.rated and s.casual == "closed" and s.counted == []
        assert {r.player: r.casual for r in s.results} == {"pa": "closed", "pb": "closed"}
        assert s.body([]) == {"rated": False, "game": "scotch", "changes": [],
                              "casual": "closed"}
    s = scoring(two(kind="bot", bot_level=3, moves=(3, 0)), closed={"pa"})
    assert not s.rated and s.casual == "closed"
    assert scoring(two(), closed={"someone else"}).rated


# ---------------------------------------------------------------- early resigns
def test_an_early_resign_is_a_walkout_and_still_a_loss() -> None:
    s = scoring(two())  # Bob resigns after three moves, seconds after the start
    assert s.rated and s.places == {"p1": 1, "p2": 2}
    ann, bob = s.results
    assert bob.walkout and not bob.aborted and not ann.walkout
    late = scoring(two(resign_after=EARLY_RESIGN_MS))
    assert late.rated and [r.walkout for r in late.results] == [False, False]
    casual = scoring(two(kind=None, resign_after=0, nets=("n1", "n1")))  # meant to be rated
    assert casual.casual == "same_network" and casual.results[1].walkout
    guest = scoring(two(accounts=(True, False)))  # a guest pauses nothing
    assert not guest.results[1].walkout
