"""Where a new race's deal comes from: a fresh random seed, or one drawn from the catalogue of
certified-winnable deals (``winnable: true``), and the par such a deal has already.

Either way the seed is secret until the deal is revealed; the commitment published at creation
hides which deal of the catalogue it is as well as it hides any other seed (the salt is fresh).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from .catalogue import load_catalogue
from .room import RaceError

Par = dict[str, Any]


class Deals:
    """Seeds for new deals. ``directory``: where the catalogues are (default: the shipped
    ones, see :func:`solrace.catalogue.catalogue_dir`)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._pars: dict[str, dict[int, int]] = {}

    def _index(self, game: str) -> dict[int, int]:
        index = self._pars.get(game)
        if index is None:
            try:
                entries = load_catalogue(game, self.directory)
            except (OSError, ValueError):
                entries = []
            index = self._pars[game] = {e.seed: len(e) for e in entries}
        return index

    def draw(self, game: str, winnable: bool = False) -> int:
        """A new secret seed for a deal of ``game``: from the catalogue when ``winnable``
        (``unavailable`` if this server has none for the game)."""
        if not winnable:
            return secrets.randbits(64)
        seeds = list(self._index(game))
        if not seeds:
            raise RaceError("unavailable",
                            f"this server has no catalogue of winnable {game} deals")
        return secrets.choice(seeds)

    def winnable(self, game: str) -> int:
        """How many certified-winnable deals of ``game`` the catalogue holds."""
        return len(self._index(game))

    def par(self, game: str, seed: int) -> Par | None:
        """The par of a catalogued deal (the catalogue's winning line length), else None."""
        moves = self._index(game).get(seed)
        return None if moves is None else {"verdict": "won", "moves": moves}
