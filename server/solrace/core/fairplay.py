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
- ``tracking``: the share of his moves (as they stand at the end: undos removed) that were the
  next move of *a* solver's winning line from where he stood (:class:`Tracker`). His moves are
  walked along the solver's line from the deal; where one differs, the solver is asked for a
  new line from the position after his move, and the walk goes on along that one. A copied
  line that starts with another first move, or strays a few times on purpose, still tracks the
  solver almost move for move, where ``agreement`` (one line, from the deal) falls to nothing at
  its first difference. The re-solves are bounded (:data:`~solrace.settings.FAIRPLAY_RESOLVES`
  per result, each with a node and time budget, in the solver's fair queue:
  :mod:`solrace.service.fairplay`), and a move walked with no line known counts as no match, so
  ``tracking`` is a lower bound: what runs out (re-solves, time) can only make a result look
  *less* like an engine's — and a copy that strays on purpose more often than there are
  re-solves escapes it (measured in docs/performance.md). ``resolves``: the re-solves it
  took. Worked out only where it can decide something (:func:`worth_tracking`: a finisher at a
  median gap under :data:`ENGINE_GAP_MS`, or a scouted daily finisher, whose ``agreement`` did
  not decide already); None otherwise;
- ``line_ratio``: his moves over the solver's line's length (a person wanders; a copied line
  does not), his undos and hints;
- ``par_pace_ms`` (finishers): his time from the start to his last move over the length of the
  solver's line from the deal (``par_moves``) — the time he took per move a winning line
  needs — and ``deal_nodes``: the nodes the solver's search took to find that line, the deal's
  difficulty.
  Nodes, not seconds: a count the same on any machine, and what it measures is how many dead
  ends a search meets before a win (a deal whose line the solver finds in about as many nodes
  as it has moves is one where the obvious moves win; one that takes a hundred times more hides
  its win). It is the solver's difficulty, not a person's, which is one reason the two are
  **no rule**: a fast finish on a hard deal raises ``suspicion`` (the moderators' order), it
  flags nothing. The other: a rule needs a measured false-positive rate, and none can be
  measured here — the house bots, the stand-in for a person's pace, play at a fixed pace
  whatever the deal, so how a person's time grows with a deal's difficulty is known only from
  people's results, which this server has not collected yet (docs/performance.md);
- ``scouted`` (the daily deal): another player from his network opened an attempt at the same
  deal before he finished his, ended or not — a scout's pattern, but also a school's, so it
  flags nothing alone.

The **rules** that flag a result (:func:`flag_rules`), each of which a person playing the deal
himself does not meet:

- ``machine_speed``: at least :data:`MIN_MANUAL` manual moves, and half of them or more made
  within :data:`FAST_GAP_MS` of the action before, or a median gap under that;
- ``engine_line``: he finished, his moves follow the solver's line for at least
  :data:`AGREEMENT` of it, or at least that share of them tracks the solver's lines
  (``tracking``), at a median gap under :data:`ENGINE_GAP_MS` (quicker than the house's fastest
  bot plays its own line);
- ``scouted_line`` (the daily deal): scouted, finished, and either that speed or the solver's
  line: ``agreement``, ``tracking`` or ``positions`` at least :data:`AGREEMENT` (a scout's second
  account has the time to disguise the line; a person who found his own way passes through few
  of the solver's positions).

A flagged result is kept off ratings and tables until a moderator clears it
(:mod:`solrace.service.moderation`). The thresholds are measured in docs/performance.md
("Fair play"): how often human-paced play is flagged, how often an engine at machine speed is
missed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import solrules

from solrace.settings import (
    AGREEMENT,
    ENGINE_GAP_MS,
    FAST_GAP_MS,
    FAST_SHARE,
    HARD_NODES_PER_MOVE,
    MIN_MANUAL,
    PAR_PACE_MS,
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
    tracking: float | None = None  # share of his moves that were a solver's line's next one
    resolves: int = 0  # re-solves that took (at most FAIRPLAY_RESOLVES)
    par_moves: int | None = None  # the solver's line's length (finishers)
    par_pace_ms: int | None = None  # his time to his last move / par_moves
    deal_nodes: int | None = None  # the solver's nodes to find its line from the deal
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
            scouted: bool = False, daily: bool = False, nodes: int | None = None) -> Signals:
    """The signals of a racer who made ``actions`` at ``times`` (unix ms) in a race started at
    ``started_at`` on the deal (``game``, ``seed``); ``line``: the solver's winning line from
    the deal, if known, and ``nodes`` what its search took. The moves are replayed on the deal:
    a few ms for a long race. ``tracking`` is not worked out here (it needs the solver): see
    :func:`worth_tracking` and :func:`tracked`."""
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
    pace = deal_nodes = None
    if line and finished:
        follow = 0
        for mine, its in zip(final_moves(actions), line, strict=False):
            if mine != its:
                break
            follow += 1
        agreement = round(follow / len(line), 3)
        ratio = round(moves / len(line), 3)
        if times:
            pace = max(0, times[-1] - started_at) // len(line)
        deal_nodes = nodes
        if daily and scouted:  # the one rule that reads it (10-60 ms for a long race)
            positions = _positions_shared(game, seed, played, line)
    sig = Signals(
        moves=moves, manual=len(gaps),
        median_gap_ms=int(statistics.median(gaps)) if gaps else None,
        fast_share=round(fast / len(gaps), 3) if gaps else 0.0,
        longest_think_ms=max(gaps, default=0), undos=undos, hints=hints, finished=finished,
        agreement=agreement, line_ratio=ratio, positions=positions,
        par_moves=len(line) if line and finished else None,
        par_pace_ms=pace, deal_nodes=deal_nodes,
        scouted=scouted)
    return replace(sig, rules=tuple(flag_rules(sig, daily)))


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


def final_moves(actions: Sequence[str]) -> list[str]:
    """The moves as they stand at the end (an undo takes the move before it back)."""
    out: list[str] = []
    for text in actions:
        if text == "undo":
            if out:
                out.pop()
        else:
            out.append(text)
    return out


class Tracker:
    """Walks a racer's final moves against the solver's winning lines from where he stood, and
    counts his moves that were a line's next move (``tracking``: see the module docstring).

    Driven by its owner, who has the solver: :meth:`walk` goes on along the current line and
    returns the number of his moves after which a new line is wanted (he left the line with the
    last of them), or None when the walk is over; :meth:`give` is handed that position's line
    (None: not won within the budget, or not known in time), and the walk goes on. At most
    ``resolves`` lines are asked for; past that (or after :meth:`stop`), the moves left are
    walked with no line: no match."""

    def __init__(self, moves: Sequence[str], line: Sequence[str], resolves: int) -> None:
        self.moves = list(moves)
        self.line: Sequence[str] = line
        self.at = 0  # the line's next move
        self.walked = 0  # his moves walked
        self.matches = 0
        self.left = resolves
        self.resolves = 0  # lines asked for

    def walk(self) -> int | None:
        """Walk on to the next position that needs a line; None: the walk is over."""
        while self.walked < len(self.moves):
            move = self.moves[self.walked]
            self.walked += 1
            if self.at < len(self.line) and move == self.line[self.at]:
                self.matches += 1
                self.at += 1
                continue
            self.line, self.at = (), 0
            if self.left > 0 and self.walked < len(self.moves):
                self.left -= 1
                self.resolves += 1
                return self.walked
        return None

    def give(self, line: Sequence[str] | None) -> None:
        """The solver's line from the position :meth:`walk` asked for."""
        self.line, self.at = (line or ()), 0

    def stop(self) -> None:
        """Ask for no more lines (the time is up)."""
        self.left = 0

    @property
    def tracking(self) -> float:
        """His moves that were a line's next move, as a share of all his moves."""
        return round(self.matches / len(self.moves), 3) if self.moves else 0.0


def track(moves: Sequence[str], line: Sequence[str], resolves: int,
          solve_from: Callable[[list[str]], Sequence[str] | None]) -> Tracker:
    """A :class:`Tracker` walked to its end, ``solve_from(moves)`` giving the solver's line from
    the position after those moves (the benchmark's and the tests' way; the referee's waits for
    the solver in its queue)."""
    tracker = Tracker(moves, line, resolves)
    while (at := tracker.walk()) is not None:
        tracker.give(solve_from(tracker.moves[:at]))
    return tracker


def worth_tracking(sig: Signals, daily: bool = False) -> bool:
    """Is ``tracking`` worth the solver's time for this result: can it decide a rule? A
    finisher at a median gap under :data:`ENGINE_GAP_MS` (``engine_line``), or a scouted daily
    finisher (``scouted_line``) — and only if the line from the deal did not decide already.
    A result at a person's pace that is not scouted is flagged by no line, however close: its
    re-solves would cost the solver's time and tell no rule anything. Every flagged result is
    either quick or scouted, so the moderators see ``tracking`` on every result they are shown."""
    if not sig.finished or sig.agreement is None or sig.agreement >= AGREEMENT:
        return False
    quick = sig.median_gap_ms is not None and sig.median_gap_ms < ENGINE_GAP_MS
    return quick or (daily and sig.scouted)


def tracked(sig: Signals, tracker: Tracker, daily: bool = False) -> Signals:
    """``sig`` with its ``tracking`` (from a walked ``tracker``) and the rules again."""
    out = replace(sig, tracking=tracker.tracking, resolves=tracker.resolves)
    return replace(out, rules=tuple(flag_rules(out, daily)))


def flag_rules(sig: Signals, daily: bool = False) -> list[str]:
    """The rules of the module docstring that ``sig`` meets (none: not flagged)."""
    rules = []
    quick = sig.median_gap_ms is not None and sig.median_gap_ms < ENGINE_GAP_MS
    if sig.manual >= MIN_MANUAL and (
            sig.fast_share >= FAST_SHARE
            or (sig.median_gap_ms is not None and sig.median_gap_ms < FAST_GAP_MS)):
        rules.append("machine_speed")
    engine = max(sig.agreement or 0.0, sig.tracking or 0.0) >= AGREEMENT
    if sig.finished and engine and quick:
        rules.append("engine_line")
    copied = engine or (sig.positions is not None and sig.positions >= AGREEMENT)
    if daily and sig.scouted and sig.finished and (copied or quick):
        rules.append("scouted_line")
    return rules


def suspicion(sig: Signals) -> float:
    """How suspicious a result looks, for the moderators' list (most suspicious first): the
    share of fast moves, the share of the solver's lines followed (``agreement`` or
    ``tracking``, the larger), how much faster than a bot he played, the rules met, and a fast
    finish on a hard deal (:func:`hard_and_fast`)."""
    score = (sig.fast_share + max(sig.agreement or 0.0, sig.tracking or 0.0)
             + 2.0 * len(sig.rules) + hard_and_fast(sig))
    if sig.median_gap_ms is not None and sig.manual >= MIN_MANUAL:
        score += max(0.0, 1.0 - sig.median_gap_ms / ENGINE_GAP_MS)
    return round(score, 3)


def hard_and_fast(sig: Signals) -> float:
    """0 to 1: how fast he finished (his ``par_pace_ms`` under :data:`PAR_PACE_MS`: 0 at it,
    1 at no time) times how hard the deal is (the solver's ``deal_nodes`` per move of its line:
    0 at one node a move, 1 from :data:`HARD_NODES_PER_MOVE`, on a log scale — search effort
    grows by factors, not steps). 0 when either is not known."""
    if sig.par_pace_ms is None or not sig.deal_nodes or not sig.par_moves:
        return 0.0
    per_move = sig.deal_nodes / sig.par_moves
    hard = min(1.0, max(0.0, math.log(max(1.0, per_move)) / math.log(HARD_NODES_PER_MOVE)))
    fast = max(0.0, 1.0 - sig.par_pace_ms / PAR_PACE_MS)
    return round(hard * fast, 3)


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
