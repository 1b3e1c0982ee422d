"""Fair play: what a finished result says about how it was played, and when it must be looked at
by a person before it counts. Pure: the race, the solver's line and the facts the store knows
come in; nothing here awaits, reads a clock or draws anything.

A patience race has what chess has not: the deal is fixed, and the server's solver knows a
winning line for it. So besides the timing of the moves (a person needs time to see a move and
click it), a result can be held against the solver's own line: a racer who plays, move after
move, exactly the line the solver finds from the deal has almost certainly asked the solver
(the rules package is public: anyone can run it on a deal he has seen).

The **signals** of one racer's result (:class:`Signals`, kept with the result and shown to
moderators):

- the timing of his *manual* moves: every move but the ones a client may play by itself (the
  position's safe moves, ``solrules.safe_moves``, which the browser auto-plays) and the stock
  deals of Quadruple Canfield (a click that needs no thought); for each, the time since his
  previous action: the median, the share under :data:`FAST_GAP_MS` (faster than a person
  clicks), the longest think;
- ``agreement``: the longest run of his moves, from the deal, that follows the solver's own
  winning line from the deal, as a share of that line (finishers only; None when the line is not
  known);
- ``positions``: the share of the positions along the solver's line that his moves (as they
  stand at the end) pass through, in any order and up to which foundation or fan a card went
  to (scouted finishers of the daily deal only): a copied line stays a copied line when two
  independent moves are swapped or an ace goes to another foundation, which ``agreement``
  stops at;
- ``line_ratio``: his moves over the solver's line's length (a person wanders; a copied line
  does not), his undos and hints;
- ``scouted`` (the daily deal): another player from his network opened an attempt at the same
  deal before he finished his, ended or not — a scout's pattern, but also a school's, so it
  flags nothing alone.

The **rules** that flag a result (:func:`flag_rules`), each of which a person playing the deal
himself does not meet:

- ``machine_speed``: at least :data:`MIN_MANUAL` manual moves, and half of them or more made
  within :data:`FAST_GAP_MS` of the action before, or a median gap under that;
- ``engine_line``: he finished, his moves follow the solver's line for at least
  :data:`AGREEMENT` of it, at a median gap under :data:`ENGINE_GAP_MS` (quicker than the house's
  fastest bot plays its own line);
- ``scouted_line`` (the daily deal): scouted, finished, and either that speed or the solver's
  line: ``agreement`` or ``positions`` at least :data:`AGREEMENT` (a scout's second account
  has the time to disguise the line; a person who found his own way passes through few of
  the solver's positions).

A flagged result is kept off ratings and tables until a moderator clears it
(:mod:`solrace.service.moderation`). The thresholds are measured in docs/performance.md
("Fair play"): how often human-paced play is flagged, how often an engine at machine speed is
missed.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import solrules

from solrace.settings import (
    AGREEMENT,
    ENGINE_GAP_MS,
    FAST_GAP_MS,
    FAST_SHARE,
    MIN_MANUAL,
    PAUSE_AFTER_WALKOUTS,
    PAUSE_MAX_MS,
    PAUSE_MS,
    WALKOUT_WINDOW_MS,
)


@dataclass(frozen=True, slots=True)
class Signals:
    """One result's fair-play signals (see the module docstring). Times in ms."""

    moves: int  # moves made (undos not counted)
    manual: int  # of those, the ones no client plays by itself
    median_gap_ms: int | None  # over manual moves: the time since the action before
    fast_share: float  # manual moves within FAST_GAP_MS of the action before
    longest_think_ms: int
    undos: int
    hints: int
    finished: bool
    agreement: float | None = None  # share of the solver's line he followed from the deal
    line_ratio: float | None = None  # his moves / the solver's line's length
    positions: float | None = None  # share of the line's positions he passed through
    scouted: bool = False
    rules: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.rules)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["rules"] = list(self.rules)
        out["suspicion"] = suspicion(self)
        return out


def _mechanical(game: solrules.Game, text: str) -> bool:
    """Could a client have played this move by itself, or does it need no thought?"""
    return text.startswith("s") or text in solrules.safe_moves(game)


def signals(game: str, seed: int, actions: Sequence[str], times: Sequence[int], started_at: int,
            finished: bool, hints: int = 0, line: Sequence[str] | None = None,
            scouted: bool = False, daily: bool = False) -> Signals:
    """The signals of a racer who made ``actions`` at ``times`` (unix ms) in a race started at
    ``started_at`` on the deal (``game``, ``seed``); ``line``: the solver's winning line from
    the deal, if known. The moves are replayed on the deal: a few ms for a long race."""
    board = solrules.new_game(game, seed)
    gaps: list[int] = []
    before = started_at
    played: list[str] = []
    undos = 0
    for text, at in zip(actions, times, strict=False):
        gap = max(0, at - before)
        before = at
        if text == "undo":
            undos += 1
            if board.move_stack:
                board.pop()
                if played:
                    played.pop()
            continue
        if not _mechanical(board, text):
            gaps.append(gap)
        try:
            board.push_text(text)
        except ValueError:  # the log is the server's own: a move it accepted is legal
            break
        played.append(text)
    moves = len(actions) - undos
    fast = sum(1 for g in gaps if g < FAST_GAP_MS)
    agreement = ratio = positions = None
    if line and finished:
        follow = 0
        for mine, its in zip(_without_undos(actions), line, strict=False):
            if mine != its:
                break
            follow += 1
        agreement = round(follow / len(line), 3)
        ratio = round(moves / len(line), 3)
        if daily and scouted:  # the one rule that reads it (10-60 ms for a long race)
            positions = _positions_shared(game, seed, played, line)
    sig = Signals(
        moves=moves, manual=len(gaps),
        median_gap_ms=int(statistics.median(gaps)) if gaps else None,
        fast_share=round(fast / len(gaps), 3) if gaps else 0.0,
        longest_think_ms=max(gaps, default=0), undos=undos, hints=hints, finished=finished,
        agreement=agreement, line_ratio=ratio, positions=positions, scouted=scouted)
    return Signals(**{**asdict(sig), "rules": tuple(flag_rules(sig, daily))})


def _shape(board: solrules.Game) -> str:
    """The position up to the names of its piles: the foundations as a set, and the fans
    (tableau piles, which take the same cards whichever they are) as a set."""
    groups: dict[str, list[str]] = {}
    for part in board.position().split(" ")[1:]:
        pid, colon, cards = part.partition(":")
        kind = pid.rstrip("0123456789") if colon else part
        groups.setdefault(kind if kind in ("f", "t") else pid, []).append(cards)
    return " ".join(f"{k}:{','.join(sorted(v))}" for k, v in sorted(groups.items()))


def _positions_shared(game: str, seed: int, played: Sequence[str],
                      line: Sequence[str]) -> float:
    """The share of the positions after each move of ``line`` that ``played`` (legal moves
    from the deal) passes through (see :func:`_shape`)."""
    board = solrules.new_game(game, seed)
    his = set()
    for text in played:
        board.push_text(text)
        his.add(_shape(board))
    board = solrules.new_game(game, seed)
    shared = 0
    for text in line:
        try:
            board.push_text(text)
        except ValueError:  # not a line from this deal
            break
        shared += _shape(board) in his
    return round(shared / len(line), 3)


def _without_undos(actions: Sequence[str]) -> list[str]:
    """The moves as they stand at the end (an undo takes the move before it back)."""
    out: list[str] = []
    for text in actions:
        if text == "undo":
            if out:
                out.pop()
        else:
            out.append(text)
    return out


def flag_rules(sig: Signals, daily: bool = False) -> list[str]:
    """The rules of the module docstring that ``sig`` meets (none: not flagged)."""
    rules = []
    quick = sig.median_gap_ms is not None and sig.median_gap_ms < ENGINE_GAP_MS
    if sig.manual >= MIN_MANUAL and (
            sig.fast_share >= FAST_SHARE
            or (sig.median_gap_ms is not None and sig.median_gap_ms < FAST_GAP_MS)):
        rules.append("machine_speed")
    engine = sig.agreement is not None and sig.agreement >= AGREEMENT
    if sig.finished and engine and quick:
        rules.append("engine_line")
    copied = engine or (sig.positions is not None and sig.positions >= AGREEMENT)
    if daily and sig.scouted and sig.finished and (copied or quick):
        rules.append("scouted_line")
    return rules


def suspicion(sig: Signals) -> float:
    """How suspicious a result looks, for the moderators' list (most suspicious first): the
    share of fast moves, the share of the solver's line followed, how much faster than a bot
    he played, and the rules met."""
    score = sig.fast_share + (sig.agreement or 0.0) + 2.0 * len(sig.rules)
    if sig.median_gap_ms is not None and sig.manual >= MIN_MANUAL:
        score += max(0.0, 1.0 - sig.median_gap_ms / ENGINE_GAP_MS)
    return round(score, 3)


def suspicion_of(signals: Mapping[str, Any] | None) -> float:
    """The suspicion of a stored result's signals (:meth:`Signals.as_dict`), 0 if none."""
    return float((signals or {}).get("suspicion", 0.0))


def pause_until(walkouts: Sequence[int], now: int) -> int | None:
    """Until when a player's rated pairing is paused, given when he walked out of rated races
    (aborted them: fewer than three moves) — None if it is not. From the
    :data:`PAUSE_AFTER_WALKOUTS`-th walkout within :data:`WALKOUT_WINDOW_MS`, each one pauses
    him for :data:`PAUSE_MS`, doubled for every walkout beyond it (at most :data:`PAUSE_MAX_MS`),
    from the last one."""
    recent = sorted(t for t in walkouts if now - t < WALKOUT_WINDOW_MS)
    if len(recent) < PAUSE_AFTER_WALKOUTS:
        return None
    extra = len(recent) - PAUSE_AFTER_WALKOUTS
    until = recent[-1] + min(PAUSE_MAX_MS, PAUSE_MS * 2 ** min(extra, 20))
    return until if until > now else None
