"""Yukon: seven columns with face-down cards; any face-up card moves with everything above it."""

from __future__ import annotations

from ..core import Build, Fill, Foundations, Game, Match, Moves, Tableau


class Yukon(Game):
    """Columns build down in alternate colour; a space takes only a King (with what lies on it).

    Foundations build up in suit from the Ace and never give a card back. A face-down card that
    becomes the top of its column turns face up as part of the move.
    """

    name = "yukon"
    title = "Yukon"
    foundations = Foundations(4, Build(+1, Match.SUIT))
    tableau = Tableau(7, Build(-1, Match.ALT_COLOUR), Moves.FACE_UP, Fill.KING, flip=True,
                      noun="column")

    def deal(self, cards: list[int]) -> None:
        # PySolFC's order: face-down rows, four face-up rounds on t2..t7, then one card on t1..t7.
        for i in range(2, 8):
            for k in range(i, 8):
                self._put(f"t{k}", cards.pop(), face_up=False)
        for _ in range(4):
            for k in range(2, 8):
                self._put(f"t{k}", cards.pop())
        for k in range(1, 8):
            self._put(f"t{k}", cards.pop())
