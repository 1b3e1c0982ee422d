"""The commands a client sends, typed: what :func:`solrace.protocol.codec.parse_command` makes of
a message once it is checked, and what the dispatcher (:mod:`solrace.protocol.dispatch`) and the
connection's services (:mod:`solrace.service.front`) act on. Each carries its ``rid`` (the
client's request id, echoed in the reply). Plain frozen dataclasses: no parsing, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Create:
    game: str
    players: int = 2
    time_limit: int = 600
    undo: bool = True
    seed: int | None = None
    rid: Any = None
    public: bool = False  # listed in the lobby of open races
    hints: bool = False  # racers may ask for hints (counted in the standings)
    winnable: bool = False  # a secret deal from the catalogue of certified-winnable deals
    rated: bool = False  # changes its players' ratings (not with seed or hints)


@dataclass(frozen=True)
class Join:
    race: str
    name: str | None = None
    token: str | None = None
    rid: Any = None
    boards: bool = True  # added: the other racers' `board` views (a bot needs none)
    bot: bool = False  # a program, labelled as such to everyone
    lean: bool = False  # added: moves answered with lean states (the client knows the rules)


@dataclass(frozen=True)
class Watch:
    race: str
    rid: Any = None


@dataclass(frozen=True)
class Leave:
    race: str
    rid: Any = None


@dataclass(frozen=True)
class Start:
    race: str
    token: str
    rid: Any = None


@dataclass(frozen=True)
class Ready:
    race: str
    rid: Any = None


@dataclass(frozen=True)
class MoveCmd:
    race: str
    move: str
    seq: int
    rid: Any = None


@dataclass(frozen=True)
class Undo:
    race: str
    seq: int
    rid: Any = None


@dataclass(frozen=True)
class Resign:
    race: str
    rid: Any = None


@dataclass(frozen=True)
class Rematch:
    race: str
    rid: Any = None
    want: bool = True  # added: false says no to a rematch in one click


@dataclass(frozen=True)
class Hint:
    race: str
    rid: Any = None


@dataclass(frozen=True)
class Claim:
    """End the race: every other racer still racing has been offline for a minute."""

    race: str
    rid: Any = None


@dataclass(frozen=True)
class Ping:
    rid: Any = None


@dataclass(frozen=True)
class TournamentCmd:
    """Every ``tournament_*`` message: ``action`` is the part after ``tournament_``."""

    action: str
    tournament: str | None
    rid: Any = None
    token: str | None = None
    name: str | None = None
    code: str | None = None
    bot: bool = False
    flag: bool | None = None  # entry: open; pause: paused
    entrant: str | None = None
    round: int | None = None
    create: dict[str, Any] | None = None  # tournament_create's settings, checked
    level: int | None = None  # add_bot: the house bot's level (1-5)

    @property
    def race(self) -> str:
        """The unit the command is for (routing uses races and tournaments alike)."""
        return self.tournament or ""


@dataclass(frozen=True)
class PlayerCmd:
    """Who the connection is: ``me``, ``set_name``, ``set_password``, ``sign_in``."""

    action: str
    rid: Any = None
    name: str | None = None
    password: str | None = None
    old: str | None = None


@dataclass(frozen=True)
class PlayCmd:
    """One click to a race, and playing together: ``seek`` (``resume``: take over this
    player's seek, kept a few seconds after its page closed), ``cancel_seek``, ``play_bot``,
    ``daily``, and the challenges (solrace.service.challenges): ``challenge`` (``to``: a
    player's name, or none for a link), ``challenge_accept``, ``challenge_decline``,
    ``challenge_cancel``, ``challenge_get`` (each with ``challenge``, its id) and
    ``challenges`` (the player's open ones)."""

    action: str
    rid: Any = None
    game: str = ""
    time_limit: int = 300
    rated: bool = True
    bot_after: int = 10
    level: int = 0
    resume: bool = False
    to: str | None = None
    challenge: str | None = None


@dataclass(frozen=True)
class ModCmd:
    """A moderator's decision on fair play: ``mod_clear {race, player}`` (a flagged result
    counts after all) or ``mod_close {player, reason?}`` (the account is closed for fair
    play). ``player`` is a player's id."""

    action: str
    rid: Any = None
    player: str = ""
    race: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class ArenaCmd:
    """An arena's command: ``arena_create {game, minutes, starts_in?, time_limit?, name?,
    rated?}``, ``arena_join {arena}``, ``arena_pause {arena}``, ``arena_watch {arena}``,
    ``arena_leave {arena}`` (stop following it)."""

    action: str
    rid: Any = None
    arena: str = ""
    game: str = ""
    minutes: int = 0
    starts_in: int = 0
    time_limit: int = 300
    name: str | None = None
    rated: bool = True

    @property
    def race(self) -> str:
        """The unit the command is for (routing: an arena is a unit, as a tournament is)."""
        return self.arena


#: The commands a connection's services run, not a race (solrace.service.front).
ServiceCmd = PlayerCmd | PlayCmd | ModCmd

Command = (Create | Join | Watch | Leave | Start | Ready | MoveCmd | Undo | Resign | Rematch
           | Hint | Claim | Ping | TournamentCmd | PlayerCmd | PlayCmd | ModCmd | ArenaCmd)
