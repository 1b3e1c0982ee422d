"""Moves and the errors of the rules: a :class:`Move` is a value with a text notation, parsed
without a position; what the rules refuse is said by :exc:`IllegalMoveError`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["IllegalMoveError", "InvalidMoveError", "InvalidPositionError", "Move"]


class InvalidMoveError(ValueError):
    """A move text that does not parse (``"t3->f1"``, ``"t2>t5/1"``); needs no position to say."""


class IllegalMoveError(ValueError):
    """A well-formed move that the rules refuse in the current position; the message says why."""


class InvalidPositionError(ValueError):
    """A position text that does not describe a position of a known game."""


_MOVE_RE = re.compile(r"([a-z]+[0-9]*)>([a-z]+[0-9]*)(?:/([0-9]+))?")


@dataclass(frozen=True, slots=True)
class Move:
    """Move the top ``count`` cards of pile ``src`` onto pile ``dst`` as a unit.

    Text notation: ``"t3>f1"`` (one card), ``"t2>t5/3"`` (three cards), ``"s>w"`` (deal from the
    stock), ``"w>s"`` (turn the waste over). Parsing needs no position; legality does.
    """

    src: str
    dst: str
    count: int = 1
    _text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.src, str) or not isinstance(self.dst, str):
            raise InvalidMoveError("a move's source and destination are pile ids such as 't3'")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise InvalidMoveError(f"a move takes 1 card or more, not {self.count!r}")
        text = f"{self.src}>{self.dst}" if self.count == 1 else (
            f"{self.src}>{self.dst}/{self.count}")
        # Frozen: the text is computed once here, since servers send it for every legal move.
        object.__setattr__(self, "_text", text)

    @classmethod
    def from_text(cls, text: str) -> Move:
        """Parse a move text; raises :exc:`InvalidMoveError` if it is not one."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"a move is a text such as 't3>f1', not {type(text).__name__}")
        m = _MOVE_RE.fullmatch(text.strip())
        if m is None:
            raise InvalidMoveError(
                f"{text!r} is not a move: write SOURCE>DESTINATION, e.g. 't3>f1' or 't2>t5/3'"
            )
        src, dst, count = m.group(1), m.group(2), m.group(3)
        if count is None:
            return cls(src, dst, 1)
        n = int(count)
        if n < 2 or len(count) > 3:
            raise InvalidMoveError(f"{text!r}: a card count after '/' must be 2 or more")
        return cls(src, dst, n)

    def text(self) -> str:
        """The move text, e.g. ``"t2>t5/3"``."""
        return self._text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Move.from_text({self.text()!r})"
