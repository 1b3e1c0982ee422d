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
from .games import GAME_CLASSES, GAMES, TITLES, game_class, new_game, parse_position
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
    "game_class",
    "guess_game",
    "new_game",
    "parse_card",
    "parse_position",
    "safe_moves",
    "sample_unseen",
    "solve",
]
