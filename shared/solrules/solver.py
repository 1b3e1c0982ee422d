"""An exact solver for the launch games, and the foundation moves that are safe to auto-play.

>>> import solrules
>>> game = solrules.new_game("scotch", 12)
>>> result = solrules.solve(game, solrules.Budget(nodes=20_000))
>>> result.verdict, len(result.line)
('won', 71)
>>> for text in result.line:
...     _ = game.push_text(text)
>>> game.is_won()
True

:func:`solve` searches from any position of any game, with a transposition table of every
position it has met, and returns a :class:`SolveResult`:

- ``"won"``: :attr:`SolveResult.line` is a list of move texts that :meth:`Game.push_text`
  accepts in order from the given position and that ends in a won position;
- ``"lost"``: proved that no sequence of moves wins (every position reachable from the given
  one, up to the proven dominances below, was expanded without finding a win);
- ``"unknown"``: the :class:`Budget` ran out first.

**Full knowledge.** The solver reads every card, face-down ones and the order of the stock and
the reserve included: for Yukon and Quadruple Canfield it solves the *thoughtful* variant, so
``"won"`` certifies that the deal can be won by perfect play and ``"lost"`` that no play wins
even knowing every card. (Scotch Patience deals every card face up: there it is the game itself.)

**Search.** Each game has an engine with its own compact representation (see
``solver_scotch.py`` with its loss proofs in ``scotch_losses.py``, ``solver_yukon.py`` with
its loss proofs in ``yukon_losses.py``,
``solver_canfield.py``); any other :class:`Game`
subclass is searched through the public ``Game`` API with its position text as the key. The key
of a position treats interchangeable piles as a multiset (tableau piles, foundations of a suit
group) and interchangeable cards as equal (in Scotch the suit never matters, only rank and
colour; in Quadruple Canfield the four copies of a card), so permuted positions collide. The
search is a reachability search on the graph of positions: a position is expanded once, the
first time it is met, whatever the path; a move that leads back to a position already met (the
undo of the previous move, a cycle through the stock of Quadruple Canfield, a card given back
and played again) is cut. The verdict is therefore exact on graphs with cycles: a position is
proved lost when every position reachable from it has been expanded. Searchers take turns of
256 expanded positions over one node count (see ``_search``): a depth-first *prover* in the
engine's order (best move first); for Scotch, Yukon and Quadruple Canfield a *best-first*
searcher (the waiting position with the best score — cards home, cards in order, the cards the
foundations want next uncovered, the reserve emptied — is expanded next), sharing the prover's
set of expanded positions in Yukon, with a set of its own and three quarters of the nodes in
Quadruple Canfield (there only once the prover has spent 2,048 nodes); in Scotch four of them,
each with a score and a set of its own, and a second depth-first searcher with a set of its own
that tries every home move (``ScotchEngine.home_pays`` off), a sixth of the nodes each; for
Yukon a *mirror*, depth-first in the order of the tests' plain search (by decreasing source,
destination, count), and *probes*, depth-first searches in shuffled orders
(``random.Random(i)``) with node limits that follow the Luby sequence, each with a set of its
own. Other games get the prover alone. The searchers sharing a set together, or any searcher
with a set of its own, expand
every reachable position before saying "lost". A position proved lost by a game's own deadlock
rule (Scotch Kings waiting for each other or cards that can never leave their fan, Yukon cards
that can never go home whatever the order of play: ``yukon_losses.yukon_blocked``; at the
root and, within a share of the effort, after a card turns up or goes home, also
``yukon_losses.yukon_twins_blocked``) has no moves. In Yukon the depth-first
searchers also record every position they have proved lost (every position reachable from
it expanded, no win: Tarjan's components, see ``searchers._DepthFirst.run_marking``) in a
set that every searcher skips: a region one has exhausted, the others do not search again.
A move known to lead to a lost position is then not tried again where the moves since touched
none of its piles, nor before a move that can be taken back (*commuting losses*, issue 32:
``searchers._DepthFirst.run_marking``), in the depth-first searchers and best-first alike.
The searchers themselves are in :mod:`solrules.searchers`; how the nodes are shared among
them is :func:`_search`, here.

Moves are pruned only by *proven dominance*: a position reached by a safe foundation move is at
least as good as the one before it (every win from before can be replayed from after, shorter by
at least that move), so when such a move exists it is the only one tried; and moves that some
shortest winning line can always do without are never tried (each engine documents its own,
with the argument).

**Determinism.** Moves are generated and ordered from lists only (never by iterating over a set
or a dict of unordered keys), so the same call gives the same verdict, line and node count every
time, under any ``PYTHONHASHSEED``. Pure: no clock unless one is injected (``clock``, a callable
returning seconds, e.g. ``time.perf_counter``); without one only node budgets apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .core import Game, Move
from .games.quadruple_canfield import QuadrupleCanfield
from .games.scotch import Scotch
from .games.yukon import Yukon
from .searchers import (
    Engine,
    _Alone,
    _as_given,
    _BestFirst,
    _DepthFirst,
    _Lost,
    _Probes,
    _reversed,
    _Stop,
    _Won,
)
from .solver_canfield import CanfieldEngine, canfield_safe_moves
from .solver_scotch import ScotchEngine, scotch_safe_moves
from .solver_yukon import YukonEngine, yukon_safe_moves

__all__ = [
    "Budget",
    "SearchProgress",
    "SolveResult",
    "Verdict",
    "best_guess",
    "safe_moves",
    "shorten",
    "solve",
]

Verdict = Literal["won", "lost", "unknown"]

#: Nodes between two looks at the clock, and between two progress reports.
CHECK_EVERY = 1024


@dataclass(frozen=True)
class Budget:
    """How much search :func:`solve` may spend: ``nodes`` expanded positions and/or ``seconds``
    of the injected clock (ignored without a clock). ``None``: no limit of that kind."""

    nodes: int | None = 1_000_000
    seconds: float | None = None


@dataclass(frozen=True)
class SearchProgress:
    """What a progress callback receives, every :data:`CHECK_EVERY` nodes."""

    nodes: int
    depth: int
    max_depth: int
    seconds: float | None


@dataclass(frozen=True)
class SolveResult:
    """The verdict of :func:`solve` and what the search cost.

    ``line``: for ``"won"``, the winning moves as texts, in order from the given position
    (empty if it was already won); empty otherwise. ``nodes``: positions expanded (each distinct
    position counts once); ``max_depth``: longest line of moves explored; ``seconds``: elapsed
    time by the injected clock, ``None`` without one.
    """

    verdict: Verdict
    line: tuple[str, ...]
    nodes: int
    max_depth: int
    seconds: float | None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: verdict, line (a list), nodes, max_depth, seconds."""
        return {"verdict": self.verdict, "line": list(self.line), "nodes": self.nodes,
                "max_depth": self.max_depth, "seconds": self.seconds}


def _engine(game: Game) -> Engine:
    kind = type(game)
    if kind is Scotch:
        return ScotchEngine(game)
    if kind is Yukon:
        return YukonEngine(game)
    if kind is QuadrupleCanfield:
        return CanfieldEngine(game)
    return GenericEngine(game)


def solve(game: Game, budget: Budget | None = None, *,
          clock: Callable[[], float] | None = None,
          progress: Callable[[SearchProgress], None] | None = None) -> SolveResult:
    """Search for a win from ``game``'s current position; ``game`` itself is left unchanged.

    ``budget`` defaults to ``Budget()`` (a million nodes). ``clock``: a zero-argument callable
    returning seconds (``time.perf_counter``); it enables ``budget.seconds`` and the
    ``seconds`` figures. ``progress`` is called every :data:`CHECK_EVERY` expanded positions.
    The result depends only on the position and the node budget (and, with a time budget, on
    where the clock stops it). A winning line is made shorter by :func:`shorten` before it is
    returned (``max_depth`` is that of the search).
    """
    budget = Budget() if budget is None else budget
    begin = clock() if clock is not None else 0.0
    engine = _engine(game)
    result = _search(engine, budget, clock, progress)
    if result.verdict != "won" or not result.line:
        return result
    line = shorten(game, result.line)
    seconds = None if clock is None else clock() - begin
    return SolveResult("won", line, result.nodes, result.max_depth, seconds)


def shorten(game: Game, line: tuple[str, ...], passes: int = 3) -> tuple[str, ...]:
    """A winning line made shorter by shortcuts: from each position of the line, the move that
    reaches the latest position of the line (exactly the same piles) in one step.

    A search's line wanders (a run moved back and forth, the stock dealt around) between
    positions that differ only in a way the search's key ignores or that the search met in
    another order; this keeps the line legal and winning, and typically removes the wandering.
    """
    for _ in range(passes):
        shorter = _shortcut(game, line)
        if len(shorter) == len(line):
            break
        line = shorter
    return line


def _fingerprint(g: Game) -> tuple[tuple[int, ...], ...]:
    return (*(tuple(p) for p in g._piles), tuple(g._down))


def _shortcut(game: Game, line: tuple[str, ...]) -> tuple[str, ...]:
    g = game.copy()
    latest = {_fingerprint(g): 0}
    for i, text in enumerate(line, 1):
        g.push_text(text)
        latest[_fingerprint(g)] = i
    g = game.copy()
    out: list[str] = []
    i = 0
    while i < len(line):
        best, reach = line[i], i + 1
        for text, move in list(g.legal_by_text().items()):
            g.push(move)
            j = latest.get(_fingerprint(g), -1)
            if j > reach:
                best, reach = text, j
            g.pop()
        g.push_text(best)
        out.append(best)
        i = reach
    return tuple(out)


#: Positions one searcher expands before handing over to the next, and the unit of the
#: probes' node limits (see _search).
TURN = 256


def _search(engine: Engine, budget: Budget, clock: Callable[[], float] | None,
            progress: Callable[[SearchProgress], None] | None, *, probes: bool | None = None,
            best_first: bool | None = None, mirror: bool | None = None,
            turn: int = TURN) -> SolveResult:
    """Searchers taking turns of ``turn`` expanded positions, one node count for all.

    - the **prover**: depth-first in the engine's order (best move first);
    - for an engine with a score (Scotch, Yukon, Quadruple Canfield), **best-first**: the
      waiting position with the best score is expanded next;
    - for an engine that asks for it (``mirror = True``: Yukon), the **mirror**: depth-first in
      the plain search's order, by decreasing source, destination and count (see
      :func:`_reversed`);
    - for an engine that asks for them (``probes = True``: Scotch, Yukon), the **probes**:
      depth-first in shuffled orders (``random.Random(i)`` for the i-th), one after the other,
      each with a node limit (see :class:`_Probes`). Not for Quadruple Canfield: a shuffled
      search there wanders thousands of moves deep (the stock dealt round and round), and a
      searcher's turn begins by replaying its line from the root (the engine has no snapshot),
      so probes cut its speed tenfold (1,500 nodes/s against 14,000) for no deal won.

    The prover and the best-first searcher share one set of expanded positions: a position is
    expanded once, by whichever comes to it first, and together they are complete: when both
    have run dry, every position reachable from the root (through the moves the engine tries)
    was expanded once, and the verdict is "lost". The mirror and each probe have sets of their
    own, so each is complete by itself: one that runs dry proves the loss too. They re-expand
    positions, so they never get more nodes than the prover and best-first together: a loss
    costs at most twice what those two spend on it.

    Yukon (``share_dead``, issue 20, third part): the depth-first searchers add every position
    they prove lost to one set, ``dead``, that all searchers skip (no node is counted for a
    position found there). A loss then costs about one expansion per position whoever makes it:
    on benchmark deal 14270399781586851470, 126,684 nodes for the prover alone, 126,896 for the
    prover and the mirror, 126,684 for the prover and best-first (278,407 for all four searchers
    before). What a searcher with a set of its own leaves unfinished (a probe at its limit, the
    mirror's open components) is lost work, so Yukon stops the mirror and the probes once
    ``alone_until`` nodes are spent in all (``YukonEngine.alone_until``); from then on the prover
    and best-first expand each position once.

    An engine may share the nodes out otherwise (Scotch and Quadruple Canfield do):
    ``best_first_alone`` gives the best-first searcher a set of its own (then it is complete by
    itself, like a probe), ``best_first_weight`` multiplies its turns, ``best_first_scores``
    (Scotch) asks for several such searchers, as (name of the engine's score method, weight of
    its turns), ``depth_first_modes`` (Scotch) asks for depth-first searchers in the engine's
    order with sets of their own, each with engine attributes of its own set for its turns
    (``{"home_pays": False}``: a prover without one of the engine's cuts, whose dive differs),
    the searchers with sets of their own may spend up to ``alone_ratio`` times the
    prover's nodes in all, and they wait until
    the prover has spent ``alone_after`` nodes (Quadruple Canfield: its first dive wins most
    deals, and their turns would only delay it).

    Why not one search: a depth-first search that takes a losing branch early must exhaust it
    before it tries the next move, and a Yukon or Scotch branch holds far more positions than
    any budget. Yukon seed 5766775785083048890 shows it: 300,000 nodes of prover and best-first
    (the search before this one, in two phases) do not win it, while depth-first searches in
    shuffled orders win it in 114 to 571 nodes for five orders out of eight (and need over
    20,000 for the other three). Searchers in other orders that *share* the prover's set do not
    help either: the first to reach a position near the root owns it and keeps it below its own
    bad choice (three or eight shared orders: still unknown at 50,000 nodes); a searcher must own
    every position it passes. Turns are counted in nodes, never in time, so the result does not
    depend on the machine.
    """
    max_nodes = budget.nodes if budget.nodes is not None else -1
    start = clock() if clock is not None else 0.0
    deadline = None
    if clock is not None and budget.seconds is not None:
        deadline = start + budget.seconds

    def elapsed() -> float | None:
        return None if clock is None else clock() - start

    if engine.won():
        return SolveResult("won", (), 0, 0, elapsed())
    seen: set[bytes] = {engine.key()}
    nodes = 1
    max_depth = 0
    root = engine.moves()
    if best_first is None:
        best_first = hasattr(engine, "score") and hasattr(engine, "snapshot")
    if mirror is None:
        mirror = bool(getattr(engine, "mirror", False))
    if probes is None:
        probes = bool(getattr(engine, "probes", False))

    def expanded(depth: int) -> None:
        nonlocal nodes, max_depth
        nodes += 1
        if depth > max_depth:
            max_depth = depth
        if nodes % CHECK_EVERY == 0:
            if progress is not None:
                progress(SearchProgress(nodes, depth, max_depth, elapsed()))
            if deadline is not None and clock is not None and clock() >= deadline:
                raise _Stop
        if 0 <= max_nodes <= nodes:
            raise _Stop

    if 0 <= max_nodes <= nodes:
        return SolveResult("unknown", (), nodes, max_depth, elapsed())
    at_root: Any = getattr(engine, "snapshot", lambda: None)()
    # Yukon: positions proved lost by any depth-first searcher are skipped by all (see
    # _DepthFirst.run_marking).
    dead: set[bytes] | None = set() if getattr(engine, "share_dead", False) else None
    root_key = engine.key()
    shared: list[_DepthFirst | _BestFirst] = [_DepthFirst(root, None, at_root, dead, root_key)]
    alone: list[_Alone | _Probes | _BestFirst] = []
    # Scotch: best-first with a set of its own (sharing, it cuts the prover's quick lines) and
    # the larger share; the searchers alone may then spend this many times the prover's nodes.
    best_alone = bool(getattr(engine, "best_first_alone", False))
    ratio = int(getattr(engine, "alone_ratio", 1))
    weight = int(getattr(engine, "best_first_weight", 1))
    # Quadruple Canfield: the searchers alone wait until the prover has spent this many nodes
    # (its first dive wins most deals; their turns would only delay it).
    after = int(getattr(engine, "alone_after", 0))
    # Yukon: the mirror and the probes stop once this many nodes are spent in all.
    alone_until: int | None = getattr(engine, "alone_until", None)
    here: _DepthFirst | _BestFirst | _Alone | _Probes | None = None  # whose position it is
    spent_shared = spent_alone = 0
    try:
        if best_first:
            if best_alone:
                # Scotch: more than one best-first searcher, each with a score of its own.
                scores: tuple[tuple[str, int], ...] = getattr(
                    engine, "best_first_scores", (("score", weight),))
                for name, w in scores:
                    alone.append(_BestFirst(engine, root, alone=True, dead=dead, score=name,
                                            weight=w))
            else:
                shared.append(_BestFirst(engine, root, dead=dead, weight=weight))
        # Scotch: depth-first searchers with sets of their own, each with engine settings of
        # its own (as attribute: value), set for its turns only.
        modes: tuple[dict[str, Any], ...] = getattr(engine, "depth_first_modes", ())
        defaults = {name: getattr(engine, name) for mode in modes for name in mode}

        def configure(settings: dict[str, Any]) -> None:
            for name, value in {**defaults, **settings}.items():
                setattr(engine, name, value)

        for mode in modes:
            configure(mode)
            alone.append(_Alone(engine.moves(), _as_given, at_root, dead, root_key, mode))
            configure({})
        if mirror:
            alone.append(_Alone(root, _reversed, at_root, dead, root_key))
        if probes:
            alone.append(_Probes(root, turn, at_root, dead, root_key))
        while True:
            for searcher in [*shared, *alone]:
                # The searchers with sets of their own never get more nodes than the shared
                # ones: a loss costs at most twice what the prover spends on it.
                is_alone = isinstance(searcher, _Alone | _Probes) or (
                    isinstance(searcher, _BestFirst) and searcher.own is not None)
                if is_alone and (spent_alone > spent_shared * ratio or spent_shared < after):
                    continue
                if alone_until is not None and nodes >= alone_until and is_alone:
                    continue  # Yukon: the mirror and the probes win early or not at all
                if here is not searcher:
                    if here is not None:
                        here.leave(engine)
                    if defaults:
                        configure(getattr(searcher, "settings", {}))
                    searcher.enter(engine)
                    here = searcher
                before = nodes
                dry = searcher.run(engine, seen,
                                   turn * searcher.weight if isinstance(searcher, _BestFirst)
                                   else turn,
                                   expanded)
                if is_alone:
                    spent_alone += nodes - before
                else:
                    spent_shared += nodes - before
                if dry:
                    # Only a shared searcher runs dry (the others raise _Lost): when all have,
                    # every reachable position was expanded.
                    shared.remove(searcher)  # type: ignore[arg-type]
                    if not shared:
                        raise _Lost
    except _Stop:
        return SolveResult("unknown", (), nodes, max_depth, elapsed())
    except _Won as win:
        return SolveResult("won", win.line, nodes, max(max_depth, win.depth), elapsed())
    except _Lost:
        pass
    return SolveResult("lost", (), nodes, max_depth, elapsed())


class GenericEngine:
    """Any :class:`Game` through its public API: every legal move, the position text as key.

    No dominance and no symmetry: slow, but exact for any game (used for games without an
    engine of their own, and by the tests as an independent check).
    """

    def __init__(self, game: Game) -> None:
        self.game = game.copy()
        self.game.move_stack = []
        self.game._undo = []
        self._moves: dict[int, Move] = {}
        self._ids: dict[Move, int] = {}

    def _id(self, move: Move) -> int:
        ident = self._ids.get(move)
        if ident is None:
            ident = self._ids[move] = len(self._moves)
            self._moves[ident] = move
        return ident

    def won(self) -> bool:
        return self.game.is_won()

    def key(self) -> bytes:
        return self.game.position().encode()

    def moves(self) -> list[int]:
        return [self._id(m) for m in self.game.legal_moves()]

    def apply(self, move: int) -> None:
        self.game.push(self._moves[move])

    def undo(self, record: Any) -> None:
        self.game.pop()

    def text(self, move: int) -> str:
        return self._moves[move].text()


def safe_moves(game: Game) -> list[str]:
    """Foundation moves that are safe to auto-play, judged only by what every player sees.

    A move is listed when it is legal now and playing it can never turn a winnable position
    into a lost one, judged from the foundations' contents and the card itself (which cards are
    still out is then known too, but never where a face-down one lies). The moves are listed in
    pile order and may be played one after the other (two cards never claim the same
    foundation). The rule per game, and why it is safe:

    - **Scotch Patience**: a card of rank r when every card of rank below r is home (all four
      foundations hold at least r cards; Aces always). A fan card serves only as a place for a
      card one rank lower; none is out, and none is ever worth taking back, since it could only
      hold a card lower still. Two cards of the same rank and colour are interchangeable.
    - **Yukon**: a card of rank r when both cards of rank r−1 of the other colour are home
      (Aces always): only those can be built on it, and cards never come back.
    - **Quadruple Canfield**: ranks count from the base rank (position 0) up to 12, wrapping.
      A card at position p goes home when (1) every foundation of its suit holds at least p
      cards, (2) it is the waste's top, a tableau top with cards under it (or the reserve is
      empty), or the reserve's last card — so that no space is refilled from the reserve by
      this move — and (3) no card still out could ever need it: a card at position q of the
      right colour could be built on it either directly (q = p−1, other colour) or on a chain
      of cards given back from the foundations, p−1, p−2, … (wrapping past the base rank to
      12, 11, …) down to q+1, alternating in colour, each of them home; the card is safe only
      when no such card is out. Because foundations give cards back and ranks wrap, this rarely
      holds before the last rounds of a game: few Quadruple Canfield moves are ever safe.
    """
    judge = _SAFE.get(game.name)
    return [] if judge is None else judge(game)


def best_guess(game: Game) -> str | None:
    """The move the solver would try first from here (its move ordering, or for a best-first
    engine the move to the best-scored position), without searching: a heuristic for when no
    line is known. None when no move is legal, or when every legal move is one the solver
    never tries (it leads nowhere new: a group moved back and forth, say)."""
    engine = _engine(game)
    moves = engine.moves()
    if not moves:
        return None
    best = moves[0]
    score = getattr(engine, "score", None)
    # Quadruple Canfield's score only steers its best-first searcher; its hints keep the order.
    if score is not None and getattr(engine, "guess_by_score", True):
        top = None
        for move in moves:
            record = engine.apply(move)
            value = score()
            engine.undo(record)
            if top is None or value > top:
                top, best = value, move
    return engine.text(best)


# A server asks on every move: imports inside safe_moves cost a lookup each call.
_SAFE: dict[str, Callable[[Game], list[str]]] = {
    "scotch": scotch_safe_moves,
    "yukon": yukon_safe_moves,
    "quadruple-canfield": canfield_safe_moves,
}
