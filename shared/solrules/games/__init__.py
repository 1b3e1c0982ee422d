"""The games, one small module each, and the games by name: :data:`GAME_CLASSES`,
:func:`new_game` (a seeded deal), :func:`parse_position` (a position written by
:meth:`~solrules.core.Game.position`). The package ``solrules`` offers them all; the modules
of the package that need a game by its name (``sample``) take it from here."""

from __future__ import annotations

from ..core import Game, InvalidPositionError
from ..deal import check_seed, shuffled_cards
from .quadruple_canfield import QuadrupleCanfield
from .scotch import Scotch
from .yukon import Yukon

#: Every game by its stable name; adding a game is one module plus one entry here.
GAME_CLASSES: dict[str, type[Game]] = {
    cls.name: cls for cls in (Scotch, QuadrupleCanfield, Yukon)
}
GAMES: tuple[str, ...] = tuple(GAME_CLASSES)
TITLES: dict[str, str] = {name: cls.title for name, cls in GAME_CLASSES.items()}


def game_class(name: str) -> type[Game]:
    """The class of a game by name; :exc:`ValueError` naming the known games otherwise."""
    try:
        return GAME_CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; games: {', '.join(GAMES)}") from None


def new_game(name: str, seed: int) -> Game:
    """The deal of game ``name`` for ``seed`` (0 ≤ seed < 2**64), PySolFC-compatible."""
    cls = game_class(name)
    return cls(shuffled_cards(cls.decks, check_seed(seed)), seed=seed)


def parse_position(text: str) -> Game:
    """The position written by :meth:`Game.position`; :exc:`InvalidPositionError` if malformed."""
    if not isinstance(text, str) or not text.split():
        raise InvalidPositionError("empty position text")
    name, *fields = text.split()
    if name not in GAME_CLASSES:
        raise InvalidPositionError(f"unknown game {name!r}; games: {', '.join(GAMES)}")
    options: dict[str, str] = {}
    piles: dict[str, str] = {}
    for field in fields:
        if "=" in field and ":" not in field:
            key, _, value = field.partition("=")
            options[key] = value
        elif ":" in field:
            pid, _, cards = field.partition(":")
            if pid in piles:
                raise InvalidPositionError(f"pile {pid} appears twice")
            piles[pid] = cards
        else:
            raise InvalidPositionError(f"{field!r} is neither PILE:CARDS nor KEY=VALUE")
    return GAME_CLASSES[name]._from_fields(options, piles)
