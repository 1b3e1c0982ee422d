"""Cards as small integers, and their text.

A card is an ``int``: ``deck * 52 + suit * 13 + rank`` with ranks ``A..K`` as 0..12 and suits in the
unshuffled order clubs, spades, hearts, diamonds (0..3). Games with several decks hold the same text
several times; the deck number only keeps every physical card distinct.
"""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "CSHD"
SUIT_NAMES = ("clubs", "spades", "hearts", "diamonds")
RANK_NAMES = (
    "Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King",
)

ACE = 0
KING = 12

#: Lookup tables indexed by card; 4 decks (208 cards) cover every game.
MAX_CARDS = 52 * 4
RANK_OF: tuple[int, ...] = tuple(c % 13 for c in range(MAX_CARDS))
SUIT_OF: tuple[int, ...] = tuple((c // 13) % 4 for c in range(MAX_CARDS))
RED_OF: tuple[int, ...] = tuple(1 if (c // 13) % 4 >= 2 else 0 for c in range(MAX_CARDS))
TEXT_OF: tuple[str, ...] = tuple(RANKS[c % 13] + SUITS[(c // 13) % 4] for c in range(MAX_CARDS))


def card_text(card: int) -> str:
    """``"TH"`` for the ten of hearts (of any deck)."""
    return TEXT_OF[card]


def card_name(card: int) -> str:
    """``"10 of hearts"``: for screen readers and messages."""
    return f"{RANK_NAMES[RANK_OF[card]]} of {SUIT_NAMES[SUIT_OF[card]]}"


def parse_card(text: str) -> int:
    """The deck-0 card for a text such as ``"TH"``; :exc:`ValueError` if it is not a card."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])
