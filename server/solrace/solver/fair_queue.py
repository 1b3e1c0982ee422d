"""The solver's waiting room: whose job the one worker takes next. Pure bookkeeping: no I/O,
no clock (what a job cost is told after it ran).

Three kinds of job wait (:class:`FairQueue`):

- **Hints**, a racer waiting for each: served first, in turns by client address, and within
  an address in turns by racer (:class:`Lines` with one turn as the cost of each hint): a
  client with twenty hints waiting gets one turn per round like a client with one, and two
  players behind one address (a club, a household) each get theirs.
- **Par** of a revealed deal: nobody waits for it; after the hints, oldest first.
- **Positions of post-race analyses**: in fair shares of the solver's *time*, by client
  address, and within an address by player (:class:`Lines` charged with each position's
  seconds). A position costs from a millisecond to its whole budget (a hard position of a
  hard deal, thousands of times more), so turns would not be fair: an address whose positions
  each take the whole budget would hold everyone else's cheap ones back by that much per turn.
  Instead the line that has had the least of the solver's time goes next, and a line that
  starts waiting is brought level with the lines already waiting (it saved nothing up while
  it did not wait). So a newcomer's first position goes next (after the one in the worker,
  and at most one of each line that started waiting at the same moment), and while n
  addresses wait each gets a share of at least 1/n of the worker's time: an address with
  eight analyses of long races gets the same share as one with a single short one, and the
  short one, needing little, is done after little.

Hints go first, but not for ever: after :data:`~solrace.settings.ANALYSIS_TURN` jobs of hints
or par in a row while a position of an analysis waited, the next job is that position. A
flood of hints from many addresses slows analyses down to one job in ``ANALYSIS_TURN + 1``;
it cannot stop them, and a hint waits behind at most one position (one position's budget).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from itertools import count
from typing import Generic, TypeVar

from solrace.settings import ANALYSIS_TURN

T = TypeVar("T")

#: Lines remembered after they stopped waiting, at most (their tags keep a line that comes
#: straight back from jumping ahead; past this the ones with the least to remember go).
MAX_IDLE_LINES = 4096


class Lines:
    """Keys (lines) taking turns at one server, fairly by what each turn cost.

    Start-time fair queuing: each line waiting has a *tag*, the server's share of time it has
    had so far in a common unit (the *virtual time*); the line with the smallest tag goes next
    (ties: the one that has waited longest), and its tag then grows by what that turn cost. A
    line that begins waiting gets the tag of the line served last, or its own if that is
    larger (a line that waited a moment between two turns, as an analysis does between two
    positions, does not jump ahead). With the cost of a turn 1 this is plain round robin.
    """

    def __init__(self) -> None:
        self.virtual = 0.0  # the tag of the line served last
        self.waiting: dict[str, tuple[float, int]] = {}  # line: (tag, since)
        self.finish: dict[str, float] = {}  # line: its tag after its last turn
        self.serving: tuple[str, float] | None = None  # the line in its turn, and its tag
        self._since = count()

    def __len__(self) -> int:
        return len(self.waiting)

    def __contains__(self, line: str) -> bool:
        return line in self.waiting

    def wake(self, line: str) -> None:
        """``line`` has something waiting (nothing if it waits already or is in its turn: it
        is put back in the line when the turn ends)."""
        if line in self.waiting or (self.serving is not None and self.serving[0] == line):
            return
        tag = max(self.virtual, self.finish.pop(line, self.virtual))
        self.waiting[line] = (tag, next(self._since))

    def take(self) -> str:
        """The line whose turn it is (IndexError if none waits); :meth:`done` ends the turn."""
        if not self.waiting:
            raise IndexError("no line waits")
        if self.serving is not None:
            self.done(0.0, False)
        line = min(self.waiting, key=self.waiting.__getitem__)
        tag, _ = self.waiting.pop(line)
        self.virtual = tag
        self.serving = (line, tag)
        return line

    def done(self, cost: float, more: bool) -> None:
        """The turn cost ``cost``; ``more``: the line has something waiting still."""
        if self.serving is None:
            return
        line, tag = self.serving
        self.serving = None
        finish = tag + max(0.0, cost)
        if more:
            self.waiting[line] = (finish, next(self._since))
        elif finish > self.virtual:
            self.finish[line] = finish
        self._forget()

    def _forget(self) -> None:
        """Drop what no line needs remembered: a finish tag the virtual time has reached
        (the line would get the virtual time anyway), and past MAX_IDLE_LINES the smallest."""
        if len(self.finish) <= MAX_IDLE_LINES // 2:
            return
        self.finish = {k: v for k, v in self.finish.items() if v > self.virtual}
        if len(self.finish) > MAX_IDLE_LINES:
            keep = sorted(self.finish.items(), key=lambda kv: kv[1])[-MAX_IDLE_LINES:]
            self.finish = dict(keep)


class FairLines(Generic[T]):
    """Items waiting in lines by client (an address), and within a client by player, each
    level shared by :class:`Lines`: a client with many players waiting gets one client's
    share, and shares it among them."""

    def __init__(self) -> None:
        self.clients = Lines()
        self.players: dict[str, Lines] = {}
        self.items: dict[tuple[str, str], deque[T]] = {}
        self.per_client: dict[str, int] = {}  # items waiting, by client
        self.serving: tuple[str, str] | None = None

    def __len__(self) -> int:
        return sum(self.per_client.values())

    def __bool__(self) -> bool:
        return bool(self.per_client)

    def waiting(self, client: str) -> int:
        """Items of ``client`` waiting."""
        return self.per_client.get(client, 0)

    def add(self, client: str, player: str, item: T) -> None:
        self.items.setdefault((client, player), deque()).append(item)
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.players.setdefault(client, Lines()).wake(player)
        self.clients.wake(client)

    def pop(self) -> tuple[str, str, T]:
        """The next item, with its client and player (IndexError if none waits); then
        :meth:`charge` what it cost."""
        if self.serving is not None:
            self.charge(0.0)
        client = self.clients.take()
        player = self.players[client].take()
        queue = self.items[client, player]
        item = queue.popleft()
        if not queue:
            del self.items[client, player]
        left = self.per_client[client] - 1
        if left:
            self.per_client[client] = left
        else:
            del self.per_client[client]
        self.serving = (client, player)
        return client, player, item

    def charge(self, cost: float) -> None:
        """What the item popped last cost (a turn, or seconds of the worker's time)."""
        if self.serving is None:
            return
        client, player = self.serving
        self.serving = None
        players = self.players[client]
        players.done(cost, (client, player) in self.items)
        self.clients.done(cost, client in self.per_client)
        if client not in self.per_client and client not in self.clients.finish:
            # Nothing waits and its share is even with the others': its players' shares
            # within it no longer matter either.
            del self.players[client]
        if len(self.players) > 2 * (len(self.per_client) + len(self.clients.finish)) + 16:
            # (Clients whose remembered share Lines has since let go of.)
            self.players = {c: p for c, p in self.players.items()
                            if c in self.per_client or c in self.clients.finish}

    def drain(self) -> Iterator[T]:
        for queue in self.items.values():
            yield from queue
        self.items.clear()
        self.per_client.clear()
        self.players.clear()
        self.clients = Lines()
        self.serving = None


class FairQueue(Generic[T]):
    """The jobs waiting for the solver's worker (see the module docstring)."""

    def __init__(self, analysis_turn: int = ANALYSIS_TURN) -> None:
        self.hints: FairLines[T] = FairLines()
        self.pars: deque[T] = deque()
        self.analyses: FairLines[T] = FairLines()
        self.analysis_turn = analysis_turn
        self.streak = 0  # hints and par served in a row while an analysis waited
        self.last: tuple[str, str, str] | None = None  # kind, client, player of the last pop

    def __len__(self) -> int:
        return len(self.hints) + len(self.pars) + len(self.analyses)

    def clients(self) -> int:
        """Clients with a hint waiting."""
        return len(self.hints.per_client)

    def add_hint(self, client: str, job: T, player: str = "") -> None:
        self.hints.add(client, player, job)

    def add_par(self, job: T) -> None:
        self.pars.append(job)

    def add_analysis(self, job: T, client: str = "", player: str = "") -> None:
        self.analyses.add(client, player, job)

    def pop(self) -> T | None:
        """The next job (None if nothing waits); then :meth:`charge` its cost."""
        self.analyses.charge(0.0)  # a job popped and never charged cost nothing
        if self.analyses and (self.streak >= self.analysis_turn
                              or not (self.hints or self.pars)):
            self.streak = 0
            client, player, job = self.analyses.pop()
            self.last = ("analysis", client, player)
            return job
        self.streak = self.streak + 1 if self.analyses else 0
        if self.hints:
            client, player, job = self.hints.pop()
            self.hints.charge(1.0)  # hints take turns: each costs one
            self.last = ("hint", client, player)
            return job
        if self.pars:
            self.last = ("par", "", "")
            return self.pars.popleft()
        self.streak = 0
        self.last = None
        return None

    def charge(self, seconds: float) -> None:
        """The worker's time the job popped last took (only an analysis's counts)."""
        self.analyses.charge(seconds)

    def drain(self) -> list[T]:
        jobs = [*self.hints.drain(), *self.pars, *self.analyses.drain()]
        self.pars.clear()
        return jobs
