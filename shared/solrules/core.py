"""The rules core: the :class:`Game` every variant subclasses (moves and errors come from
:mod:`solrules.move`, the pile declarations from :mod:`solrules.piles`; both are re-exported here).

A game is described by class attributes (how its foundations and tableau build, what moves, what
fills a space) plus a :meth:`Game.deal` method; everything else — legal move generation, checking
with player-readable reasons, push/pop with exact undo, boards and position text — is shared.
Standard library only: no I/O, no clock, no randomness (deals come from :mod:`solrules.deal`).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from .cards import KING, RANK_NAMES, RANK_OF, RANKS, SUIT_NAMES, TEXT_OF
from .move import IllegalMoveError, InvalidMoveError, InvalidPositionError, Move
from .piles import Build, Fill, Foundations, Match, Moves, Tableau, card_key

__all__ = [
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
    "Tableau",
]


class Kind(enum.IntEnum):
    FOUNDATION = 0
    RESERVE = 1
    STOCK = 2
    WASTE = 3
    TABLEAU = 4


_KIND_NOUN = {Kind.FOUNDATION: "foundation", Kind.RESERVE: "reserve", Kind.STOCK: "stock",
              Kind.WASTE: "waste"}

def _mask_of(cards: Sequence[int]) -> int:
    """The bitmask of a list of cards."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


# Undo records: each push stores a tuple of operations, replayed backwards by pop.
_TRANSFER, _FLIP, _DEAL, _TURN = 0, 1, 2, 3


class Game:
    """A game of patience in progress: the piles, whose cards are face up, and the moves so far.

    Subclasses set :attr:`name`, :attr:`title`, :attr:`decks`, :attr:`foundations`,
    :attr:`tableau`, optionally :attr:`reserve` and :attr:`stock_deal`, and implement :meth:`deal`.
    Build one with :func:`solrules.new_game` (a seeded deal) or :func:`solrules.parse_position`.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    decks: ClassVar[int] = 1
    foundations: ClassVar[Foundations]
    tableau: ClassVar[Tableau]
    reserve: ClassVar[bool] = False
    #: Cards turned from stock to waste by ``s>w``; 0 for a game without stock and waste.
    stock_deal: ClassVar[int] = 0

    # Per-class layout, computed once by __init_subclass__.
    pile_ids: ClassVar[tuple[str, ...]]
    _kinds: ClassVar[tuple[Kind, ...]]
    _index: ClassVar[dict[str, int]]
    _f_range: ClassVar[range]
    _t_range: ClassVar[range]
    _r: ClassVar[int]
    _s: ClassVar[int]
    _w: ClassVar[int]
    _move_cache: ClassVar[dict[int, tuple[str, Move]]]
    _text_cache: ClassVar[dict[str, Move]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            return
        ids = [f"f{i + 1}" for i in range(cls.foundations.count)]
        kinds = [Kind.FOUNDATION] * cls.foundations.count
        if cls.reserve:
            ids.append("r")
            kinds.append(Kind.RESERVE)
        if cls.stock_deal:
            ids += ["s", "w"]
            kinds += [Kind.STOCK, Kind.WASTE]
        first_t = len(ids)
        ids += [f"t{i + 1}" for i in range(cls.tableau.count)]
        kinds += [Kind.TABLEAU] * cls.tableau.count
        cls.pile_ids = tuple(ids)
        cls._kinds = tuple(kinds)
        cls._index = {p: i for i, p in enumerate(ids)}
        cls._f_range = range(cls.foundations.count)
        cls._t_range = range(first_t, len(ids))
        cls._r = cls._index.get("r", -1)
        cls._s = cls._index.get("s", -1)
        cls._w = cls._index.get("w", -1)
        cls._move_cache = {}
        cls._text_cache = {}

    def __init__(self, cards: Sequence[int] | None = None, *, seed: int | None = None) -> None:
        """Lay out ``cards`` (a shuffled pile, top last) with :meth:`deal`; empty piles if None."""
        if not self.name:
            raise TypeError("Game is abstract: use solrules.new_game(name, seed)")
        self.seed = seed
        self.move_stack: list[Move] = []
        self._undo: list[tuple[tuple[int, ...], ...]] = []
        self._piles: list[list[int]] = [[] for _ in self.pile_ids]
        self._down: list[int] = [0] * len(self.pile_ids)
        # board() entries per pile, rebuilt only for piles changed since (None: changed).
        self._view: list[dict[str, Any] | None] = [None] * len(self.pile_ids)
        self._home = 0  # cards on foundations
        # Bitmasks of physical cards (bit c for card c): face down now, and face up at some
        # moment of this game (see :attr:`seen`).
        self._hidden = 0
        self.seen = 0
        # legal_moves() of this position once computed, and of the position before the last
        # push as (stack depth, moves): "move, then undo it" lists its moves again for free.
        self._legal: dict[str, Move] | None = None
        self._legal_prev: tuple[int, dict[str, Move]] | None = None
        base = self.foundations.base
        self.base_rank: int = 0 if base is None else base
        self._set_tables()
        if cards is not None:
            pile = list(cards)
            if len(pile) != 52 * self.decks:
                raise ValueError(f"{self.title} needs {52 * self.decks} cards, not {len(pile)}")
            self.deal(pile)

    def _set_tables(self) -> None:
        # What every board() starts with: the game, and a dealt base rank (which a board whose
        # foundations gave every card back could not show otherwise).
        self._head: dict[str, str] = {"game": self.name}
        if self.foundations.base is None:
            self._head["base"] = RANKS[self.base_rank]
        self._fkey, self._fwanted = self.foundations.build.tables()
        self._tkey, self._twanted = self.tableau.build.tables()
        # What an empty foundation accepts: its base rank, in its suit when grouped.
        fb = self.foundations
        per_suit = fb.count // 4
        empty: list[tuple[int, ...]] = []
        for f in range(fb.count):
            suits = [f // per_suit] if fb.suit_groups else [0, 1, 2, 3]
            empty.append(tuple(sorted({
                card_key(fb.build.match, self.base_rank, s, 1 if s >= 2 else 0) for s in suits
            })))
        self._f_empty_keys = tuple(empty)

    # -- dealing ---------------------------------------------------------------------------------

    def deal(self, cards: list[int]) -> None:
        """Lay out a shuffled pile (top = last element); subclasses implement the game's deal."""
        raise NotImplementedError

    def _put(self, pile: str, card: int, *, face_up: bool = True) -> None:
        """Deal one card onto a pile: for :meth:`deal` only."""
        p = self._index[pile]
        if not face_up:
            if self._down[p] != len(self._piles[p]):
                raise ValueError(f"cannot deal a face-down card onto face-up cards in {pile}")
            self._down[p] += 1
            self._hidden |= 1 << card
        else:
            self.seen |= 1 << card
        self._piles[p].append(card)
        self._view[p] = None
        if p < self.foundations.count:
            self._home += 1

    def _turn_up(self, pile: str) -> None:
        """Turn the top card of a pile face up: for :meth:`deal` only."""
        p = self._index[pile]
        if not self._down[p] or self._down[p] != len(self._piles[p]):
            raise ValueError(f"the top card of {pile} is not face down")
        self._down[p] -= 1
        bit = 1 << self._piles[p][-1]
        self._hidden &= ~bit
        self.seen |= bit
        self._view[p] = None

    # -- reading the position --------------------------------------------------------------------

    def cards(self, pile: str) -> list[str]:
        """The texts of the cards in ``pile``, bottom to top, face-down ones included."""
        return [TEXT_OF[c] for c in self._piles[self._index[pile]]]

    def face_down(self, pile: str) -> int:
        """How many cards at the bottom of ``pile`` are face down."""
        return self._down[self._index[pile]]

    def face_up(self) -> int:
        """The physical cards face up now, as a bitmask (bit ``c`` for card ``c``)."""
        return ((1 << (52 * self.decks)) - 1) & ~self._hidden

    # ``seen`` (an attribute): the physical cards that have been face up at some moment of this
    # game, as a bitmask. It only grows: a card turned face down again (the waste turned over,
    # a move taken back) stays seen. Racers of one deal compare these to decide which of each
    # other's cards they may be shown.

    def progress(self) -> tuple[int, int]:
        """``(cards on foundations, total cards)``."""
        return self._home, 52 * self.decks

    def is_won(self) -> bool:
        """True when every card is on a foundation."""
        return self._home == 52 * self.decks

    def board(self, reveal: bool = False, mask: int | None = None) -> dict[str, Any]:
        """The wire ``board`` object: ``{"game", "piles": [{"pile", "cards"}]}``, bottom to top,
        with ``"base"`` (the rank's text) for a game whose foundations' base rank is dealt.

        Face-down cards (and undealt stock cards) are ``None`` unless ``reveal`` is true. With
        ``mask`` (a bitmask of physical cards, e.g. another player's :attr:`seen`), a face-up
        card whose bit is not in ``mask`` is ``None`` too: the board as someone who knows only
        those cards may see it. The pile objects of an unrevealed board are shared with later
        boards for as long as the pile does not change (a server sends a board after every
        move): treat them as read-only.
        """
        if reveal:
            return {**self._head, "piles": [
                {"pile": pid, "cards": [TEXT_OF[c] for c in pile]}
                for pid, pile in zip(self.pile_ids, self._piles, strict=True)
            ]}
        view = self._view
        for p, entry in enumerate(view):
            if entry is None:
                pile, down = self._piles[p], self._down[p]
                cards: list[str | None] = [TEXT_OF[c] for c in pile]
                if down:
                    cards[:down] = [None] * down
                view[p] = {"pile": self.pile_ids[p], "cards": cards}
        if mask is None or not self.face_up() & ~mask:
            return {**self._head, "piles": list(view)}
        piles = []
        for p, entry in enumerate(view):
            pile, down = self._piles[p], self._down[p]
            if any(not mask >> c & 1 for c in pile[down:]):
                entry = {"pile": self.pile_ids[p], "cards": [
                    None if i < down or not mask >> c & 1 else TEXT_OF[c]
                    for i, c in enumerate(pile)
                ]}
            piles.append(entry)
        return {**self._head, "piles": piles}

    def position(self) -> str:
        """One-line position text; :func:`solrules.parse_position` gives back an equal position.

        ``GAME [base=R] PILE:CARDS …``: each pile in order, cards bottom to top as two-character
        texts, a ``|`` after the face-down ones (left out when there are none).
        """
        parts = [self.name]
        if self.foundations.base is None:
            parts.append(f"base={RANKS[self.base_rank]}")
        for pid, pile, down in zip(self.pile_ids, self._piles, self._down, strict=True):
            text = "".join(TEXT_OF[c] for c in pile)
            if down:
                text = text[: 2 * down] + "|" + text[2 * down:]
            parts.append(f"{pid}:{text}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"solrules.parse_position({self.position()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.position() == other.position()

    __hash__ = None  # type: ignore[assignment]

    # -- moves -----------------------------------------------------------------------------------

    def _movable(self, p: int) -> int:
        """How many cards from the top of tableau pile ``p`` may move together."""
        pile = self._piles[p]
        free = len(pile) - self._down[p]
        if free <= 0:
            return 0
        rule = self.tableau.moves
        if rule is Moves.ONE:
            return 1
        if rule is Moves.FACE_UP:
            return free
        key, wanted = self._tkey, self._twanted
        k = 1
        while k < free and key[pile[-k]] == wanted[pile[-k - 1]]:
            k += 1
        return k

    def _intern(self, keys: list[int]) -> list[tuple[str, Move]]:
        """The interned ``(text, Move)`` for each key ``a << 16 | b << 8 | n``."""
        cache = self._move_cache
        try:
            return [cache[k] for k in keys]
        except KeyError:
            ids = self.pile_ids
            for k in keys:
                if k not in cache:
                    move = Move(ids[k >> 16], ids[(k >> 8) & 0xFF], k & 0xFF)
                    cache[k] = (move.text(), move)
            return [cache[k] for k in keys]

    def _foundation_wants(self) -> dict[int, list[int]]:
        """Foundation-key → foundations that take a card with that key now."""
        wants: dict[int, list[int]] = {}
        piles, fwanted, limit = self._piles, self._fwanted, self.foundations.max_cards
        for f in self._f_range:
            pile = piles[f]
            if not pile:
                for k in self._f_empty_keys[f]:
                    wants.setdefault(k, []).append(f)
            elif len(pile) < limit:
                k = fwanted[pile[-1]]
                if k >= 0:
                    wants.setdefault(k, []).append(f)
        return wants

    def legal_moves(self) -> list[Move]:
        """Every distinct legal (source, count, destination), in a fixed order."""
        return list(self.legal_by_text().values())

    def legal_by_text(self) -> dict[str, Move]:
        """:meth:`legal_moves` keyed by move text, in the same order (do not modify it: it is
        remembered for this position). A server checks a move sent as text with one lookup."""
        legal = self._legal
        if legal is None:
            legal = self._legal = dict(self._intern(self._generate()))
        return legal

    def legal_move(self, text: str) -> Move | None:
        """The legal move written ``text`` (exactly as :meth:`legal_by_text` writes it), or
        None. Checks that one move alone when the list of this position was not worked out: a
        server that does not send the list need not build it for each move."""
        legal = self._legal
        if legal is not None:
            return legal.get(text)
        cache = self._text_cache
        move = cache.get(text)
        if move is None:
            try:
                move = Move.from_text(text)
            except ValueError:
                return None
            if (move.text() != text or move.src not in self._index
                    or move.dst not in self._index):
                return None
            if len(cache) < 4096:  # the moves of real play; nonsense counts are not kept
                cache[text] = move
        return move if self.refusal(move) is None else None

    def places(self, mask: int) -> list[tuple[str, int, str]]:
        """Where the physical cards of ``mask`` lie: ``(pile, index, card text)``, piles in
        order, each bottom to top. With ``mask`` the cards a move turned face up
        (``face_up()`` after it, less ``face_up()`` before), the cards a player who knows the
        rules could not work out himself."""
        out: list[tuple[str, int, str]] = []
        if not mask:
            return out
        for pid, pile in zip(self.pile_ids, self._piles, strict=True):
            for i, c in enumerate(pile):
                if mask >> c & 1:
                    out.append((pid, i, TEXT_OF[c]))
        return out

    def _generate(self) -> list[int]:
        """The keys of every legal move (see :meth:`_intern`), in a fixed order."""
        piles, down = self._piles, self._down
        fkey, tkey, twanted = self._fkey, self._tkey, self._twanted
        fwants = self._foundation_wants()
        twants: dict[int, list[int]] = {}
        empties: list[int] = []
        for t in self._t_range:
            pile = piles[t]
            if pile:
                k = twanted[pile[-1]]
                if k >= 0:
                    twants.setdefault(k, []).append(t)
            else:
                empties.append(t)
        fill = self.tableau.fill
        if fill is Fill.NEVER:
            empties = []
        king_only = fill is Fill.KING
        one_card = self.tableau.moves is Moves.ONE
        keys: list[int] = []
        add = keys.append
        no: tuple[int, ...] = ()
        for t in self._t_range:
            pile = piles[t]
            size = len(pile)
            if size == down[t]:
                continue
            src = t << 16
            card = pile[-1]
            for f in fwants.get(fkey[card], no):
                add(src | f << 8 | 1)
            if one_card:
                for d in twants.get(tkey[card], no):
                    add(src | d << 8 | 1)
                if empties and size > 1 and (not king_only or RANK_OF[card] == KING):
                    for d in empties:
                        add(src | d << 8 | 1)
                continue
            for n in range(1, self._movable(t) + 1):
                card = pile[-n]
                for d in twants.get(tkey[card], no):
                    if d != t:
                        add(src | d << 8 | n)
                if empties and n < size and (not king_only or RANK_OF[card] == KING):
                    for d in empties:
                        add(src | d << 8 | n)
        singles = [p for p in (self._r, self._w) if p >= 0 and piles[p]]
        if self.foundations.give_back:
            singles += [f for f in self._f_range if piles[f]]
        for p in singles:
            card = piles[p][-1]
            src = p << 16 | 1
            if p >= self.foundations.count:
                for f in fwants.get(fkey[card], no):
                    add(src | f << 8)
            for d in twants.get(tkey[card], no):
                add(src | d << 8)
            if empties and (not king_only or RANK_OF[card] == KING):
                for d in empties:
                    add(src | d << 8)
        if self._s >= 0:
            if piles[self._s]:
                add(self._s << 16 | self._w << 8 | 1)
            elif piles[self._w]:
                add(self._w << 16 | self._s << 8 | 1)
        return keys

    def generate_legal_moves(self) -> Iterator[Move]:
        """Iterate over :meth:`legal_moves`."""
        return iter(self.legal_moves())

    def _noun(self, p: int) -> str:
        kind = self._kinds[p]
        if kind is Kind.TABLEAU:
            return self.tableau.noun
        return _KIND_NOUN[kind]

    def refusal(self, move: Move) -> str | None:
        """Why ``move`` is not legal here, in words a player understands; ``None`` if legal."""
        a = self._index.get(move.src)
        b = self._index.get(move.dst)
        if a is None:
            return f"{self.title} has no pile {move.src}"
        if b is None:
            return f"{self.title} has no pile {move.dst}"
        n = move.count
        piles = self._piles
        ka, kb = self._kinds[a], self._kinds[b]
        if ka is Kind.STOCK:
            if kb is not Kind.WASTE or n != 1:
                return "the stock only deals to the waste: s>w"
            if not piles[a]:
                return "the stock is empty: turn the waste over with w>s"
            return None
        if ka is Kind.WASTE and kb is Kind.STOCK:
            if n != 1:
                return "the waste turns over as a whole: w>s"
            if piles[a] and not piles[b]:
                return None
            if not piles[a]:
                return "the waste is empty"
            return "deal the whole stock before turning the waste over"
        if a == b:
            return f"{move.src} cannot move onto itself"
        pile = piles[a]
        if not pile:
            return f"{move.src} is empty"
        if kb in (Kind.STOCK, Kind.WASTE, Kind.RESERVE):
            return f"nothing can be played onto the {_KIND_NOUN[kb]}"
        if ka is Kind.FOUNDATION:
            if not self.foundations.give_back:
                return "cards never come back from a foundation"
            if kb is Kind.FOUNDATION:
                return "cards do not move from one foundation to another"
        if n > 1:
            if ka is not Kind.TABLEAU:
                return f"only the top card of the {self._noun(a)} moves"
            if n > len(pile):
                return f"{move.src} holds only {len(pile)} cards"
            movable = self._movable(a)
            if n > movable:
                rule = self.tableau.moves
                if rule is Moves.ONE:
                    return "only one card moves at a time"
                if rule is Moves.FACE_UP:
                    return f"{move.src} has only {movable} face-up cards"
                return (f"the top {n} cards of {move.src} are not a sequence "
                        f"{self.tableau.build.describe()}")
        elif self._down[a] >= len(pile):
            return f"the top card of {move.src} is face down"
        card = pile[-n]
        if kb is Kind.FOUNDATION:
            if n != 1:
                return "cards go to a foundation one at a time"
            return self._foundation_refusal(b, card)
        dest = piles[b]
        if not dest:
            fill = self.tableau.fill
            noun = self.tableau.noun
            if fill is Fill.NEVER:
                return f"an empty {noun} is never filled again"
            if fill is Fill.KING and RANK_OF[card] != KING:
                return f"only a King may fill an empty {noun}"
            if ka is Kind.TABLEAU and n == len(pile):
                return f"moving all of {move.src} onto an empty {noun} changes nothing"
            return None
        if self._tkey[card] != self._twanted[dest[-1]]:
            return f"{TEXT_OF[card]} does not go on {TEXT_OF[dest[-1]]}"
        return None

    def _foundation_refusal(self, f: int, card: int) -> str | None:
        pile = self._piles[f]
        fid = self.pile_ids[f]
        if not pile:
            if self._fkey[card] in self._f_empty_keys[f]:
                return None
            rank = RANK_NAMES[self.base_rank]
            if self.foundations.suit_groups:
                suit = SUIT_NAMES[f // (self.foundations.count // 4)]
                return f"empty {fid} takes only a {rank} of {suit}, not {TEXT_OF[card]}"
            article = "an" if rank in ("Ace", "8") else "a"
            return f"empty {fid} takes only {article} {rank}, not {TEXT_OF[card]}"
        if len(pile) >= self.foundations.max_cards:
            return f"{fid} is complete"
        if self._fkey[card] != self._fwanted[pile[-1]]:
            return f"{TEXT_OF[card]} does not go on {TEXT_OF[pile[-1]]}"
        return None

    def is_legal(self, move: Move) -> bool:
        """True if ``move`` may be pushed now."""
        return self.refusal(move) is None

    def parse_move(self, text: str) -> Move:
        """Parse and check a move text: :exc:`InvalidMoveError` or :exc:`IllegalMoveError`."""
        move = Move.from_text(text)
        why = self.refusal(move)
        if why is not None:
            raise IllegalMoveError(why)
        return move

    def push(self, move: Move) -> None:
        """Play ``move`` and its forced effects; :exc:`IllegalMoveError` if illegal (no change)."""
        why = self.refusal(move)
        if why is not None:
            raise IllegalMoveError(why)
        self._apply(move)

    def push_text(self, text: str) -> Move:
        """Parse, check and play a move text; returns the :class:`Move`."""
        move = self.parse_move(text)
        self._apply(move)
        return move

    def _apply(self, move: Move) -> None:
        a, b = self._index[move.src], self._index[move.dst]
        ops: list[tuple[int, ...]] = []
        if a == self._s:
            k = min(self.stock_deal, len(self._piles[a]))
            self._deal_stock(k)
            ops.append((_DEAL, k))
        elif a == self._w and b == self._s:
            self._turn_waste()
            ops.append((_TURN,))
        else:
            self._transfer(a, b, move.count)
            ops.append((_TRANSFER, a, b, move.count))
            self._forced_effects(a, ops)
        self._undo.append(tuple(ops))
        legal = self._legal
        self._legal_prev = None if legal is None else (len(self.move_stack), legal)
        self._legal = None
        self.move_stack.append(move)

    def _forced_effects(self, a: int, ops: list[tuple[int, ...]]) -> None:
        piles, down = self._piles, self._down
        if (not piles[a] and self._kinds[a] is Kind.TABLEAU and self.tableau.refill_from_reserve
                and self._r >= 0 and piles[self._r]):
            self._transfer(self._r, a, 1)
            ops.append((_TRANSFER, self._r, a, 1))
            a = self._r
        if down[a] and down[a] == len(piles[a]):
            down[a] -= 1
            bit = 1 << piles[a][-1]
            self._hidden &= ~bit
            self.seen |= bit
            self._view[a] = None
            ops.append((_FLIP, a))

    def _transfer(self, a: int, b: int, n: int) -> None:
        src = self._piles[a]
        self._piles[b] += src[-n:]
        del src[-n:]
        view = self._view
        view[a] = view[b] = None
        fcount = self.foundations.count
        if a < fcount:
            self._home -= n
        if b < fcount:
            self._home += n

    def _deal_stock(self, k: int) -> None:
        stock, waste = self._piles[self._s], self._piles[self._w]
        for _ in range(k):
            card = stock.pop()
            waste.append(card)
            bit = 1 << card
            self._hidden &= ~bit
            self.seen |= bit
        self._down[self._s] = len(stock)
        self._view[self._s] = self._view[self._w] = None

    def _turn_waste(self) -> None:
        s, w = self._s, self._w
        self._hidden |= _mask_of(self._piles[w])
        self._piles[s] = self._piles[w][::-1]
        self._piles[w] = []
        self._down[s] = len(self._piles[s])
        self._view[s] = self._view[w] = None

    def pop(self) -> Move:
        """Take back the last move exactly, forced effects included; :exc:`IndexError` if none."""
        if not self.move_stack:
            raise IndexError("no move to take back")
        move = self.move_stack.pop()
        prev, self._legal_prev = self._legal_prev, None
        self._legal = prev[1] if prev is not None and prev[0] == len(self.move_stack) else None
        for op in reversed(self._undo.pop()):
            code = op[0]
            if code == _TRANSFER:
                self._transfer(op[2], op[1], op[3])
            elif code == _FLIP:
                p = op[1]
                self._hidden |= 1 << self._piles[p][self._down[p]]
                self._down[p] += 1
                self._view[p] = None
            elif code == _DEAL:
                stock, waste = self._piles[self._s], self._piles[self._w]
                for _ in range(op[1]):
                    card = waste.pop()
                    self._hidden |= 1 << card
                    stock.append(card)
                self._down[self._s] = len(stock)
                self._view[self._s] = self._view[self._w] = None
            else:
                s, w = self._s, self._w
                self._hidden &= ~_mask_of(self._piles[s])
                self._piles[w] = self._piles[s][::-1]
                self._piles[s] = []
                self._down[s] = 0
                self._view[s] = self._view[w] = None
        return move

    def copy(self) -> Game:
        """An independent copy, move stack and undo history included."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.move_stack = list(self.move_stack)
        new._undo = list(self._undo)
        new._piles = [list(p) for p in self._piles]
        new._down = list(self._down)
        new._view = list(self._view)
        return new

    # -- building from a position text -----------------------------------------------------------

    @classmethod
    def _from_fields(cls, options: dict[str, str], piles: dict[str, str]) -> Game:
        game = cls()
        if cls.foundations.base is None:
            if options.get("base", "") not in tuple(RANKS):
                raise InvalidPositionError(f"{cls.name} needs base=RANK (one of {RANKS})")
            game.base_rank = RANKS.index(options["base"])
            game._set_tables()
        elif options:
            raise InvalidPositionError(f"{cls.name} takes no options, got {sorted(options)}")
        missing = [p for p in cls.pile_ids if p not in piles]
        extra = [p for p in piles if p not in cls._index]
        if missing or extra:
            raise InvalidPositionError(
                f"{cls.name}: missing piles {missing}, unknown piles {extra}")
        seen: dict[str, int] = {}
        for pid in cls.pile_ids:
            text = piles[pid]
            down_text, bar, up_text = text.partition("|")
            if not bar:
                down_text, up_text = "", text
            p = cls._index[pid]
            for part, face_down in ((down_text, True), (up_text, False)):
                if len(part) % 2:
                    raise InvalidPositionError(f"{pid}: cards are two characters each: {part!r}")
                for i in range(0, len(part), 2):
                    ct = part[i:i + 2]
                    if ct[0] not in RANKS or ct[1] not in "CSHD":
                        raise InvalidPositionError(f"{pid}: {ct!r} is not a card")
                    copies = seen.get(ct, 0)
                    seen[ct] = copies + 1
                    card = copies * 52 + "CSHD".index(ct[1]) * 13 + RANKS.index(ct[0])
                    if copies >= cls.decks:
                        raise InvalidPositionError(f"{ct} appears more than {cls.decks} times")
                    game._piles[p].append(card)
                    if face_down:
                        game._down[p] += 1
                        game._hidden |= 1 << card
                    else:
                        game.seen |= 1 << card
                    if p < cls.foundations.count:
                        game._home += 1
            game._check_pile(p)
        if len(seen) != 52 or any(v != cls.decks for v in seen.values()):
            raise InvalidPositionError(f"{cls.title} needs every card exactly {cls.decks} times")
        if (cls.tableau.refill_from_reserve and game._piles[cls._r]
                and any(not game._piles[t] for t in cls._t_range)):
            # Spaces are refilled from the reserve as part of the move that empties them.
            raise InvalidPositionError("a tableau pile cannot be empty while the reserve has cards")
        return game

    def _check_pile(self, p: int) -> None:
        pile, down, kind, pid = self._piles[p], self._down[p], self._kinds[p], self.pile_ids[p]
        if kind is Kind.STOCK:
            if down != len(pile):
                raise InvalidPositionError("every stock card is face down (write s:CARDS|)")
        elif down and (kind in (Kind.FOUNDATION, Kind.WASTE) or down >= len(pile)):
            raise InvalidPositionError(f"{pid}: this pile cannot have face-down cards here")
        elif kind is Kind.TABLEAU and down and not self.tableau.flip:
            raise InvalidPositionError(f"{pid}: {self.title} has no face-down tableau cards")
        elif kind is Kind.RESERVE and pile and down != len(pile) - 1:
            raise InvalidPositionError("the reserve shows exactly its top card")
        if kind is Kind.FOUNDATION and pile:
            if len(pile) > self.foundations.max_cards:
                raise InvalidPositionError(f"{pid} holds more than {self.foundations.max_cards}")
            if self._fkey[pile[0]] not in self._f_empty_keys[p]:
                raise InvalidPositionError(f"{pid} cannot start with {TEXT_OF[pile[0]]}")
            for below, above in itertools.pairwise(pile):
                if self._fkey[above] != self._fwanted[below]:
                    raise InvalidPositionError(f"{pid}: {TEXT_OF[above]} is not built on "
                                               f"{TEXT_OF[below]}")
