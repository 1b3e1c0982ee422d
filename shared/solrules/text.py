"""Plain-text rendering of a position, for terminals and logs."""

from __future__ import annotations

from .core import Game


def render(game: Game, reveal: bool = False) -> str:
    """A legible multi-line picture of ``game``: one pile per line, ``##`` for a face-down card.

    Foundations share one line; the reserve and the stock show their size, as on a table.
    """
    board = game.board(reveal=reveal)
    piles = {p["pile"]: p["cards"] for p in board["piles"]}
    done, total = game.progress()
    lines = [f"{game.title}" + (f"  seed {game.seed}" if game.seed is not None else "")
             + f"  —  {done}/{total} home, {len(game.move_stack)} moves"]
    found = [pid for pid in game.pile_ids if pid.startswith("f")]
    cells = []
    for pid in found:
        cards = piles[pid]
        cells.append(f"{pid}:{cards[-1] if cards else '--'}" + (f"({len(cards)})" if cards else ""))
    for i in range(0, len(cells), 8):
        lines.append("  ".join(cells[i:i + 8]))
    # The reserve, stock and waste show what a player sees on a table (the top card, a count),
    # or every card, bottom to top, when revealing.
    for pid, seen in (("r", 1), ("s", 0), ("w", 3)):
        if pid not in piles:
            continue
        cards = piles[pid]
        shown = cards if reveal else cards[len(cards) - seen:] if seen else []
        body = " ".join(c or "##" for c in shown) if shown else ("--" if not cards else "")
        lines.append(f"{pid:>3}: {body}  ({len(cards)} cards)".replace(":   (", ": (", 1))
    for pid in game.pile_ids:
        if pid.startswith("t"):
            cards = piles[pid]
            body = " ".join(c or "##" for c in cards) if cards else "(empty)"
            lines.append(f"{pid:>3}: {body}")
    return "\n".join(lines)
