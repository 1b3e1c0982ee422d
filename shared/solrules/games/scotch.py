"""Scotch Patience: 18 open fans, foundations in alternate colours, one card at a time."""

from __future__ import annotations

from ..core import Build, Fill, Foundations, Game, Match, Moves, Tableau


class Scotch(Game):
    """All 52 cards face up in 18 fans; an emptied fan is never filled again.

    Foundations take any Ace, then build up in alternate colour (suit ignored); their top card
    may come back onto a fan. Fans build down regardless of suit, one card at a time, no wrap.
    """

    name = "scotch"
    title = "Scotch Patience"
    foundations = Foundations(4, Build(+1, Match.ALT_COLOUR), give_back=True)
    tableau = Tableau(18, Build(-1, Match.ANY), Moves.ONE, Fill.NEVER, noun="fan")

    def deal(self, cards: list[int]) -> None:
        for fans in (17, 17, 18):
            for i in range(fans):
                self._put(f"t{i + 1}", cards.pop())
