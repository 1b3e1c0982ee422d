"""The Scotch engine of the solver: its loss proofs (the Kings, the stuck cards) and its move
pruning, against the plain search of ``oracle.py`` and the catalogue.

Hand-made positions have six cards out: the black-Ace foundations (f1, f2) hold Ace to 10 and
want a black Jack, then a red Queen, then a black King; the red-Ace ones (f3, f4) are complete
(a King never comes back). So JC, JS, QH, QD, KC, KS are out, nothing can be given back but a
10 onto a Jack, and the plain search decides every such position in a few dozen positions.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import solrules
from solrules import Budget, solve, solver_scotch
from solrules.scotch_losses import cards_stuck, kings_order_impossible
from solrules.solver_scotch import ScotchEngine

from .helpers import agree_with_plain_search
from .oracle import model_of, move_of, plain_search, replays
from .test_solver import scotch_endgame, scotch_layout

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "seeds" / "catalogue" / "scotch.jsonl"

#: Foundations: f1 clubs/hearts and f2 spades/diamonds from a black Ace, to 10 (10H, 10D on
#: top); f3 and f4 from a red Ace, complete.
FOUNDATIONS = ("f1:AC2H3C4H5C6H7C8H9CTH f2:AS2D3S4D5S6D7S8D9STD "
               "f3:AH2C3H4C5H6C7H8C9HTCJHQCKH f4:AD2S3D4S5D6S7D8S9DTSJDQSKD")


def position(**fans: str) -> str:
    """Scotch position text: the foundations above and the given fans (``t1="KCKS"``)."""
    return "scotch " + FOUNDATIONS + " " + " ".join(
        f"t{i}:{fans.get(f't{i}', '')}" for i in range(1, 19))


#: (fans, some card stuck, winnable by the plain search). A red Queen goes home on a black
#: Jack or onto a black King; a black Jack only home (no red Queen is ever free to take it
#: here unless it moved first) or onto a red Queen.
HAND_MADE = [
    # QH lies over both black Jacks (its foundation predecessors) and both Kings it could go
    # onto, in one fan: it never moves.
    (dict(t1="KCKSJCJSQH", t2="QD"), True, False),
    # Near miss: one King on a fan of its own; QH goes onto it and uncovers the Jacks.
    (dict(t1="KCJCJSQH", t2="KS", t3="QD"), False, True),
    # Near miss: one black Jack elsewhere: it goes home, then QH, then the rest.
    (dict(t1="KCKSJCQH", t2="JS", t3="QD"), False, True),
    # A cycle across two fans: QH's places (JS home, KS) lie under QD, QD's (JC, KC) under QH.
    (dict(t1="KCJCQH", t2="KSJSQD"), True, False),
    # Near miss: KS on a fan of its own breaks the cycle.
    (dict(t1="KCJCQH", t2="JSQD", t3="KS"), False, True),
    # Near miss: the same cycle, but JS over QD: it goes home, QH follows.
    (dict(t1="KCJCQH", t2="KSQDJS"), False, True),
]


@pytest.mark.parametrize(("fans", "stuck", "winnable"), HAND_MADE)
def test_stuck_cards_hand_made(fans: dict[str, str], stuck: bool, winnable: bool) -> None:
    text = position(**fans)
    game = solrules.parse_position(text)
    engine = ScotchEngine(game)
    assert cards_stuck(engine.fans, engine.h, engine.ac) is stuck
    plain = plain_search(model_of(text), 5_000)
    assert plain.verdict == ("won" if winnable else "lost"), plain
    result = solve(game, Budget(nodes=20_000))
    assert result.verdict == plain.verdict
    if stuck:
        assert result.nodes == 1  # proved at the root, before any move
    if result.verdict == "won":
        assert replays(model_of(text), [move_of(t) for t in result.line])


def test_stuck_cards_never_fire_on_a_won_deal() -> None:
    """Every deal the catalogue records won: no loss proof fires at its root, nor at the
    positions of its winning line (a sample of lines here; all of them with ``-m slow``)."""
    won = [e for e in _catalogue() if e["verdict"] == "won"]
    assert len(won) > 1000
    for e in won:
        engine = ScotchEngine(solrules.new_game("scotch", int(e["seed"])))
        assert engine.moves(), e["seed"]
    for e in won[::70]:
        _never_stuck_along(e)


@pytest.mark.slow
def test_stuck_cards_never_fire_along_any_won_line() -> None:
    for e in _catalogue():
        if e["verdict"] == "won":
            _never_stuck_along(e)


def _never_stuck_along(entry: dict[str, object]) -> None:
    """Along a winning line, played on one engine built at the deal (as the search plays it),
    no loss proof fires (the Kings, the stuck cards, the Kings' order) and the engine has moves
    at every position but the last."""
    game = solrules.new_game("scotch", int(str(entry["seed"])))
    engine = ScotchEngine(game)
    move_of_text = {text: move for move, text in engine._text.items()}
    line = str(entry["line"]).split()
    for k, text in enumerate(line):
        assert not cards_stuck(engine.fans, engine.h, engine.ac), (entry["seed"], k)
        assert not kings_order_impossible(engine.fans, engine.h, engine.ac), (entry["seed"], k)
        assert not engine._kings or not engine._kings_deadlocked(), (entry["seed"], k)
        assert engine.moves(), (entry["seed"], k)
        engine.apply(move_of_text[text])
    assert engine.won()


def test_kings_rule_sees_a_king_gone_home() -> None:
    """Issue 20: a King that had gone home still counted as on its fan once a card lay where it
    had lain (with that card's colour), and the Kings rule then fired on winnable positions:
    here after move 54 of the catalogue's winning line of this deal, and 7 more positions of
    that line. (The search met it only when that set of Kings had not been looked at before:
    the rule keeps its answer per set of Kings.) An engine built at the deal, the line played
    on it, asked once."""
    entry = next(e for e in _catalogue() if e["seed"] == "15886087168202587479")
    line = str(entry["line"]).split()
    for k in range(50, 64):
        engine = ScotchEngine(solrules.new_game("scotch", int(str(entry["seed"]))))
        move_of_text = {text: move for move, text in engine._text.items()}
        for text in line[:k]:
            engine.apply(move_of_text[text])
        assert engine.moves(), k


def test_catalogue_losses_are_kings_or_stuck_at_the_root() -> None:
    """Every deal recorded lost is proved so at the root (one node)."""
    lost = [e for e in _catalogue() if e["verdict"] == "lost"]
    assert lost
    for e in lost[::10]:
        result = solve(solrules.new_game("scotch", int(e["seed"])), Budget(nodes=10))
        assert (result.verdict, result.nodes) == ("lost", 1), e["seed"]


def _catalogue() -> list[dict[str, object]]:
    with open(CATALOGUE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _end_positions(seed: int, count: int, fewest: int, most: int) -> list[solrules.Game]:
    rng = random.Random(seed)
    return [scotch_endgame(rng, rng.randrange(fewest, most + 1)) for _ in range(count)]


def test_end_positions_agree_with_the_plain_search() -> None:
    tally = agree_with_plain_search(_end_positions(2020, 40, 3, 9), 800)
    assert tally["won"] >= 5 and tally["lost"] >= 3, tally


@pytest.mark.slow
def test_end_positions_agree_with_the_plain_search_many() -> None:
    tally = agree_with_plain_search(_end_positions(4040, 400, 4, 12), 5_000)
    assert tally["won"] >= 50 and tally["lost"] >= 20, tally


#: Foundations for the Kings' order positions: f1 and f2 from a black Ace to a black Jack
#: (want a red Queen, then a black King), f3 complete from a red Ace, f4 from a red Ace to 10
#: (wants JD, then QS, then KD). Out: QH, QD, KC, KS, JD, QS, KD.
ORDER_FOUNDATIONS = ("f1:AC2H3C4H5C6H7C8H9CTHJC f2:AS2D3S4D5S6D7S8D9STDJS "
                     "f3:AH2C3H4C5H6C7H8C9HTCJHQCKH f4:AD2S3D4S5D6S7D8S9DTS")


def order_position(**fans: str) -> str:
    return "scotch " + ORDER_FOUNDATIONS + " " + " ".join(
        f"t{i}:{fans.get(f't{i}', '')}" for i in range(1, 19))


#: KS lies over QD, so KS completes a black foundation first and KC the other one last; JD
#: lies under KC, so f4 stays at 10 until then and QS, KD cannot go home. QS lies over QH,
#: which must be home when KC lands: QS must then lie on a King on a fan, and the only one
#: left, KD, lies under JD. (KC first fails too: QD would still be under KS when the second
#: black foundation is complete.)
ORDER_LOST = dict(t1="KDJDKC", t2="QHQS", t3="QDKS")
#: Near misses, each winnable: KD on a fan of its own (QS waits on it); QD over KS (KC may go
#: first, and JD, QS follow it home).
ORDER_NEAR = [dict(t1="JDKC", t2="QHQS", t3="QDKS", t4="KD"),
              dict(t1="KDJDKC", t2="QHQS", t3="KSQD")]


def test_kings_order_hand_made_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Kings' order proof decides ORDER_LOST at the root, where neither the Kings rule nor
    the stuck cards see it. The plain search of oracle.py does not decide it within 200,000
    positions (the foundations give cards back in long chains), so the loss is checked by the
    solver's own search with this proof switched off (its other proofs and pruning are checked
    against the plain search elsewhere)."""
    text = order_position(**ORDER_LOST)
    engine = ScotchEngine(solrules.parse_position(text))
    assert not cards_stuck(engine.fans, engine.h, engine.ac)
    assert not engine._kings_deadlocked()
    assert kings_order_impossible(engine.fans, engine.h, engine.ac)
    result = solve(solrules.parse_position(text), Budget(nodes=1_000))
    assert (result.verdict, result.nodes) == ("lost", 1)
    monkeypatch.setattr(solver_scotch, "kings_order_impossible", lambda *_: False)
    result = solve(solrules.parse_position(text), Budget(nodes=100_000))
    assert result.verdict == "lost" and result.nodes > 1


@pytest.mark.parametrize("fans", ORDER_NEAR)
def test_kings_order_hand_made_near_misses(fans: dict[str, str]) -> None:
    text = order_position(**fans)
    engine = ScotchEngine(solrules.parse_position(text))
    assert not kings_order_impossible(engine.fans, engine.h, engine.ac)
    plain = plain_search(model_of(text), 5_000)
    assert plain.verdict == "won", plain
    result = solve(solrules.parse_position(text), Budget(nodes=20_000))
    assert result.verdict == "won"
    assert replays(model_of(text), [move_of(t) for t in result.line])


def test_kings_order_contains_the_kings_rule() -> None:
    """On random end positions the Kings' order proof fires wherever the Kings rule does (it
    is the special case of a card that must be home before the King over it lands), and where
    it alone fires the plain search finds no win."""
    fired = 0
    for g in _end_positions(4040, 200, 4, 12):
        engine = ScotchEngine(g)
        order = kings_order_impossible(engine.fans, engine.h, engine.ac)
        if engine._kings and engine._kings_deadlocked():
            assert order, g.position()
            fired += 1
        elif order:
            assert plain_search(model_of(g.position()), 2_000).verdict != "won", g.position()
    assert fired >= 20


#: Benchmark deals (bench/solver_bench.py) that only the Kings' order proof decides.
ORDER_DEALS = [2566749579789755390, 12459614075184981014, 1210483421612547756, 9799073536577316001,
               15584168282584651508]


@pytest.mark.parametrize("seed", ORDER_DEALS)
def test_kings_order_decides_benchmark_deals_at_the_root(seed: int) -> None:
    engine = ScotchEngine(solrules.new_game("scotch", seed))
    assert not engine._kings_deadlocked()
    assert not cards_stuck(engine.fans, engine.h, engine.ac)
    result = solve(solrules.new_game("scotch", seed), Budget(nodes=10))
    assert (result.verdict, result.nodes) == ("lost", 1)


def test_kings_order_inside_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof also runs after foundation moves (once per state of the foundations where it
    passes): cutting the lost branches early, the search wins this benchmark deal in a few
    hundred nodes, which without it stays unknown (150,000 nodes in the benchmark)."""
    seed = 15267255661426081367
    result = solve(solrules.new_game("scotch", seed), Budget(nodes=5_000))
    assert result.verdict == "won"
    game = solrules.new_game("scotch", seed)
    for text in result.line:
        game.push_text(text)
    assert game.is_won()
    monkeypatch.setattr(solver_scotch, "kings_order_impossible", lambda *_: False)
    # With the search of the fourth part (since the fifth, the cuts on home moves win it in a
    # few hundred nodes without the proof too).
    _search_of_the_fourth_part(monkeypatch)
    assert solve(solrules.new_game("scotch", seed), Budget(nodes=5_000)).verdict == "unknown"


def _search_of_the_fourth_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Scotch search of issue 20's fourth part: every home move tried, 2s safe only once
    every foundation is started, the prover and two best-first searchers."""
    monkeypatch.setattr(ScotchEngine, "home_pays", False)
    monkeypatch.setattr(ScotchEngine, "safe_twos", False)
    monkeypatch.setattr(ScotchEngine, "depth_first_modes", ())
    monkeypatch.setattr(ScotchEngine, "best_first_scores", (("score_loose", 3), ("score_ahead", 1)))


#: A position the search of benchmark deal 3537296620999722002 meets on its plateau (21 cards
#: home, the rest rearranged on 8 fans), lost for want of room: when KC, the last black King,
#: lands, f3 is still at 4 cards (5D lies under KC), 7D lay over 8H (home by then) and needs an
#: 8 on a fan, and the only 8 out, 8S, lies under TS, which has no Jack to lie on.
PLATEAU = ("scotch f1:AC2H3C f2:AH2C3H4C5H6C7H8C9HTCJHQCKH f3:AD2S3D f4:AS2D t1: t2: t3: t4: "
           "t5:4H t6:JD5DKCQHJCTH t7: t8:8STS9D8H7D6H5C4D t9:6D5S4S t10: t11:6S7C t12: t13:QD "
           "t14: t15:KDQSJSTD9C8D7S t16: t17:9S3SKS t18:")


def test_kings_order_on_a_plateau_position() -> None:
    engine = ScotchEngine(solrules.parse_position(PLATEAU))
    assert not engine._kings_deadlocked()
    assert not cards_stuck(engine.fans, engine.h, engine.ac)
    assert kings_order_impossible(engine.fans, engine.h, engine.ac)
    result = solve(solrules.parse_position(PLATEAU), Budget(nodes=10))
    assert (result.verdict, result.nodes) == ("lost", 1)


@pytest.mark.slow
def test_kings_order_plateau_position_is_lost_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prover alone, with this proof switched off, exhausts the plateau position (54,365
    nodes when written)."""
    from solrules.solver import _engine, _search

    monkeypatch.setattr(solver_scotch, "kings_order_impossible", lambda *_: False)
    result = _search(_engine(solrules.parse_position(PLATEAU)), Budget(nodes=300_000), None,
                     None, best_first=False, probes=False)
    assert result.verdict == "lost"


def test_every_best_first_score_exists() -> None:
    engine = ScotchEngine(solrules.new_game("scotch", 12))
    for name, weight in ScotchEngine.best_first_scores:
        assert isinstance(getattr(engine, name)(), int) and weight >= 1


def test_two_best_first_scores_win_a_deal_the_first_did_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark deal 15476970870814115376 (issue 20, fourth part): the two best-first searchers
    win it in a few thousand nodes; with :meth:`ScotchEngine.score` alone (the search until
    then) it stayed unknown after 150,000 nodes (the winning line gives cards back from a
    foundation, and takes them home again, several times over)."""
    seed = 15476970870814115376
    result = solve(solrules.new_game("scotch", seed), Budget(nodes=20_000))
    assert result.verdict == "won"
    text = solrules.new_game("scotch", seed).position()
    assert replays(model_of(text), [move_of(t) for t in result.line])
    monkeypatch.setattr(ScotchEngine, "best_first_scores", (("score", 3),))
    monkeypatch.setattr(ScotchEngine, "alone_ratio", 3)
    assert solve(solrules.new_game("scotch", seed), Budget(nodes=20_000)).verdict == "unknown"


# -- issue 20, fifth part: safe 2s, home moves that must pay at once, a second prover -----------

def _low_end_positions(seed: int, count: int, most: int = 14) -> list[solrules.Game]:
    """Random positions with one foundation low or empty (its Ace, under other cards, holds up
    its pattern's cards), the others high: where 2s go home before every Ace is, and where
    most home moves are not safe."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        heights = [13, 13, 13, 13]
        low = rng.randrange(4)
        heights[low] = rng.choice([0, 1, 2, 4, 6, 8])
        for f in range(4):
            if f != low:
                heights[f] = rng.randint(max(heights[low], 8), 13)
        # At most ``most`` cards out, so that the searches below exhaust them.
        while 52 - sum(heights) > most:
            f = rng.choice([f for f in range(4) if f != low and heights[f] < 13] or [low])
            heights[f] += 1
        out.append(scotch_layout(rng, heights, (3, 5)))
    return out


def _prover_alone(game: solrules.Game, nodes: int) -> str:
    from solrules.solver import _engine, _search

    engine = _engine(game)
    engine.depth_first_modes = ()  # type: ignore[attr-defined]
    return _search(engine, Budget(nodes=nodes), None, None, best_first=False,
                   probes=False).verdict


def test_home_rules_keep_every_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """On random positions with a foundation low or empty, the prover alone with the fifth
    part's cuts (safe 2s, home moves that must pay at once) and without them give the same
    verdict wherever both decide (the search without them is checked against the plain search
    elsewhere; the plain search does not decide most of these within its budget)."""
    games = _low_end_positions(20265, 200)
    with_cuts = [_prover_alone(g, 50_000) for g in games]
    monkeypatch.setattr(ScotchEngine, "home_pays", False)
    monkeypatch.setattr(ScotchEngine, "safe_twos", False)
    without = [_prover_alone(g, 50_000) for g in games]
    decided = [(a, b) for a, b in zip(with_cuts, without, strict=True)
               if "unknown" not in (a, b)]
    assert all(a == b for a, b in decided), [
        (g.position(), a, b) for g, a, b in zip(games, with_cuts, without, strict=True)
        if "unknown" not in (a, b) and a != b]
    tally = {v: sum(1 for a, _ in decided if a == v) for v in ("won", "lost")}
    assert len(decided) >= 180 and tally["won"] >= 30 and tally["lost"] >= 30, tally


def test_home_rules_agree_with_the_plain_search() -> None:
    """The same kind of positions, fewer cards out, against the plain search of oracle.py."""
    tally = agree_with_plain_search(_low_end_positions(515, 30, most=10), 5_000)
    assert tally["won"] >= 3 and tally["lost"] >= 3, tally


#: f1 and f2 hold the black Aces, f3 is a complete red-Ace foundation and f4 is empty: AD lies
#: under KS. A red 2 (the black-Ace pattern's) goes home alone, as a safe move, though an Ace
#: is still out.
TWOS_POSITION = ("scotch f1:AC f2:AS f3:AH2C3H4C5H6C7H8C9HTCJHQCKH f4: "
                 "t1:ADKS t2:3C3S2D t3:2H t4:4D4H5C5S6D6H7C7S8D8H9C9STDTHJCJSQDQHKC "
                 "t5:KDQSJDTS9D8S7D6S5D4S3D2S " + " ".join(f"t{i}:" for i in range(6, 19)))


def test_a_2_goes_home_before_the_last_ace() -> None:
    """The move generator (this position is lost: the loss proofs, left out here, see it)."""
    engine = ScotchEngine(solrules.parse_position(TWOS_POSITION))
    moves = [engine.text(m) for m in engine._moves()]
    assert len(moves) == 1 and moves[0] in ("t2>f1", "t2>f2", "t3>f1", "t3>f2"), moves
    engine.safe_twos = engine.home_pays = False
    assert len(engine._moves()) > 1


#: Two lone Kings that could complete a foundation each: sending one home pays nothing (its fan
#: is empty for good, the foundation complete), so it waits until it is safe (every foundation
#: at 12 cards or more). JH, which f3 wants, lies under QC.
LONE_KING = ("scotch f1:AC2H3C4H5C6H7C8H9CTHJCQH f2:AS2D3S4D5S6D7S8D9STDJSQD "
             "f3:AH2C3H4C5H6C7H8C9HTC f4:AD2S3D4S5D6S7D8S9DTSJDQSKD t1:KC t2:KS t3:JHQC t4:KH "
             + " ".join(f"t{i}:" for i in range(5, 19)))


def test_a_lone_king_waits() -> None:
    engine = ScotchEngine(solrules.parse_position(LONE_KING))
    moves = [engine.text(m) for m in engine.moves()]
    # f1 and f2 are alike (both want a black King): the first takes either.
    assert "t1>f1" not in moves and "t2>f1" not in moves and "t3>t4" in moves, moves
    engine.home_pays = False
    moves = [engine.text(m) for m in engine.moves()]
    assert "t1>f1" in moves and "t2>f1" in moves, moves
    result = solve(solrules.parse_position(LONE_KING), Budget(nodes=100))
    assert result.verdict == "won"
    assert replays(model_of(LONE_KING), [move_of(t) for t in result.line])
    assert plain_search(model_of(LONE_KING), 5_000).verdict == "won"


def test_home_moves_that_pay_win_a_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark deal 9008752245769540986 (an Ace under a King: a whole black foundation must
    be built while a red one cannot start): the prover alone wins it in under 30,000 nodes with
    the fifth part's cuts, and not without them (87,658 nodes)."""
    game = solrules.new_game("scotch", 9008752245769540986)
    assert _prover_alone(game, 30_000) == "won"
    monkeypatch.setattr(ScotchEngine, "home_pays", False)
    monkeypatch.setattr(ScotchEngine, "safe_twos", False)
    assert _prover_alone(game, 30_000) == "unknown"


@pytest.mark.slow
def test_the_second_prover_keeps_a_deal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Benchmark deal 14270399781586851470: the prover with the home rule needs 310,674 nodes,
    the second depth-first searcher (without it) 13,098: the full search wins it within
    90,000 nodes (79,658 since issue 32, where two more best-first searchers leave it a sixth
    of the nodes: a quarter before, 60,000 here then), and without the second searcher it
    does not."""
    seed = 14270399781586851470
    result = solve(solrules.new_game("scotch", seed), Budget(nodes=90_000))
    assert result.verdict == "won"
    monkeypatch.setattr(ScotchEngine, "depth_first_modes", ())
    assert solve(solrules.new_game("scotch", seed), Budget(nodes=90_000)).verdict == "unknown"
