"""Quadruple Canfield: four decks, 16 foundations from a dealt base rank, a 39-card reserve."""

from __future__ import annotations

from ..cards import RANK_OF, SUIT_OF
from ..core import Build, Fill, Foundations, Game, Match, Moves, Tableau


class QuadrupleCanfield(Game):
    """Canfield with 4 decks: 16 foundations, 8 tableau piles, stock dealt by three to a waste.

    The first card dealt fixes the base rank of all foundations, which build up in suit, wrapping
    K→A, and may give their top card back. The tableau builds down in alternate colour, wrapping;
    any run from the top moves as a unit. A pile emptied by a move is refilled at once from the
    reserve; once the reserve is out, any card or run may fill a space. ``s>w`` turns up to three
    stock cards onto the waste; ``w>s`` turns the waste over, unlimited times.
    """

    name = "quadruple-canfield"
    title = "Quadruple Canfield"
    decks = 4
    foundations = Foundations(16, Build(+1, Match.SUIT, wrap=True), base=None, suit_groups=True,
                              give_back=True)
    tableau = Tableau(8, Build(-1, Match.ALT_COLOUR, wrap=True), Moves.RUN, Fill.ANY,
                      refill_from_reserve=True, noun="tableau pile")
    reserve = True
    stock_deal = 3

    def deal(self, cards: list[int]) -> None:
        base = cards.pop()
        self.base_rank = RANK_OF[base]
        self._set_tables()
        self._put(f"f{SUIT_OF[base] * 4 + 1}", base)
        for _ in range(39):
            self._put("r", cards.pop(), face_up=False)
        self._turn_up("r")
        for k in range(8, 0, -1):
            self._put(f"t{k}", cards.pop())
        for card in cards:
            self._put("s", card, face_up=False)
        self._deal_stock(self.stock_deal)
