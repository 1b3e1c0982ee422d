"""Where a new race's deal comes from: a fresh random seed, or, with ``winnable: true``, a
solved deal from the private pool (:mod:`solrace.solver.pool`), with the par it has already.

Either way the seed is secret until the deal is revealed. The catalogues shipped in the
repository (``seeds/catalogue/``) are public, so a live server never deals from them; only a
server started with ``--demo-catalogue`` (an offline demo) does, and its races say so
(``options.demo_catalogue``: anyone can look those deals up).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from pathlib import Path
from typing import Any

from solrace.core.race_parts import RaceError
from solrace.runtime.supervisor import Supervisor
from solrace.settings import MAX_PARS
from solrace.solver.catalogue import load_catalogue
from solrace.solver.pool import Pool

Par = dict[str, Any]



class DealSource:
    """Seeds for new deals. ``pool``: the private pool of winnable deals; ``demo``: deal
    winnable races from the public catalogues in ``directory`` instead (default: the shipped
    ones, see :func:`solrace.solver.catalogue.catalogue_dir`), read once, here."""

    def __init__(self, directory: Path | None = None, pool: Pool | None = None,
                 demo: bool = False, games: tuple[str, ...] = ()) -> None:
        self.pool = pool
        self.supervisor = pool.supervisor if pool is not None else Supervisor()
        self.demo = demo
        #: The catalogue's deals and their par, per game (demo only).
        self.catalogue: dict[str, dict[int, int]] = {}
        if demo:
            for game in games:
                try:
                    entries = load_catalogue(game, directory)
                except (OSError, ValueError):
                    entries = []
                self.catalogue[game] = {e.seed: len(e) for e in entries}
        #: The par of deals drawn from the pool, until their race takes it (a race whose
        #: creation failed never does: the oldest are forgotten).
        self._pars: OrderedDict[tuple[str, int], int] = OrderedDict()


    def ready(self, game: str) -> int:
        """How many winnable deals of ``game`` can be dealt now, without waiting."""
        if self.demo:
            return len(self.catalogue.get(game, ()))
        return self.pool.available(game) if self.pool is not None else 0

    def draw(self, game: str, winnable: bool = False) -> int:
        """A new secret seed for a deal of ``game``: a solved one when ``winnable`` (call
        :meth:`ready` first; ``unavailable`` if none is)."""
        if not winnable:
            return secrets.randbits(64)
        if self.demo:
            seeds = list(self.catalogue.get(game, ()))
            if not seeds:
                raise RaceError("unavailable", f"this server has no catalogue of winnable "
                                f"{game} deals")
            return secrets.choice(seeds)
        if self.pool is None or not self.pool.available(game):
            raise RaceError("unavailable", f"no winnable {game} deal is ready right now: try "
                            "again in a minute")
        seed, moves = self.pool.take(game)
        self._pars[game, seed] = moves
        while len(self._pars) > MAX_PARS:
            self._pars.popitem(last=False)
        return seed

    async def claim(self, game: str, n: int) -> None:
        """Make ``n`` winnable deals of ``game`` ready if the pool has them."""
        if self.pool is not None and not self.demo:
            await self.pool.claim(game, n)

    def prefetch(self, game: str, n: int) -> None:
        """:meth:`claim` in the background (a tournament's timer cannot wait for it)."""
        self.supervisor.spawn(self.claim(game, n), f"prefetch {game} deals", timeout=10.0)

    def winnable(self, game: str) -> int:
        """How many winnable deals of ``game`` this server has ready (its pool, shared
        with the other processes, and its reserve), for ``/api/games``."""
        if self.demo:
            return len(self.catalogue.get(game, ()))
        return self.pool.stats(game)["ready"] if self.pool is not None else 0

    def par(self, game: str, seed: int) -> Par | None:
        """The par of a deal drawn here (the pool's, or the demo catalogue's), else None."""
        moves = self._pars.pop((game, seed), None)
        if moves is None and self.demo:
            moves = self.catalogue.get(game, {}).get(seed)
        return None if moves is None else {"verdict": "won", "moves": moves}
