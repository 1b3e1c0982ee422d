"""What a search runs on (:class:`Engine`: a game's search representation, one per game in
``solver_*``) and the searchers :func:`solrules.solver._search` shares its nodes among, a turn
at a time: the depth-first prover (:class:`_DepthFirst`, with :meth:`~_DepthFirst.run_marking`
for engines that share the positions proved lost), the probes with shuffled or reversed move
orders (:class:`_Probes`), a searcher with a set of its own (:class:`_Alone`) and the
best-first searcher (:class:`_BestFirst`), and the exceptions by which a turn ends the search.
Why the nodes are shared this way, and what each searcher is for, is in :mod:`solrules.solver`.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from typing import Any, Protocol


class Engine(Protocol):
    """A game's search representation. Moves are small ints private to the engine."""

    def won(self) -> bool: ...

    def key(self) -> bytes: ...

    def moves(self) -> list[int]:
        """Moves to try here, best first; a single safe move when one exists."""
        ...

    def apply(self, move: int) -> Any: ...

    def undo(self, record: Any) -> None: ...

    def text(self, move: int) -> str: ...


class _Stop(Exception):
    """The budget ran out (raised inside a turn, caught by :func:`_search`)."""


class _Lost(Exception):
    """A probe ran dry: every position reachable from the root was expanded."""


class _Won(Exception):
    def __init__(self, line: tuple[str, ...], depth: int) -> None:
        super().__init__()
        self.line, self.depth = line, depth



class _DepthFirst:
    """One depth-first searcher of :func:`_search`: its line from the root and, per position on
    it, the moves to try (in its order) and the next one."""

    def __init__(self, root: list[int],
                 order: Callable[[list[int]], list[int]] | None = None,
                 start: Any = None, dead: set[bytes] | None = None,
                 root_key: bytes = b"") -> None:
        self._order = order if order is not None else _as_given
        self.path: list[int] = []
        self.undo: list[Any] = []
        self.frames_moves: list[list[int]] = [self._order(root)]
        self.frames_next: list[int] = [0]
        self.expanded = 0
        # Proved-lost positions shared by every searcher (engines with ``share_dead``: Yukon);
        # None: the plain search (see run_marking).
        self.dead = dead
        if dead is not None:
            self.frames_key: list[bytes] = [root_key]
            self.frames_low: list[int] = [0]
            self.num: dict[bytes, int] = {root_key: 0}  # Tarjan's numbers; -1 once closed
            self.open: list[bytes] = [root_key]  # Tarjan's stack
            # Per position on the line: the moves known to lead from it to a lost position,
            # with the piles each touches (see run_marking, *commuting losses*).
            self.frames_lost: list[dict[int, int]] = [{}]
        # The engine's snapshot where this searcher stands (``start``: the root's), for engines
        # that take snapshots: a turn then begins with one restore, not by replaying the line
        # from the root (a depth-first line can run thousands of moves deep).
        self.snap = start

    def enter(self, engine: Engine) -> None:
        if self.snap is not None:
            engine.restore(self.snap)  # type: ignore[attr-defined]
        else:
            self.undo = [engine.apply(m) for m in self.path]

    def leave(self, engine: Engine) -> None:
        if self.snap is not None:
            self.snap = engine.snapshot()  # type: ignore[attr-defined]
        else:
            self.rewind(engine)

    def rewind(self, engine: Engine) -> None:
        """Take back the whole line: the engine is at the root again."""
        while self.undo:
            engine.undo(self.undo.pop())

    def run(self, engine: Engine, seen: set[bytes], turn: int,
            expanded: Callable[[int], None]) -> bool:
        """Expand up to ``turn`` positions; True when this searcher has nothing left."""
        if self.dead is not None:
            return self.run_marking(engine, seen, turn, expanded)
        apply, take_back, moves_of, key_of = engine.apply, engine.undo, engine.moves, engine.key
        won = engine.won
        path, undo = self.path, self.undo
        frames_moves, frames_next = self.frames_moves, self.frames_next
        while frames_moves:
            i = frames_next[-1]
            options = frames_moves[-1]
            if i == len(options):
                frames_moves.pop()
                frames_next.pop()
                if path:
                    path.pop()
                    take_back(undo.pop())
                continue
            frames_next[-1] = i + 1
            move = options[i]
            path.append(move)
            undo.append(apply(move))
            if won():
                raise _Won(tuple(engine.text(m) for m in path), len(path))
            k = key_of()
            if k in seen:
                path.pop()
                take_back(undo.pop())
                continue
            seen.add(k)
            frames_moves.append(self._order(moves_of()))
            frames_next.append(0)
            self.expanded += 1
            expanded(len(path))
            turn -= 1
            if turn <= 0:
                return False
        return True

    def known_lost(self, engine: Engine, move: int, lost: dict[int, int]) -> bool:
        """Whether ``move``, from where this searcher stands, is among ``lost``: the moves
        known to lead from here to a lost position, with the piles each touches (*commuting
        losses*, see :meth:`run_marking`, which asks only when it is; a method of its own for
        the tests, which check each one)."""
        return move in lost

    def _back_to_lost(self, engine: Engine, dead: set[bytes]) -> None:
        """The position this searcher stands at is proved lost (*back to a lost position*, see
        :meth:`run_marking`): no more moves from it, and into ``dead``; at the root, the
        search's verdict. ``engine`` stands at that position (the tests read it)."""
        self.frames_next[-1] = len(self.frames_moves[-1])
        dead.add(self.frames_key[-1])
        if len(self.frames_key) == 1:
            raise _Lost

    def run_marking(self, engine: Engine, seen: set[bytes], turn: int,
                    expanded: Callable[[int], None]) -> bool:
        """:meth:`run`, that also adds to ``self.dead`` every position it has proved lost, and
        skips the positions found there.

        A position is proved lost once every position reachable from it (through the moves
        the engine tries) has been expanded without a win: Tarjan's strongly connected
        components over this searcher's own tree. A component is closed when the search leaves
        its first position and nothing in it leads back to a position still open above
        (on the line from the root, or waiting under one of its positions); every position
        reachable from it was then expanded by this searcher or is in ``dead`` already, and
        none was won (a win ends the search), so none of the component's positions can be won
        (each tried move of a winnable position leads, by the engine's dominances, to a
        winnable one for some move: a win would be reachable). A position this searcher meets
        in ``seen`` that it did not expand itself (the prover meets those of best-first, whose
        children may still wait in its queue) is unknown: it keeps every position above it
        open for good (a low link of -1). Positions in ``dead`` are skipped by every searcher,
        and never counted again: when one searcher has exhausted a region, the others need not.

        *Commuting losses* (issue 32), for engines that say which piles a move touches
        (``piles``: Yukon): a move m from position P to a position proved lost (in ``dead``,
        or closed here) is not tried again from a position P' below P on the line when no
        move of the line from P to P' touches a pile m touches. Then m is legal at P' and the
        line's moves are legal after m (a Yukon move's legality and effect read only its own
        source and destination: the cards it lifts, the top it lands on or the emptiness of
        the column, the foundation of the card's suit), so m(P') is reached from m(P) by the
        same line: a position reachable from a lost one is lost. Such a move is treated as
        one that leads into ``dead``. In Yukon's *plateaus* (face-up cards rearranged, with
        every way out — a card turned up, a card home — proved lost at once), each way out
        is then proved once for the rearrangements that do not touch it, not once for each.
        Upwards too, for engines that say which moves can be taken back (``reversible``,
        asked where the move starts: Yukon's move of a card off the card it fits on, a face-up
        one, which it can go back onto): if P' = s(P) for such a move s and m(P') is known
        lost, m touching none of s's piles, then m is legal at P (its piles are as at P') and
        m(P) is reached from m(P') by taking s back (s's piles are as at P'), so m(P) is lost:
        the moves known lost below s are known lost at P, for its later moves.

        *Back to a lost position*: when a move that can be taken back leads to a position known
        lost (in ``dead``, closed here, or a commuting loss), the position it starts from is
        reached from that lost one by taking the move back: it is lost too. Its other moves are
        not tried, and it goes into ``dead`` at once, still open here (the engine's order had cut
        the move back, as one that cannot pay). Its component may then close with it: the
        argument above holds, since no winning line goes through a lost position.

        A loop of its own beside :meth:`run`'s, not a flag in it: the numbers and low links cost
        every node, and only engines that share dead positions (Yukon) pay for them.
        """
        piles: Callable[[int], int] | None = getattr(engine, "piles", None)
        reversible: Callable[[int], bool] | None = getattr(engine, "reversible", None)
        frames_lost = self.frames_lost
        apply, take_back, moves_of, key_of = engine.apply, engine.undo, engine.moves, engine.key
        won = engine.won
        path, undo = self.path, self.undo
        frames_moves, frames_next = self.frames_moves, self.frames_next
        frames_key, frames_low = self.frames_key, self.frames_low
        num, open_, dead = self.num, self.open, self.dead
        assert dead is not None
        while frames_moves:
            i = frames_next[-1]
            options = frames_moves[-1]
            if i == len(options):
                frames_moves.pop()
                frames_next.pop()
                k = frames_key.pop()
                low = frames_low.pop()
                closed = low == num[k]  # k's component is closed: k goes into dead
                if closed:
                    while True:
                        x = open_.pop()
                        num[x] = -1
                        dead.add(x)
                        if x == k:
                            break
                if frames_low and low < frames_low[-1]:
                    frames_low[-1] = low
                below = frames_lost.pop()
                if path:
                    move = path.pop()
                    take_back(undo.pop())
                    if piles is not None:
                        here = frames_lost[-1]
                        touched = piles(move)
                        if closed or k in dead:
                            here[move] = touched
                            if reversible is not None and reversible(move):
                                self._back_to_lost(engine, dead)
                        if below and reversible is not None and reversible(move):
                            # The move can be taken back: what is lost after it, by moves
                            # that touch none of its piles, is lost before it (see above).
                            for m, mask in below.items():
                                if not mask & touched and m not in here:
                                    here[m] = mask
                continue
            frames_next[-1] = i + 1
            move = options[i]
            lost_here = frames_lost[-1]
            if move in lost_here and self.known_lost(engine, move, lost_here):
                # It leads to a position reachable from a lost one (see above).
                if reversible is not None and reversible(move):
                    self._back_to_lost(engine, dead)
                continue
            path.append(move)
            undo.append(apply(move))
            if won():
                raise _Won(tuple(engine.text(m) for m in path), len(path))
            k = key_of()
            if k in dead or k in seen:
                if k not in dead:
                    n = num.get(k)
                    low = -1 if n is None else n  # -1: met by another searcher, unknown
                    if (n is None or n >= 0) and low < frames_low[-1]:
                        frames_low[-1] = low
                    path.pop()
                    take_back(undo.pop())
                    continue
                path.pop()
                take_back(undo.pop())
                if piles is not None:
                    lost_here[move] = piles(move)
                    if reversible is not None and reversible(move):
                        self._back_to_lost(engine, dead)
                continue
            seen.add(k)
            if piles is not None:
                touched = piles(move)
                frames_lost.append({m: mask for m, mask in lost_here.items()
                                    if not mask & touched})
            else:
                frames_lost.append({})
            n = len(num)
            num[k] = n
            open_.append(k)
            frames_key.append(k)
            frames_low.append(n)
            frames_moves.append(self._order(moves_of()))
            frames_next.append(0)
            self.expanded += 1
            expanded(len(path))
            turn -= 1
            if turn <= 0:
                return False
        return True


class _Probes:
    """The probes of :func:`_search`: depth-first searches in shuffled orders, each with a set of
    met positions of its own and a node limit, one after the other (restarts).

    A probe is a complete search of its own: one that runs dry before its limit has expanded
    every position reachable from the root, which proves the loss. The limits follow the Luby
    sequence (1, 1, 2, 1, 1, 2, 4, ... times ``unit``): most probes are short, and every limit
    recurs, so a win that some order finds within L nodes is found by a probe of limit ≥ L
    unless none of the orders tried so far leads to it."""

    def __init__(self, root: list[int], unit: int, start: Any = None,
                 dead: set[bytes] | None = None, root_key: bytes = b"") -> None:
        self.root = root
        self.unit = unit
        self.start = start
        self.dead = dead
        self.root_key = root_key
        self.count = 0
        self.probe = self._next()

    def _next(self) -> _DepthFirst:
        self.count += 1
        self.limit = self.unit * _luby(self.count)
        self.seen: set[bytes] = set()
        self.used = 0
        return _DepthFirst(self.root, _shuffled(random.Random(self.count)), self.start,
                           self.dead, self.root_key)

    def enter(self, engine: Engine) -> None:
        self.probe.enter(engine)

    def leave(self, engine: Engine) -> None:
        self.probe.leave(engine)

    def run(self, engine: Engine, seen: set[bytes], turn: int,
            expanded: Callable[[int], None]) -> bool:
        while turn > 0:
            if not self.seen:
                self.seen.add(engine.key())
            step = min(turn, self.limit - self.used)
            before = self.probe.expanded
            dry = self.probe.run(engine, self.seen, step, expanded)
            done = self.probe.expanded - before
            self.used += done
            turn -= done
            if dry:
                raise _Lost
            if self.used >= self.limit:
                self.probe.rewind(engine)
                self.probe = self._next()
        return False


def _as_given(moves: list[int]) -> list[int]:
    return moves


def _reversed(moves: list[int]) -> list[int]:
    """The engine's moves by decreasing (source pile, destination pile, count), a Yukon move
    being numbered ``source << 16 | count << 8 | destination``: the last columns (most face-down
    cards in a deal) first, from each the moves to the last columns first (foundation moves
    last: foundations come before the columns), the largest groups first. Not the engine's idea
    of the best move, on purpose: it is the order of the plain search of the tests
    (``tests/solrules/oracle.py``, move tuples sorted, last first), which wins some deals at
    once that the engine's order does not (issue 20: 3 of the 40 Yukon deals of the benchmark
    left unknown after 20,000 nodes, in 171 to 336 positions)."""
    if len(moves) < 2:
        return moves
    return sorted(moves, key=lambda m: (m >> 16, m & 0xFF, (m >> 8) & 0xFF), reverse=True)


def _shuffled(rng: random.Random) -> Callable[[list[int]], list[int]]:
    def order(moves: list[int]) -> list[int]:
        if len(moves) < 2:
            return moves
        moves = list(moves)
        rng.shuffle(moves)
        return moves

    return order


class _Alone:
    """A depth-first searcher with a set of met positions of its own (the *mirror* of
    :func:`_search`): complete by itself, so running dry proves the loss."""

    def __init__(self, root: list[int], order: Callable[[list[int]], list[int]],
                 start: Any = None, dead: set[bytes] | None = None,
                 root_key: bytes = b"", settings: dict[str, Any] | None = None) -> None:
        self.dfs = _DepthFirst(root, order, start, dead, root_key)
        self.seen: set[bytes] = set()
        # Engine attributes set for this searcher's turns (Scotch: a prover without the rule
        # that home moves must pay at once; see solver._search).
        self.settings: dict[str, Any] = settings or {}

    def enter(self, engine: Engine) -> None:
        self.dfs.enter(engine)

    def leave(self, engine: Engine) -> None:
        self.dfs.leave(engine)

    def run(self, engine: Engine, seen: set[bytes], turn: int,
            expanded: Callable[[int], None]) -> bool:
        if not self.seen:
            self.seen.add(engine.key())
        if self.dfs.run(engine, self.seen, turn, expanded):
            raise _Lost
        return False


def _luby(i: int) -> int:
    """The i-th term (from 1) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ..."""
    k = 1
    while (1 << k) - 1 < i:
        k += 1
    while i != (1 << k) - 1:
        i -= (1 << (k - 1)) - 1
        k = 1
        while (1 << k) - 1 < i:
            k += 1
    return 1 << (k - 1)


class _BestFirst:
    """The best-first searcher of :func:`_search`: always expand the waiting position with the
    best score. A waiting position is kept as its parent's snapshot and the move from there, and
    counts as met only once expanded (so that it never blocks a depth-first searcher)."""

    def __init__(self, engine: Any, root: list[int], alone: bool = False,
                 dead: set[bytes] | None = None, score: str = "score", weight: int = 1) -> None:
        # alone: a set of expanded positions of its own (complete by itself: dry means lost).
        self.own: set[bytes] | None = {engine.key()} if alone else None
        # score: the name of the engine's method that scores a position (higher is expanded
        # first); weight: this searcher's turns, in turns of the prover.
        self.score_name = score
        self.weight = weight
        # dead: positions the depth-first searchers proved lost, skipped (see run_marking).
        self.dead: set[bytes] = dead if dead is not None else set()
        self.marks = dead is not None  # adds the positions without moves to the shared set
        # Commuting losses (see _DepthFirst.run_marking), for engines that share dead positions
        # and say which piles a move touches: per expanded position (by its number), the moves
        # known to lead from it to a lost position.
        self.piles: Callable[[int], int] | None = (
            getattr(engine, "piles", None) if self.marks else None)
        self.lost: dict[int, list[int]] = {}
        self.root = engine.snapshot()
        self.parent: list[int] = [-1]  # per position queued: the position it was reached from
        self.via: list[int] = [0]  # and the move
        self.depth: list[int] = [0]
        self.heap: list[tuple[int, int, Any, int]] = []
        self._queue(engine, 0, self.root, root)

    def _queue(self, engine: Any, node: int, snap: Any, moves: list[int]) -> None:
        apply, undo, score = engine.apply, engine.undo, getattr(engine, self.score_name)
        d = self.depth[node] + 1
        for move in moves:
            record = apply(move)
            if engine.won():
                line = [engine.text(move)]
                n = node
                while n > 0:
                    line.append(engine.text(self.via[n]))
                    n = self.parent[n]
                line.reverse()
                raise _Won(tuple(line), d)
            child = len(self.parent)
            self.parent.append(node)
            self.via.append(move)
            self.depth.append(d)
            heapq.heappush(self.heap, (-score(), child, snap, move))
            undo(record)

    def _known_lost(self, at: int, move: int, piles: Callable[[int], int]) -> bool:
        """Whether ``move`` from expanded position ``at`` is known to lead to a lost position:
        it does from ``at`` or from a position on the line to ``at`` whose later moves touch
        none of its piles (*commuting losses*, see :meth:`_DepthFirst.run_marking`)."""
        mask = piles(move)
        lost, parent, via = self.lost, self.parent, self.via
        line = 0  # the piles touched by the moves from there to ``at``
        while True:
            known = lost.get(at)
            if known is not None and move in known:
                return True
            if at == 0:
                return False
            line |= piles(via[at])
            if line & mask:
                return False
            at = parent[at]

    def enter(self, engine: Any) -> None:
        engine.restore(self.root)

    def leave(self, engine: Any) -> None:
        engine.restore(self.root)

    def run(self, engine: Any, seen: set[bytes], turn: int,
            expanded: Callable[[int], None]) -> bool:
        if self.own is not None:
            seen = self.own
        heap, pop, dead = self.heap, heapq.heappop, self.dead
        piles, lost, parent = self.piles, self.lost, self.parent
        while heap:
            _, node, snap, move = pop(heap)
            up = parent[node]
            if piles is not None and self._known_lost(up, move, piles):
                continue
            engine.restore(snap)
            engine.apply(move)
            k = engine.key()
            if k in seen or k in dead:
                if piles is not None and k in dead:
                    lost.setdefault(up, []).append(move)
                continue
            seen.add(k)
            expanded(self.depth[node])
            moves = engine.moves()
            if not moves and self.marks:
                # No move (the engine proved it lost, or nothing is legal) and not won: lost.
                # The depth-first searchers then count it as lost (commuting losses).
                dead.add(k)
                if piles is not None:
                    lost.setdefault(up, []).append(move)
            self._queue(engine, node, engine.snapshot(), moves)
            turn -= 1
            if turn <= 0:
                engine.restore(self.root)
                return False
        engine.restore(self.root)
        if self.own is not None:
            raise _Lost
        return True

