"""The part of the solver's game engines that every game shares: deferred moves.

Two moves that touch disjoint piles commute: either order is legal and both reach the same
position. Call some moves *deferrable* — moves that never make progress by themselves (a card
that lies on its natural place moving to another such place, a foundation's card given back,
dealing from the stock) — and take any shortest winning line. Push every deferrable move later,
past each following move that is not deferrable and touches none of its piles, as long as one
is left: the line stays legal, as short, and ends in the same place; the process ends since
deferrable moves only move later. In the line obtained, every deferrable move is followed, before
the next move that is not deferrable, by a move touching one of its piles (a later deferrable
move, or that next move); else it could still move on. Two adjacent deferrable moves that touch
disjoint piles may then be sorted (this keeps the property), and a move never moves again the
cards that the move before it just moved (one move would have done: the line was shortest).

So the search only needs such lines. :class:`DeferringEngine` remembers the *pending* deferrable
moves (made since the last other move, and no later move has touched their piles yet) as part of
the position, and allows at each step any deferrable move (in sorted order after an independent
one) or a move that touches a pile of every pending one. The solver's verdict stays exact: every
win has a shortest line of that shape. With pending moves, no move is forced (the safe moves of
each game are proved from positions without them).
"""

from __future__ import annotations

from typing import Any

Pending = tuple[tuple[int, ...], ...]


class DeferringEngine:
    """Base of the game engines. Subclasses implement the ``_`` methods.

    Moves are ints; a pending entry is ``(move, *piles it touched)``.
    """

    pending: Pending = ()

    # -- to implement ---------------------------------------------------------------------------

    def _apply(self, move: int) -> Any:
        raise NotImplementedError

    def _undo(self, record: Any) -> None:
        raise NotImplementedError

    def _moves(self, forced: bool) -> list[int]:
        """Moves here, best first; with ``forced``, a single safe move when there is one."""
        raise NotImplementedError

    def _key(self) -> bytes:
        raise NotImplementedError

    def _touch(self, move: int) -> tuple[int, ...]:
        """The piles ``move`` changes, in the current position (before playing it)."""
        raise NotImplementedError

    def _deferrable(self, move: int) -> bool:
        """Whether ``move`` (in the current position) is deferrable."""
        raise NotImplementedError

    def _repeats(self, last: int, move: int) -> bool:
        """Whether ``move`` moves again what ``last`` (deferrable, just played) moved."""
        raise NotImplementedError

    def _code(self, pile: int) -> bytes:
        """A description of ``pile`` for the key (its contents, so that equal piles agree)."""
        raise NotImplementedError

    # -- the engine interface ------------------------------------------------------------------

    def apply(self, move: int) -> tuple[Any, Pending]:
        before = self.pending
        touched = self._touch(move)
        after = before
        if before:
            after = tuple(p for p in before if not any(x in touched for x in p[1:]))
        if self._deferrable(move):
            after += ((move, *touched),)
        record = self._apply(move)
        self.pending = after
        return record, before

    def undo(self, record: tuple[Any, Pending]) -> None:
        raw, before = record
        self._undo(raw)
        self.pending = before

    def key(self) -> bytes:
        key = self._key()
        if self.pending:
            code = self._code
            key += b"\xfd" + b"\xfc".join(
                b"\xfb".join([p[0].to_bytes(4, "big"), *[code(x) for x in p[1:]]])
                for p in self.pending)
        return key

    def moves(self) -> list[int]:
        pending = self.pending
        if not pending:
            return self._moves(True)
        last = pending[-1]
        last_move, last_piles = last[0], last[1:]
        out: list[int] = []
        touch, deferrable = self._touch, self._deferrable
        for m in self._moves(False):
            if self._repeats(last_move, m):
                continue
            touched = touch(m)
            if deferrable(m):
                if m < last_move and not any(x in touched for x in last_piles):
                    continue  # independent of the last one: one order is enough
                out.append(m)
            elif all(any(x in touched for x in p[1:]) for p in pending):
                out.append(m)
        return out
