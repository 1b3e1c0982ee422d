"""solrules: the rules of patience games raced on solrace, as a pure library.

>>> import solrules
>>> game = solrules.new_game("scotch", 617)
>>> move = game.legal_moves()[0]
>>> game.push(move)
>>> game.pop() == move
True

Standard library only, no I/O, no clock. See :class:`solrules.core.Game` for the whole API.
"""

from __future__ import annotations

from .cards import card_name, card_text, parse_card
from .core import (
    Build,
    Fill,
    Foundations,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    Match,
    Move,
    Moves,
    Tableau,
)
from .deal import check_seed, shuffled_cards
from .games.quadruple_canfield import QuadrupleCanfield
from .games.scotch import Scotch
from .games.yukon import Yukon
from .sample import guess_game, sample_unseen
from .solver import (
    Budget,
    SearchProgress,
    SolveResult,
    Verdict,
    best_guess,
    safe_moves,
    solve,
)

__all__ = [
    "GAMES",
    "GAME_CLASSES",
    "TITLES",
    "Budget",
    "Build",
    "Fill",
    "Foundations",
    "Game",
    "IllegalMoveError",
    "InvalidMoveError",
    "InvalidPositionError",
    "Match",
    "Move",
    "Moves",
    "QuadrupleCanfield",
    "Scotch",
    "SearchProgress",
    "SolveResult",
    "Tableau",
    "Verdict",
    "Yukon",
    "best_guess",
    "card_name",
    "card_text",
    "guess_game",
    "new_game",
    "parse_card",
    "parse_position",
    "safe_moves",
    "sample_unseen",
    "solve",
]

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
