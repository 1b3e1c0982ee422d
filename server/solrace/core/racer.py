"""A racer of a race: who he is, his own game of the shared deal, what he did and when, and his
result as it stands (finished, resigned, aborted, hints). :class:`solrace.core.race.Race` holds
them and decides; a racer only answers for himself."""

from __future__ import annotations

from dataclasses import dataclass, field

import solrules

from solrace.core.errors import Code
from solrace.core.race_parts import Message, RaceError
from solrace.settings import ABORT_MOVES, HINT_PENALTY_MS


@dataclass
class Racer:
    player: str
    name: str
    token: str
    game: solrules.Game
    joined_at: int
    bot: bool = False
    ready: bool = False
    actions: list[str] = field(default_factory=list)  # accepted move texts and "undo"
    times: list[int] = field(default_factory=list)  # when each action was accepted
    finished_at: int | None = None
    place: int | None = None
    resigned: bool = False
    #: When he resigned (unix ms; from the log's resign entry, so after a restart too): a
    #: resign early in a rated race is a walkout (solrace.core.scoring.early_resign).
    resigned_at: int | None = None
    reached_at: int = 0  # when the foundation count last changed (tie-break)
    hints: int = 0  # hints asked for (each position counts once)
    #: The player this racer is (his public id), his shown rating in this game when he
    #: joined (and whether it was provisional); a house bot's level. None for anonymous
    #: racers and other bots.
    pid: str | None = None
    rating: int | None = None
    level: int | None = None
    provisional: bool = False
    #: The tag of the network he joined from (solrace.core.keys.net_tag; never on the wire)
    #: and whether he was an account (a player with a password) then: the rules of rated play
    #: (solrace.core.scoring) need both, after a restart too, so both are in his join entry.
    net: str = ""
    account: bool = False
    hint_seq: int = -1  # the seq of the position of the last hint
    connections: int = 0  # live connections bound to this racer (not durable)
    #: Since when no connection speaks for this racer (unix ms; not durable: a race rebuilt
    #: from the store counts from then).
    offline_since: int | None = None

    @property
    def seq(self) -> int:
        return len(self.actions)

    @property
    def done(self) -> bool:
        return self.finished_at is not None or self.resigned

    @property
    def moves(self) -> int:
        """Moves he made (undos are not moves)."""
        return len(self.actions) - self.actions.count("undo")

    @property
    def aborted(self) -> bool:
        """Did he not commit to the race? Fewer than :data:`ABORT_MOVES` moves (a racer who
        never sat, or resigned or left at once): his race is unrated for him, and out of his
        statistics and streaks (only meaningful once the race is over)."""
        return self.finished_at is None and self.moves < ABORT_MOVES

    def refused(self, text: str) -> RaceError:
        """Why ``text``, which is not one of the legal moves of his position, is refused, in
        words a player understands."""
        try:
            move = solrules.Move.from_text(text)
        except ValueError as exc:
            return RaceError(Code.ILLEGAL_MOVE, str(exc) or f"{text!r} is not a move")
        if move.text() != text:
            return RaceError(Code.ILLEGAL_MOVE, f"write the move as listed: {move.text()}")
        return RaceError(Code.ILLEGAL_MOVE,
                         self.game.refusal(move) or "that move is not legal here")

    @property
    def penalty_ms(self) -> int:
        """What the racer's hints cost him in the standings (see :func:`Race.standings`)."""
        return self.hints * HINT_PENALTY_MS

    def identity(self) -> Message:
        """Who the racer is beyond his name, for the pages: ``id`` and ``rating`` (a
        player), ``level`` (a house bot); empty for anyone else."""
        out: Message = {}
        if self.pid is not None:
            out["id"] = self.pid
            if self.rating is not None:
                out["rating"] = self.rating
                if self.provisional:
                    out["provisional"] = True
        if self.level is not None:
            out["level"] = self.level
        return out

    def progress(self) -> Message:
        foundation, total = self.game.progress()
        return {"foundation": foundation, "total": total, "moves": len(self.actions)}
