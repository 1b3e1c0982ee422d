"""Post-race analyses, worked out once per racer after the reveal and kept.

``GET /api/races/{race}/analysis/{player}`` asks :meth:`Analyst.ask`. The route checks first
that the deal is revealed (an analysis says whether positions could be won: before the reveal
that would tell the racers about the deal, and a daily deal stays secret until its day is
over); then the analysis is either kept already (the report), being worked out (the client is
told to ask again), or started now. Asking for an analysis someone else started costs nothing:
the two share it.

**Admission.** An analysis started is worked on at once: its positions wait in the solver's
queue in fair shares of the solver's time by client address, and within an address by the
player who asked (:mod:`solrace.solver.fair_queue`), so a newcomer's analysis is not held up
until the others end, only slowed by the share each of them has. What the process holds is
bounded: :data:`ANALYSES_PER_ADDRESS` analyses per address (one more is not started: ``busy``)
and :data:`MAX_ANALYSES` in all, whose last fifth is kept for addresses that hold none
(:func:`solrace.core.quotas.refusal`: ``full``); a client not started is told to ask again.

An analysis is a :class:`~solrace.solver.analysis.Review` driven here: each position it wants
solved is one job of the solver's process (:meth:`Solver.position`), with its own budget
(:data:`ANALYSIS_NODES` nodes, :data:`ANALYSIS_POSITION_SECONDS`); the review spends at most
:data:`ANALYSIS_SOLVES` of them and :data:`ANALYSIS_SECONDS` of solver time, then reports what
it could not decide as unknown. The event loop only does the bookkeeping (microseconds per
position). A server without a solver reports the thinks and the moves, and every position
unknown.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solrace.core.quotas import refusal
from solrace.runtime.supervisor import Supervisor
from solrace.settings import (
    ANALYSES_KEPT,
    ANALYSES_PER_ADDRESS,
    ANALYSIS_NODES,
    ANALYSIS_POSITION_SECONDS,
    ANALYSIS_SECONDS,
    ANALYSIS_SOLVES,
    MAX_ANALYSES,
)
from solrace.solver.analysis import Review, accuracy, moves_summary, thinks

if TYPE_CHECKING:
    from solrace.core.race import Race
    from solrace.solver.jobs import Solver

log = logging.getLogger(__name__)

Key = tuple[str, str]  # race, player


@dataclass
class Work:
    """What an analysis needs of its race, copied when it starts (plain data)."""

    race: Race
    player: str
    game: str
    seed: int
    actions: list[str]
    times: list[int]  # race times of each action (ms since the start)
    address: str  # who asked: his client address ...
    line: str = ""  # ... and his player id there ("": the address's own line)


class Analyst:
    """See the module docstring."""

    def __init__(self, solver: Solver | None, supervisor: Supervisor, *,
                 limit: int = MAX_ANALYSES, per_address: int = ANALYSES_PER_ADDRESS,
                 solves: int = ANALYSIS_SOLVES, seconds: float = ANALYSIS_SECONDS,
                 nodes: int = ANALYSIS_NODES,
                 position_seconds: float = ANALYSIS_POSITION_SECONDS) -> None:
        self.solver = solver
        self.supervisor = supervisor
        self.limit = limit
        self.per_address = per_address
        self.solves = solves
        self.seconds = seconds
        self.nodes = nodes
        self.position_seconds = position_seconds
        self.done: OrderedDict[Key, dict[str, Any]] = OrderedDict()
        self.running: dict[Key, asyncio.Task[None]] = {}
        self.by_address: dict[str, int] = {}

    def known(self, race: str, player: str) -> tuple[str, dict[str, Any] | None] | None:
        """``("done", report)``, ``("computing", None)``, or None: not asked yet."""
        key = (race, player)
        report = self.done.get(key)
        if report is not None:
            self.done.move_to_end(key)
            return "done", report
        if key in self.running:
            return "computing", None
        return None

    def ask(self, race: Race, player: str, address: str, requester: str | None = None
            ) -> tuple[str, dict[str, Any] | None]:
        """The analysis of ``player`` in ``race`` (revealed: the caller checked):
        ``("done", report)``, ``("computing", None)`` (started now or earlier: ask again),
        ``("busy", None)`` (not started: this address has its share being worked out) or
        ``("full", None)`` (not started: the process has as many as it takes). Started, its
        positions take their turns in the share of ``address``, and within it of
        ``requester`` (the player id of who asks; None: the address's own line)."""
        known = self.known(race.race, player)
        if known is not None:
            return known
        why = refusal(self.by_address.get(address, 0), len(self.running), self.limit,
                      self.per_address)
        if why == "share":
            return "busy", None
        if why is not None:
            return "full", None
        key = (race.race, player)
        racer = race.racers[player]
        start = race.started_at or 0
        work = Work(race, player, race.game, race.seed, list(racer.actions),
                    [t - start for t in racer.times], address, requester or "")
        self.by_address[address] = self.by_address.get(address, 0) + 1
        task = self.supervisor.spawn(self._work(key, work), f"analysis {race.race}/{player}")
        self.running[key] = task
        task.add_done_callback(lambda _: self._ended(key, address))
        return "computing", None

    def _ended(self, key: Key, address: str) -> None:
        self.running.pop(key, None)
        left = self.by_address.get(address, 0) - 1
        if left > 0:
            self.by_address[address] = left
        else:
            self.by_address.pop(address, None)

    async def _work(self, key: Key, work: Work) -> None:
        report = await self.review(work)
        self.done[key] = report
        self.done.move_to_end(key)
        while len(self.done) > ANALYSES_KEPT:
            self.done.popitem(last=False)

    async def review(self, work: Work) -> dict[str, Any]:
        """Run the review of ``work`` through the solver's process; the report."""
        race = work.race
        deal = (race.par or {}).get("verdict")
        review = Review(work.actions, self.solves if self.solver is not None else 0, deal)
        spent = 0.0
        gen = review.run()
        try:
            i = next(gen)
            while True:
                left = self.seconds - spent
                if self.solver is None or left <= 0:
                    review.stop()
                    i = gen.send(("unknown", ()))
                    continue
                answer = await self.solver.position(
                    work.game, work.seed, work.actions[:i], self.nodes,
                    min(self.position_seconds, left), work.address, work.line)
                spent += float(answer.get("seconds") or 0.0)
                i = gen.send((answer["verdict"], answer.get("line") or ()))
        except StopIteration:
            pass
        return report(work, review, spent)


def report(work: Work, review: Review, spent: float) -> dict[str, Any]:
    """The body of ``GET /api/races/{race}/analysis/{player}`` (docs/protocol.md)."""
    race = work.race
    racer = race.racers[work.player]
    verdicts = review.verdicts
    losses = review.losses()
    for loss in losses:  # when in the race (ms since the start)
        loss["time"] = work.times[loss["at"] - 1] if loss["at"] <= len(work.times) else None
    return {
        "race": race.race, "player": work.player, "name": racer.name, "game": work.game,
        "actions": len(work.actions),
        "deal": review.verdict_at(0),
        "end": review.verdict_at(len(work.actions)),
        "verdicts": verdicts,
        "lost_at": losses[0] if losses else None,
        "losses": losses,
        "thinks": thinks(work.actions, work.times),
        "moves": moves_summary(work.actions, verdicts, race.par,
                               racer.finished_at is not None),
        "accuracy": accuracy(work.actions, verdicts, race.par, racer.finished_at is not None),
        "solves": review.solved,
        "solver_seconds": round(spent, 3),
        "incomplete": review.incomplete,
    }
