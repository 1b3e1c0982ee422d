"""Post-race analysis of one racer: where the deal was lost, his longest thinks, the moves the
solver would not have needed. Pure bookkeeping (no I/O, no clock): :class:`Review` says which
positions to solve, is told the verdicts, and writes the report; :mod:`solrace.solver.analyst`
has the solves done in the solver's process.

**Winnability** here is the thoughtful kind: can the deal still be won from this position,
knowing every card (after the reveal every card is known; in Scotch it is the game itself)?
The solver answers ``won`` (with a winning line), ``lost`` (proved) or ``unknown`` (not within
its budget).

**Positions as a tree.** A racer's actions are moves and undos; an undo returns to the exact
position before the last move. So the positions he visited form a tree: the deal at the root, a
move goes to a child (the same move from the same position is the same child, however often it
is played again), an undo to the parent. Winnability is monotone on it: every position reached
from a lost one is lost, every position leading to a won one is won. One verdict therefore
decides many positions — a lost position all the positions below it, a won one every position
above it (and the positions of the solver's winning line that the racer also visited).

**Which positions are solved.** The actions are cut into *runs*, maximal stretches of moves
with no undo (each run walks down one path of the tree). For each run in order its last position
is solved, unless already decided. If it is lost, the position the run started from is solved
(if it is not decided yet) and the first lost position of the run is found by bisection along
it: about log2(length) solves. A position the solver leaves ``unknown`` is stepped over (the
search goes on beside it, up to :data:`BISECT_UNKNOWNS` of them), and the loss is then reported
as found between the last position proved winnable and the first proved lost. An undo only
returns to a position visited before, so the first lost position the racer reached is always
reached by a move. The whole review has a
budget of solves (:data:`solrace.settings.ANALYSIS_SOLVES`); past it, what is not decided stays
``unknown`` and the report says it is incomplete.

**The coach.** Every position proved won is proved by a winning line: the solver's from a
position it solved, the rest of that line from a position of the racer's along it, or a move
down to a won child. So the last winnable position before a loss has a line that wins from it,
with no solve more (only the deal, when its verdict came from par, may need one): its first
move is the ``best``, a move that kept the deal winnable where the racer's lost it (never his
move: had his been on a winning line, his next position would be proved won). The
**accuracy** is the share of his moves from a position proved won after which it was still
proved won, among those whose outcome was decided.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

Verdict = str  # "won" | "lost" | "unknown"

#: Longest thinks reported.
THINKS = 3
#: Losses whose winning line is reported (the first ones; every loss has its better move): a
#: line is up to a few hundred moves, and a racer may lose and take back the same move 5,000
#: times. Keeps a kept report to a few KB (settings.ANALYSES_KEPT).
LINES = 4
#: Positions left unknown after which a bisection stops narrowing (the solver finds the
#: positions around a hard one hard too: each more costs a full budget, and rarely decides).
BISECT_UNKNOWNS = 3


class Tree:
    """The positions of a racer's actions as a tree (see the module docstring). ``node[i]`` is
    the node of the position after ``i`` actions; node 0 is the deal."""

    def __init__(self, actions: Sequence[str]) -> None:
        self.parent: list[int] = [-1]
        self.children: list[dict[str, int]] = [{}]
        self.move: list[str] = [""]  # the move from the parent
        self.first: list[int] = [0]  # the first index at which the racer stood there
        self.node: list[int] = [0]
        here = 0
        for i, action in enumerate(actions, 1):
            if action == "undo":
                here = max(0, self.parent[here])
            else:
                child = self.children[here].get(action)
                if child is None:
                    child = len(self.parent)
                    self.parent.append(here)
                    self.children.append({})
                    self.move.append(action)
                    self.first.append(i)
                    self.children[here][action] = child
                here = child
            self.node.append(here)

    def descendants(self, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(self.children[n].values())
        return out


class Review:
    """Which positions of a racer's line to solve, and what their verdicts prove.

    Drive it with :meth:`run`: a generator that yields the index (actions played) of the next
    position to solve and is sent back ``(verdict, line)``; when it stops, :attr:`verdicts`
    holds each index's verdict and :meth:`report` the findings.
    """

    def __init__(self, actions: Sequence[str], solves: int, deal: Verdict | None = None
                 ) -> None:
        self.actions = list(actions)
        self.tree = Tree(self.actions)
        self.solves_left = solves
        self.solved = 0
        self.coached = 0  # of them, solves for a better move alone (bench/analysis_bench.py)
        n = len(self.tree.parent)
        self.known: list[Verdict | None] = [None] * n  # proved (won/lost), by node
        self.asked: list[bool] = [False] * n
        # A winning line from each node that has one from a solve (see "The coach").
        self.lines: dict[int, tuple[str, ...]] = {}
        if deal in ("won", "lost"):  # the deal's par, known already
            self._tell(0, deal, ())

    def stop(self) -> None:
        """Spend no more solves (the review's time is up)."""
        self.solves_left = 0

    # -------------------------------------------------------------- inference
    def _won(self, node: int) -> None:
        while node >= 0 and self.known[node] is None:
            self.known[node] = "won"
            node = self.tree.parent[node]

    def _lost(self, node: int) -> None:
        for n in self.tree.descendants(node):
            if self.known[n] is None:
                self.known[n] = "lost"

    def _tell(self, node: int, verdict: Verdict, line: Sequence[str]) -> None:
        self.asked[node] = True
        if verdict == "lost":
            self._lost(node)
        elif verdict == "won":
            # The racer's positions along the solver's winning line are won too.
            deepest, line = node, tuple(line)
            if line:
                self.lines[node] = line
            for k, text in enumerate(line, 1):
                nxt = self.tree.children[deepest].get(text)
                if nxt is None:
                    break
                deepest = nxt
                if k < len(line):
                    self.lines.setdefault(deepest, line[k:])
            self._won(deepest)

    def line_from(self, node: int) -> list[str] | None:
        """A winning line from ``node`` (proved won) that its verdicts already give: down the
        racer's won children to a position with a line of its own; None if there is none
        (the deal's verdict from par came with no line)."""
        path: list[str] = []
        while node not in self.lines:
            child = next((c for c in self.tree.children[node].values()
                          if self.known[c] == "won"), None)
            if child is None:
                return None
            path.append(self.tree.move[child])
            node = child
        return path + list(self.lines[node])

    @property
    def incomplete(self) -> bool:
        """The budget ran out with positions of the line not decided."""
        return self.solves_left <= 0 and "?" in self.verdicts

    def verdict_at(self, i: int) -> Verdict:
        return self.known[self.tree.node[i]] or "unknown"

    @property
    def verdicts(self) -> str:
        """One letter per position (``w`` won, ``l`` lost, ``?`` not decided), index 0 the deal."""
        return "".join({"won": "w", "lost": "l"}.get(self.verdict_at(i), "?")
                       for i in range(len(self.actions) + 1))

    # ---------------------------------------------------------------- search
    def run(self) -> Generator[int, tuple[Verdict, Sequence[str]], None]:
        """Yield indices to solve (see the class docstring)."""
        for start, end in self._runs():
            yield from self._ask(end)
            if self.known[self.tree.node[end]] != "lost":
                continue
            yield from self._ask(start)
            if self.known[self.tree.node[start]] == "lost":
                continue  # lost before this run: found at an earlier one
            yield from self._bisect(start, end)
        yield from self._coach()

    def _coach(self) -> Generator[int, tuple[Verdict, Sequence[str]], None]:
        """Solve the last winnable position before a loss when no line from it is known yet
        (within the budget): the better move needs one."""
        tried: set[int] = set()
        for loss in self.losses():
            at = loss["winnable_at"]
            if at is None or loss["best"] is not None or self.solves_left <= 0:
                continue
            node = self.tree.node[at]
            if node in self.lines or node in tried:  # (solved for an earlier loss)
                continue
            tried.add(node)
            self.solves_left -= 1
            self.solved += 1
            self.coached += 1
            verdict, line = yield at
            if verdict == "won" and line:
                self.lines[self.tree.node[at]] = tuple(line)

    def _runs(self) -> list[tuple[int, int]]:
        """(start, end) indices of each stretch of moves without an undo; a line with no move
        at all is one run of the deal alone."""
        runs, start = [], 0
        for i, action in enumerate(self.actions, 1):
            if action == "undo":
                if i - 1 > start:
                    runs.append((start, i - 1))
                start = i
        if len(self.actions) > start or not runs:
            runs.append((start, len(self.actions)))
        return runs

    def _ask(self, i: int) -> Generator[int, tuple[Verdict, Sequence[str]], None]:
        node = self.tree.node[i]
        if self.known[node] is not None or self.asked[node] or self.solves_left <= 0:
            return
        self.solves_left -= 1
        self.solved += 1
        verdict, line = yield self.tree.first[node]
        self._tell(node, verdict, line)

    def _bisect(self, lo: int, hi: int) -> Generator[int, tuple[Verdict, Sequence[str]], None]:
        """Narrow (lo, hi] to the first lost position: lo is not known lost, hi is lost, and
        every index between them is a move down one path."""
        unknowns = 0
        while self.solves_left > 0 and unknowns < BISECT_UNKNOWNS:
            # The indices strictly between lo and hi not asked yet, in runs of consecutive ones;
            # the middle of the longest run is asked next.
            open_ = [i for i in range(lo + 1, hi) if not self.asked[self.tree.node[i]]
                     and self.known[self.tree.node[i]] is None]
            if not open_:
                return
            blocks: list[list[int]] = [[open_[0]]]
            for i in open_[1:]:
                if i == blocks[-1][-1] + 1:
                    blocks[-1].append(i)
                else:
                    blocks.append([i])
            block = max(blocks, key=len)
            mid = block[len(block) // 2]
            yield from self._ask(mid)
            unknowns += self.known[self.tree.node[mid]] is None
            # Move the bounds as far as what is known allows.
            for i in range(lo + 1, hi):
                known = self.known[self.tree.node[i]]
                if known == "won":
                    lo = i
                elif known == "lost":
                    hi = i
                    break

    # ---------------------------------------------------------------- report
    def losses(self) -> list[dict[str, Any]]:
        """Each move after which the position was proved lost while the one before was not:
        ``at`` (the action, 1-based), ``move``, ``winnable_at`` (the last position before it on
        the racer's path proved winnable, or None), ``exact`` (the position just before was
        proved winnable: this very move lost the deal), ``recovered_at`` (the first later
        action that took him back to a position proved winnable, by undo; or None), ``best``
        (a move from the position at ``winnable_at`` that kept the deal winnable, or None when
        no line from there is known) and ``line`` (a winning line from there, ``best`` first;
        given for the first :data:`LINES` losses with a ``best``, empty for the others)."""
        tree, known = self.tree, self.known
        verdicts = self.verdicts
        # Linear in the line, however many losses it has (a racer may have 10,000 actions):
        # each node's nearest proved-winnable node above it (or itself), the next winnable
        # position after each index, and the last time the racer stood at each node.
        near = [-1] * len(tree.parent)
        for node in range(len(tree.parent)):  # a parent comes before its children
            if known[node] == "won":
                near[node] = node
            elif tree.parent[node] >= 0:
                near[node] = near[tree.parent[node]]
        next_won: list[int | None] = [None] * len(verdicts)
        following: int | None = None
        for i in range(len(verdicts) - 1, -1, -1):
            next_won[i] = following
            if verdicts[i] == "w":
                following = i
        last_at: dict[int, int] = {0: 0}
        out: list[dict[str, Any]] = []
        lines = 0
        for i in range(1, len(verdicts)):
            node = tree.node[i]
            lost_here = verdicts[i] == "l" and verdicts[i - 1] != "l" \
                and self.actions[i - 1] != "undo"
            if lost_here and not (out and (out[-1]["recovered_at"] is None
                                           or i < out[-1]["recovered_at"])):
                # (Not back to a winnable position since the last loss: not a new one.)
                above = near[tree.parent[node]]
                winnable_at = last_at.get(above) if above >= 0 else None
                line = self.line_from(above) if above >= 0 else None
                lines += bool(line)
                out.append({"at": i, "move": self.actions[i - 1], "winnable_at": winnable_at,
                            "exact": winnable_at == i - 1, "recovered_at": next_won[i],
                            "best": line[0] if line else None,
                            "line": line if line and lines <= LINES else []})
            last_at[node] = i
        return out


def accuracy(actions: Sequence[str], verdicts: str, par: dict[str, Any] | None,
             won: bool) -> dict[str, Any]:
    """How well a racer played, against the solver: ``judged`` (his moves from a position
    proved winnable whose next position was decided, won or lost), ``kept`` (those after which
    it was still winnable), ``share`` (``kept / judged``, None when nothing was judged: a deal
    lost from the start, or nothing decided), and for a racer who won, ``line`` (his line's
    length: moves kept at the end), ``par`` (the solver's line from the deal) and
    ``par_ratio`` (``line / par``: 1.0 is par, 1.25 a quarter longer; below 1 he found a
    shorter line than the solver's, which is not the shortest)."""
    judged = kept = 0
    for i, action in enumerate(actions):
        if action == "undo" or verdicts[i] != "w" or verdicts[i + 1] == "?":
            continue
        judged += 1
        kept += verdicts[i + 1] == "w"
    out: dict[str, Any] = {"judged": judged, "kept": kept,
                           "share": round(kept / judged, 3) if judged else None}
    par_moves = par.get("moves") if par and par.get("verdict") == "won" else None
    if won:
        undos = sum(1 for a in actions if a == "undo")
        line = len(actions) - 2 * undos
        out.update(line=line, par=par_moves,
                   par_ratio=round(line / par_moves, 2) if par_moves else None)
    return out


def drive(review: Review, solve_at: Callable[[int], tuple[Verdict, Sequence[str]]]) -> None:
    """Run ``review`` to its end, ``solve_at(i)`` solving the position after ``i`` actions."""
    gen = review.run()
    try:
        i = next(gen)
        while True:
            i = gen.send(solve_at(i))
    except StopIteration:
        pass


def thinks(actions: Sequence[str], times: Sequence[int], count: int = THINKS
           ) -> list[dict[str, Any]]:
    """The ``count`` longest gaps before an action (``times``: race times of each action, ms
    since the start; the first gap is from the start): ``{"at", "move", "ms", "time"}``,
    longest first (earliest first among equals)."""
    gaps: list[dict[str, Any]] = []
    before = 0
    for i, (action, at) in enumerate(zip(actions, times, strict=False), 1):
        gaps.append({"at": i, "move": action, "ms": max(0, at - before), "time": at})
        before = at
    gaps.sort(key=lambda g: (-g["ms"], g["at"]))
    return gaps[:count]


def moves_summary(actions: Sequence[str], verdicts: str, par: dict[str, Any] | None,
                  won: bool) -> dict[str, Any]:
    """The moves the solver would not have needed: ``moves`` (moves made), ``undos`` (moves
    taken back), ``kept`` (moves on his line at the end), ``par`` (the solver's line length
    from the deal, if it won), ``over_par`` (a racer who won: ``kept - par``, his detours the
    solver's line did without; may be negative, the solver's line is not the shortest), and
    ``after_loss`` (moves made from a position proved lost)."""
    undos = sum(1 for a in actions if a == "undo")
    moves = len(actions) - undos
    par_moves = par.get("moves") if par and par.get("verdict") == "won" else None
    after = sum(1 for i, a in enumerate(actions) if a != "undo" and verdicts[i] == "l")
    out: dict[str, Any] = {"moves": moves, "undos": undos, "kept": moves - undos,
                           "par": par_moves, "after_loss": after}
    if won and par_moves is not None:
        out["over_par"] = moves - undos - par_moves
    return out
