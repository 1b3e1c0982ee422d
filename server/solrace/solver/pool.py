"""The private pool of winnable deals: fresh random seeds, solved in the background, dealt once.

A race or tournament created with ``winnable: true`` must get a deal that the solver has won,
and that nobody can look up. A list shipped with the server would not do: dealing its entries
and matching the cards a racer sees at the start identifies the deal from a few cards, and its
winning line then wins every time; and since every race reveals its seed at the end, a list
that is dealt twice leaks itself. So the deals come from a pool that is never public:

- **Fresh seeds.** A background task draws 64-bit seeds with :mod:`secrets` and has them
  solved by a solver process of its own (:class:`~solrace.solver.jobs.Solver`, niced, one deal at
  a time, ``seconds`` each); the won ones go into the store with their par (the line's
  length). The store holds the pool: the SQLite file, or Redis, where every process shares it.
- **Single use.** A deal is taken out of the store atomically (one ``DELETE … RETURNING``
  transaction, one ``LPOP``): no two races, on any process, ever get the same one. Each
  process keeps a few taken deals in memory (its *reserve*) so that creating a race never
  waits for the store; the reserve of a process that dies is simply lost, never reused.
- **Water marks.** When a game's pool falls below half of ``size`` it is refilled up to
  ``size``; then the solver rests. Sizes and the refill rate are in :meth:`Pool.stats`
  (``GET /api/games``).
- **Empty.** A game with no deal ready answers ``unavailable`` (the client may try again in
  a few seconds); nothing falls back to a public list.
- **Sealed at rest.** The store never holds a deal in clear: each entry is the seed and its
  par sealed (:func:`seal_deal`, :func:`solrace.core.keys.seal`) under the master key's
  ``pool`` key, for its game, with a nonce of its own; the store keeps opaque text. An entry
  that does not open when taken (sealed under another key — a lost key, a process started with
  another one —, moved to another game's pool, altered, or a clear-text deal of an older
  version) is dropped, logged and counted (``dropped`` in :meth:`Pool.stats`), never dealt;
  the claim takes the next ones, and the refill makes up for it.

Only the I/O lives here (store calls, the solver's process, the background task); what a deal
is and who may see it is decided elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from solrace.core.keys import KEY_BYTES, NONCE_BYTES, MasterKey, SealError, seal, unseal
from solrace.runtime.supervisor import Supervisor
from solrace.settings import (
    POOL_IDLE,
    POOL_RESERVE,
    POOL_SIZE,
)
from solrace.solver.jobs import Solver
from solrace.store.base import Store

log = logging.getLogger(__name__)

#: Seconds a claim of deals from the store may take.
CLAIM_TIMEOUT = 10.0

Solve = Callable[[str, int], Awaitable[dict[str, Any]]]


def seal_deal(key: bytes, game: str, seed: int, moves: int, nonce: bytes) -> str:
    """A deal of the pool as the store keeps it: its seed (8 bytes) and par (4 bytes) sealed
    under ``key`` (the master key's ``pool`` key) for ``game``, which the tag covers (a deal
    moved into another game's pool does not open)."""
    return seal(key, b"pool:" + game.encode(),
                seed.to_bytes(8, "big") + moves.to_bytes(4, "big"), nonce)


def open_deal(key: bytes, game: str, entry: str) -> tuple[int, int]:
    """The (seed, par moves) of an entry made by :func:`seal_deal` with the same key and
    game; :class:`~solrace.core.keys.SealError` for anything else."""
    plain = unseal(key, b"pool:" + game.encode(), entry)
    if len(plain) != 12:
        raise SealError("not a deal of the pool")
    return int.from_bytes(plain[:8], "big"), int.from_bytes(plain[8:], "big")


async def first_won(game: str, solve: Solve, seeds: Iterable[int]) -> tuple[int, int] | None:
    """The first of ``seeds`` that ``solve`` (e.g. :meth:`Solver.solve`) wins, with its par
    (seed, moves); None when none is won (lost, unknown, or a failed job). Each seed is solved
    in turn, and never one more once a deal is won: a bounded ``seeds`` bounds the work (the
    daily deal draws this way when the pool has none ready)."""
    for seed in seeds:
        par = await solve(game, seed)
        if par.get("verdict") == "won" and "moves" in par:
            return seed, int(par["moves"])
    return None


@dataclass
class Tally:
    """What the refill of one game has done since the process started."""

    tried: int = 0  # deals solved
    kept: int = 0  # won, put in the pool
    seconds: float = 0.0  # spent waiting for the solver
    dropped: int = 0  # entries taken from the store that did not open: never dealt

    def as_dict(self, since: float, now: float) -> dict[str, Any]:
        minutes = max(1e-9, (now - since) / 60)
        return {"tried": self.tried, "kept": self.kept, "dropped": self.dropped,
                "kept_per_minute": round(self.kept / minutes, 2),
                "seconds_per_kept": round(self.seconds / self.kept, 3) if self.kept else None}


class Pool:
    """See the module docstring. ``solver`` None: nothing is solved here (another process,
    or an operator, fills the store), deals are only taken. ``key``: the deployment's master
    key (every process sharing the store must have the same); None: a random one, for as long
    as this object lives (a test: what it puts in the store opens for it alone)."""

    def __init__(self, store: Store, games: Iterable[str], solver: Solver | None = None,
                 size: int = POOL_SIZE, reserve: int = POOL_RESERVE,
                 clock: Callable[[], float] = time.monotonic,
                 supervisor: Supervisor | None = None, key: MasterKey | None = None) -> None:
        self.store = store
        if key is None:
            key = MasterKey(secrets.token_bytes(KEY_BYTES))
        self._key = key.derive("pool")
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        self.games = list(games)
        self.solver = solver
        self.size = size
        self.reserve_size = reserve
        self.clock = clock
        self.reserve: dict[str, deque[tuple[int, int]]] = {g: deque() for g in self.games}
        self.ready: dict[str, int] = dict.fromkeys(self.games, 0)  # in the store, last seen
        self.tally = {g: Tally() for g in self.games}
        self.filling = dict.fromkeys(self.games, False)
        self.started = clock()
        self._task: asyncio.Task[None] | None = None
        #: The refill runs until the process stops; a claim from the store is given up after
        #: CLAIM_TIMEOUT.
        self._wake = asyncio.Event()
        self._claims: dict[str, asyncio.Future[None]] = {}

    # ----------------------------------------------------------------- taking
    def available(self, game: str) -> int:
        """Deals this process can deal now, without waiting."""
        return len(self.reserve.get(game, ()))

    def take(self, game: str) -> tuple[int, int]:
        """A deal (seed, par moves) for a new race, out of the reserve (IndexError if empty:
        ask :meth:`available` first). The reserve is topped up in the background."""
        deal = self.reserve[game].popleft()
        self._wake.set()
        return deal

    async def claim(self, game: str, n: int) -> None:
        """Fill the reserve of ``game`` to ``n`` deals from the store (as many as it has).
        Concurrent claims of one game share one store call."""
        running = self._claims.get(game)
        if running is not None:
            await asyncio.shield(running)
            if self.available(game) >= n:
                return
        future = self.supervisor.spawn(self._claim(game, n), f"claim {game} deals",
                                       timeout=CLAIM_TIMEOUT)
        self._claims[game] = future
        try:
            await asyncio.shield(future)
        finally:
            if self._claims.get(game) is future:
                del self._claims[game]

    async def _claim(self, game: str, n: int) -> None:
        # Entries that do not open are dropped and more taken in their place, until the
        # reserve has ``n`` or the store has no more: every round takes entries out of the
        # store for good, so this ends.
        while (need := n - self.available(game)) > 0:
            taken = await self.store.pool_take(game, need)
            self.ready[game] = max(0, self.ready[game] - len(taken))
            dropped: list[str] = []
            for entry in taken:
                try:
                    self.reserve[game].append(open_deal(self._key, game, entry))
                except SealError as exc:
                    dropped.append(str(exc))
            if dropped:
                self.tally[game].dropped += len(dropped)
                log.warning("pool of %s: %d entries that do not open dropped, never dealt "
                            "(%s): sealed under another key, altered, or of an older version",
                            game, len(dropped), "; ".join(sorted(set(dropped))))
            if len(taken) < need:
                return

    async def put(self, game: str, deals: list[tuple[int, int]]) -> None:
        """Add solved winnable deals (seed, par moves) of ``game`` to the store's pool,
        sealed (see the module docstring)."""
        await self.store.pool_put(game, [
            seal_deal(self._key, game, seed, moves, secrets.token_bytes(NONCE_BYTES))
            for seed, moves in deals])

    # -------------------------------------------------------------- the task
    def start(self) -> None:
        if self._task is None:
            self._task = self.supervisor.spawn(self._run(), "refill the pool")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.solver is not None:
            await self.solver.stop()

    def close(self) -> None:
        """Stop at once (the solver's process is killed)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self.solver is not None:
            self.solver.close()

    async def _run(self) -> None:
        """Keep each reserve full and each game's pool between its water marks: one deal
        solved per game in turn, so that every game fills at the same pace."""
        while True:
            busy = False
            for game in self.games:
                try:
                    busy |= await self._tend(game)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the store is down, the solver died: later
                    log.warning("pool of %s: %s", game, exc)
            if not busy:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(POOL_IDLE):
                        await self._wake.wait()

    async def _tend(self, game: str) -> bool:
        """One step for one game; True if it did some work."""
        if self.available(game) < self.reserve_size:
            await self.claim(game, self.reserve_size)
        self.ready[game] = await self.store.pool_size(game)
        if self.solver is None or self.size <= 0:
            return False
        # Between the water marks it goes on the way it was going: filling up to ``size``
        # once it fell below half, resting until it does again.
        if self.ready[game] < max(1, self.size // 2):
            self.filling[game] = True
        elif self.ready[game] >= self.size:
            self.filling[game] = False
        if not self.filling[game]:
            return False
        await self._solve_one(game)
        return True

    async def _solve_one(self, game: str) -> None:
        assert self.solver is not None
        seed = secrets.randbits(64)
        t0 = self.clock()
        par = await self.solver.solve(game, seed)
        tally = self.tally[game]
        tally.seconds += self.clock() - t0
        tally.tried += 1
        if par.get("verdict") == "won" and "moves" in par:
            await self.put(game, [(seed, int(par["moves"]))])
            tally.kept += 1
            self.ready[game] += 1

    # ------------------------------------------------------------------ stats
    def stats(self, game: str) -> dict[str, Any]:
        """What ``/api/games`` shows of a game's pool."""
        return {"ready": self.ready.get(game, 0) + self.available(game), "size": self.size,
                "refill_below": self.size // 2, "solving": self.solver is not None,
                **self.tally[game].as_dict(self.started, self.clock())}
