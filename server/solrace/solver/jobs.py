"""The solver service: hints, par and post-race analyses, worked out in a separate process.

:class:`Solver` owns one worker process (:mod:`solrace.solver.worker`, started when first needed,
at a lower priority) and feeds it one job at a time, in the order of its
:class:`~solrace.solver.fair_queue.FairQueue`: hints first, in turns by client address and
racer; then par; then the positions of post-race analyses (:mod:`solrace.solver.analyst`, one
position at a time per analysis; and the fair-play referee's re-solves, under the client
``fair-play``: :mod:`solrace.service.fairplay`), in fair shares of the worker's time by address
and player, with one position at least every :data:`~solrace.settings.ANALYSIS_TURN` + 1 jobs
while one waits. A hint waits for at most one position's budget. What each job took of the
worker's time is measured here and charged to its line; :attr:`Solver.served` keeps the last
jobs done. Each job has a budget (nodes and seconds), so a job's CPU is bounded; the queue is
bounded too (a hint asked when it is full gets ``unavailable``; a par that does not fit is left
unknown; an analysis holds one position in it, and analyses are bounded per address by the
analyst). A worker that dies or overruns its budget by far is killed and started again, and its
job answered with an error: the server never waits on it for long.

Par (the solver's line length for a deal, "unwinnable" when proved lost) is cached per deal;
a deal drawn from the catalogue of winnable deals has its par already (see
:mod:`solrace.solver.deal_source`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import struct
import sys
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import solrules

from solrace.runtime.supervisor import Supervisor
from solrace.settings import (
    DEADLINE_MARGIN,
    HINT_NODES,
    HINT_SECONDS,
    MAX_PARS,
    MAX_PARS_WAITING,
    MAX_WAITING_CLIENTS,
    MIN_DEADLINE_SECONDS,
    MIN_HINT_SECONDS,
    PAR_NODES,
    PAR_SECONDS,
    SOLVER_GRACE,
    SOLVER_HISTORY,
    SOLVER_NICE,
)
from solrace.solver.fair_queue import FairQueue

log = logging.getLogger(__name__)

Par = dict[str, Any]  # {"verdict": "won", "moves": 93} | {"verdict": "lost" | "unknown"}


Job = tuple[dict[str, Any], "asyncio.Future[dict[str, Any]]"]


@dataclass(frozen=True, slots=True)
class Served:
    """A job the worker did: its kind (``hint``, ``par``, ``solve``), the client address and
    player it was asked for, and the seconds it took the worker."""

    kind: str
    client: str
    player: str
    seconds: float


class SolverBusy(Exception):
    """The queue is full: try again later."""


class Solver:
    """See the module docstring. ``hint_seconds``/``par_seconds`` are the time budgets of one
    job (0 turns that kind of job off); the node budgets keep a job's result the same on any
    machine when it ends within its time."""

    def __init__(
        self,
        hint_seconds: float = HINT_SECONDS,
        par_seconds: float = PAR_SECONDS,
        hint_nodes: int = HINT_NODES,
        par_nodes: int = PAR_NODES,
        nice: int = SOLVER_NICE,
        supervisor: Supervisor | None = None,
    ) -> None:
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        self.hint_seconds = hint_seconds
        self.par_seconds = par_seconds
        self.hint_nodes = hint_nodes
        self.par_nodes = par_nodes
        self.nice = nice
        self.pars: OrderedDict[tuple[str, int], Par] = OrderedDict()
        self._waiting_par: dict[tuple[str, int], list[Callable[[Par], None]]] = {}
        self._queue: FairQueue[Job] = FairQueue()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self.jobs_done = 0
        #: The jobs done last, newest last (see :class:`Served`).
        self.served: deque[Served] = deque(maxlen=SOLVER_HISTORY)

    @property
    def hints_on(self) -> bool:
        return self.hint_seconds > 0

    # ------------------------------------------------------------------ jobs
    async def hint(self, game: str, seed: int, actions: list[str], key: str, rng: int,
                   client: str = "", deadline: float | None = None,
                   line: bool = False) -> dict[str, Any]:
        """A move for a racer (see :func:`solrace.solver.worker.hint`): ``{"move", "source",
        "lost"}``. ``client`` (an address) is the line it waits in, ``key`` (the racer: race
        and player) its line within the address's (see
        :class:`~solrace.solver.fair_queue.FairQueue`). Raises :class:`SolverBusy` when too
        many clients wait.

        ``deadline`` (the event loop's time): when the answer is needed (a house bot's next
        move). The search then gets at most the time left when its turn comes, less
        :data:`~solrace.settings.DEADLINE_MARGIN`; a job whose turn comes with less than
        :data:`~solrace.settings.MIN_DEADLINE_SECONDS` left is not run, and one still waiting
        then raises :class:`SolverBusy` then and there: an answer after the deadline is worth
        nothing to a bot, and running it would only make the next bot late too. ``line``:
        the answer holds the winning line from here too (``"line"``, its move first) when one
        was found: a house bot's question, never a racer's hint."""
        if not self._queue.hints.waiting(client) \
                and self._queue.clients() >= MAX_WAITING_CLIENTS:
            raise SolverBusy("the solver is busy")
        job = {"k": "hint", "g": game, "s": str(seed), "a": actions, "p": key,
               "n": self.hint_nodes, "t": self.hint_seconds, "r": rng}
        if line:
            job["l"] = True
        future = self._future()
        if deadline is not None:
            job["d"] = deadline
            self._expire(job, future, deadline)
        self._queue.add_hint(client, (job, future), key)
        self._kick()
        answer = await future
        if "error" in answer:
            raise SolverBusy(answer["error"])
        return answer

    def hint_budget(self, job: dict[str, Any]) -> None:
        """Share the solver's time when many clients wait: a hint gets the full budget when it
        is alone, and ``hint_seconds / n`` (at least MIN_HINT_SECONDS) when n clients wait,
        so that the last of them is answered within about one full budget."""
        waiting = 1 + self._queue.clients()
        if waiting > 1:
            share = max(MIN_HINT_SECONDS, self.hint_seconds / waiting)
            job["t"] = min(job["t"], share)
            job["n"] = max(1000, int(job["n"] * job["t"] / self.hint_seconds))

    @staticmethod
    def _expire(job: dict[str, Any], future: asyncio.Future[dict[str, Any]],
                deadline: float) -> None:
        """Answer a job still waiting when too little is left before its deadline to run it
        (``"d"`` goes when it starts), then and there: its asker can do without at once."""
        def expire() -> None:
            if "d" in job and not future.done():
                future.set_result({"error": "too late for its deadline"})

        loop = asyncio.get_running_loop()
        timer = loop.call_at(deadline - DEADLINE_MARGIN - MIN_DEADLINE_SECONDS, expire)
        future.add_done_callback(lambda _: timer.cancel())

    def within_deadline(self, job: dict[str, Any], now: float) -> bool:
        """Cut a job with a deadline (``"d"``) to the time left before it; False if too
        little is left to run it at all (see :meth:`hint`)."""
        deadline = job.pop("d", None)
        if deadline is None:
            return True
        left = float(deadline) - now - DEADLINE_MARGIN
        if left < MIN_DEADLINE_SECONDS:
            return False
        if left < job["t"]:
            job["n"] = max(1000, int(job["n"] * left / job["t"]))
            job["t"] = left
        return True

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id while it runs (None before the first job)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    def par(self, game: str, seed: int, then: Callable[[Par], None]) -> Par | None:
        """The par of a deal if known; else None, and ``then(par)`` is called once it is (not
        at all if par is off or the queue is full)."""
        key = (game, seed)
        known = self.pars.get(key)
        if known is not None:
            return known
        if self.par_seconds <= 0:
            return None
        waiting = self._waiting_par.get(key)
        if waiting is not None:
            waiting.append(then)
            return None
        if len(self._queue.pars) >= MAX_PARS_WAITING:
            return None
        self._waiting_par[key] = [then]
        job = {"k": "par", "g": game, "s": str(seed), "n": self.par_nodes,
               "t": self.par_seconds}
        future = self._future()
        self._queue.add_par((job, future))
        self._kick()
        future.add_done_callback(lambda f: self._par_done(key, f))
        return None

    async def solve(self, game: str, seed: int) -> Par:
        """Solve a deal now (with the par budget), whatever is known of it: ``{"verdict",
        "moves"?}``, or ``{"verdict": "unknown"}`` if the job failed. For the pool of winnable
        deals, which runs a solver of its own."""
        job = {"k": "par", "g": game, "s": str(seed), "n": self.par_nodes,
               "t": self.par_seconds}
        future = self._future()
        self._queue.add_par((job, future))
        self._kick()
        answer = await future
        if "error" in answer:
            return {"verdict": "unknown"}
        return {k: answer[k] for k in ("verdict", "moves") if k in answer}

    async def line(self, game: str, seed: int) -> tuple[list[str], int] | None:
        """The solver's winning line from the deal (every card known, the par budget), and the
        nodes its search took, at par's turn: the fair-play signals of a finished result hold
        the racer's moves against it (:mod:`solrace.service.fairplay`, which shares it among
        the deal's results). None when the deal is not won within the budget; its par is
        remembered either way."""
        job = {"k": "solve", "g": game, "s": str(seed), "a": [], "n": self.par_nodes,
               "t": self.par_seconds}
        future = self._future()
        self._queue.add_par((job, future))
        self._kick()
        answer = await future
        verdict = answer.get("verdict")
        line = list(answer.get("line") or ())
        if "error" in answer or verdict not in ("won", "lost"):
            return None
        self.remember(game, seed, {"verdict": "won", "moves": len(line)} if verdict == "won"
                      else {"verdict": "lost"})
        return (line, int(answer.get("nodes") or 0)) if verdict == "won" else None

    async def position(self, game: str, seed: int, actions: list[str], nodes: int,
                       seconds: float, client: str = "", player: str = "") -> dict[str, Any]:
        """Solve the position after ``actions`` (every card known) when its turn comes: in
        the share of the solver's time of ``client`` (an address), and within it of
        ``player`` (see :class:`~solrace.solver.fair_queue.FairQueue`): ``{"verdict", "line"
        (won), "nodes", "seconds"}``, or ``{"verdict": "unknown", "error"}`` if the job
        failed. For post-race analyses."""
        job = {"k": "solve", "g": game, "s": str(seed), "a": actions, "n": nodes,
               "t": seconds}
        future = self._future()
        self._queue.add_analysis((job, future), client, player)
        self._kick()
        answer = await future
        if "error" in answer:
            return {"verdict": "unknown", "error": answer["error"], "nodes": 0,
                    "seconds": seconds}
        return answer

    def remember(self, game: str, seed: int, par: Par) -> None:
        self.pars[game, seed] = par
        self.pars.move_to_end((game, seed))
        while len(self.pars) > MAX_PARS:
            self.pars.popitem(last=False)

    def _par_done(self, key: tuple[str, int], future: asyncio.Future[dict[str, Any]]) -> None:
        callbacks = self._waiting_par.pop(key, [])
        if future.cancelled() or future.exception() is not None:
            return
        answer = future.result()
        if "error" in answer:
            return
        par: Par = {"verdict": answer["verdict"]}
        if "moves" in answer:
            par["moves"] = answer["moves"]
        self.remember(key[0], key[1], par)
        for then in callbacks:
            try:
                then(par)
            except Exception:
                log.exception("par callback failed")

    @staticmethod
    def _future() -> asyncio.Future[dict[str, Any]]:
        return asyncio.get_running_loop().create_future()

    def _kick(self) -> None:
        """Make sure the task feeding the worker runs, and wake it."""
        if self._task is None or self._task.done():
            self._wake = asyncio.Event()
            self._task = self.supervisor.spawn(self._run(), "feed the solver")
        assert self._wake is not None
        self._wake.set()

    # ---------------------------------------------------------------- worker
    async def _run(self) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            popped = self._queue.pop()
            while popped is None:
                self._wake.clear()
                await self._wake.wait()
                popped = self._queue.pop()
            job, future = popped
            if future.done():  # its asker is gone
                continue
            if job["k"] == "hint":
                self.hint_budget(job)
                if not self.within_deadline(job, loop.time()):
                    self._queue.charge(0.0)
                    future.set_result({"error": "too late for its deadline"})
                    await asyncio.sleep(0)
                    continue
            _, client, player = self._queue.last or ("", "", "")
            started: float | None = None
            try:
                proc = await self._worker()
                started = loop.time()  # (a worker's start is nobody's share)
                answer = await self._ask(proc, job)
            except Exception as exc:
                log.warning("solver job failed: %s", exc)
                await self._kill()
                answer = {"error": "the solver failed on this position"}
            took = loop.time() - started if started is not None else 0.0
            self._queue.charge(took)
            self.served.append(Served(job["k"], client, player, took))
            self.jobs_done += 1
            if not future.done():
                future.set_result(answer)
                # Let the asker run before the next pop: a review asks its next position at
                # once, and should wait in line with its share (not behind the next job).
                await asyncio.sleep(0)

    async def _ask(self, proc: asyncio.subprocess.Process, job: dict[str, Any]
                   ) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        job["q"] = self.jobs_done
        body = msgpack.packb(job)
        proc.stdin.write(struct.pack(">I", len(body)) + body)
        await proc.stdin.drain()
        async with asyncio.timeout(float(job["t"]) + SOLVER_GRACE):
            head = await proc.stdout.readexactly(4)
            (size,) = struct.unpack(">I", head)
            answer: dict[str, Any] = msgpack.unpackb(await proc.stdout.readexactly(size),
                                                     raw=False)
        return answer

    async def _worker(self) -> asyncio.subprocess.Process:
        if self._proc is not None and self._proc.returncode is None:
            return self._proc
        # The worker imports solrace and solrules from wherever this process found them.
        paths = {str(Path(solrules.__file__).parent.parent),
                 str(Path(__file__).resolve().parents[2])}
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([*sorted(paths), env.get("PYTHONPATH", "")])
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "solrace.solver.worker", str(self.nice),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
            limit=1 << 24,
        )
        return self._proc

    async def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await proc.wait()

    async def stop(self) -> None:
        """:meth:`close`, then wait for the worker to be gone."""
        proc = self._proc
        self.close()
        if proc is not None:
            with contextlib.suppress(Exception):
                await proc.wait()

    def close(self) -> None:
        """Stop at once: the worker is killed, waiting jobs are dropped."""
        if self._task is not None:
            self._task.cancel()
        for _, future in self._queue.drain():
            if not future.done():
                future.cancel()
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
