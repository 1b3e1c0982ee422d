"""Messages between server processes on Redis, each written and read here only.

Two kinds travel, both as msgpack maps whose ``k`` says what they are (short keys: thousands
go by every second):

- **to one process** (its inbox channel, see :mod:`solrace.cluster`): a command forwarded to the
  process that runs its race (:class:`Forward`) and what comes back (:class:`Deliver`: a message
  for one of the sender's connections; :class:`Op`: that connection follows or speaks for
  something now; :class:`Done`), news of connections (:class:`Gone`, :class:`Hello`), and a
  message for every connection of a player there (:class:`ToPlayer`);
- **to every process following a unit** (its channel and stream, see
  :mod:`solrace.bus.redis_bus`): a race event (:class:`EventEnvelope`), one racer's board in
  each view its followers elsewhere may see (:class:`BoardEnvelope`), and a control message
  about the unit itself (:class:`Owner`: a new owner asks who is there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solrace.core.identity import Who

Wire = dict[str, Any]


@dataclass(frozen=True)
class Where:
    """What one connection is in one unit: the racers it speaks for, its seats, the races it
    follows (with whether it wants the other racers' boards), and who it is."""

    unit: str
    conn: int
    address: str
    players: dict[str, str]
    seats: dict[str, str]
    follows: dict[str, bool]
    who: Who | None = None
    #: The races of ``follows`` where it asked for lean states.
    lean: list[str] = field(default_factory=list)

    def fields(self) -> Wire:
        out: Wire = {"u": self.unit, "c": self.conn, "a": self.address, "pl": self.players,
                     "st": self.seats, "fo": self.follows}
        if self.lean:
            out["ln"] = self.lean
        if self.who is not None:
            out["w"] = [self.who.id, self.who.name, [list(r) for r in self.who.ratings],
                        self.who.account]
        return out

    @classmethod
    def read(cls, msg: Wire) -> Where:
        who = None
        if msg.get("w") is not None:
            pid, name, ratings, *rest = msg["w"]
            who = Who(pid, name, tuple((str(g), int(r), bool(p)) for g, r, p in ratings),
                      account=bool(rest[0]) if rest else False)
        return cls(msg["u"], msg["c"], msg["a"], dict(msg["pl"]), dict(msg["st"]),
                   dict(msg["fo"]), who, [str(r) for r in msg.get("ln", ())])


# --------------------------------------------------------------------- to one process
@dataclass(frozen=True)
class Forward:
    """Run this command for one of ``sender``'s connections (``where``); answer with
    :class:`Done` (request ``req``) once its steps ran."""

    sender: str
    req: int
    command: Wire  # the command as a client message (solrace.protocol.codec.to_dict)
    where: Where


@dataclass(frozen=True)
class Deliver:
    """Send this ready message (JSON) to connection ``conn``."""

    conn: int
    payload: bytes


@dataclass(frozen=True)
class Op:
    """Connection ``conn`` now follows / no longer follows ``race``, or speaks / no longer
    speaks for a racer of it: ``op`` is follow (``value``: boards), unfollow, attach
    (``value``: the player) or detach."""

    conn: int
    op: str
    race: str
    value: Any = None


@dataclass(frozen=True)
class Done:
    """The forwarded command ``req`` has been carried out."""

    req: int


@dataclass(frozen=True)
class Gone:
    """Connection ``conn`` of process ``sender`` closed."""

    sender: str
    conn: int


@dataclass(frozen=True)
class Hello:
    """To a unit's new owner: this connection of ``sender`` is in the unit."""

    sender: str
    where: Where


@dataclass(frozen=True)
class ToPlayer:
    """Send this ready message (JSON) to every connection of player ``player`` there (a
    challenge, its answer, a seat: solrace.service.online)."""

    player: str
    payload: bytes
    #: The message gives him a seat (a challenge accepted): his seeks there end.
    seated: bool = False


Inbox = Forward | Deliver | Op | Done | Gone | Hello | ToPlayer


def write(msg: Inbox) -> Wire:
    """An inbox message on the wire."""
    if isinstance(msg, Forward):
        return {"k": "cmd", "f": msg.sender, "q": msg.req, "m": msg.command,
                **msg.where.fields()}
    if isinstance(msg, Deliver):
        return {"k": "msg", "c": msg.conn, "j": msg.payload}
    if isinstance(msg, Op):
        return {"k": "op", "c": msg.conn, "op": msg.op, "r": msg.race, "x": msg.value}
    if isinstance(msg, Done):
        return {"k": "done", "q": msg.req}
    if isinstance(msg, Gone):
        return {"k": "gone", "f": msg.sender, "c": msg.conn}
    if isinstance(msg, ToPlayer):
        return {"k": "pl", "o": msg.player, "j": msg.payload, "s": int(msg.seated)}
    return {"k": "hello", "f": msg.sender, **msg.where.fields()}


def read(msg: Wire) -> Inbox | None:
    """An inbox message from the wire; None for a kind this process does not know."""
    kind = msg.get("k")
    if kind == "cmd":
        return Forward(msg["f"], msg["q"], msg["m"], Where.read(msg))
    if kind == "msg":
        return Deliver(msg["c"], msg["j"])
    if kind == "op":
        return Op(msg["c"], msg["op"], msg["r"], msg.get("x"))
    if kind == "done":
        return Done(msg["q"])
    if kind == "gone":
        return Gone(msg["f"], msg["c"])
    if kind == "hello":
        return Hello(msg["f"], Where.read(msg))
    if kind == "pl":
        return ToPlayer(msg["o"], msg["j"], bool(msg.get("s")))
    return None


# ----------------------------------------------------------- to a unit's followers
@dataclass(frozen=True)
class EventEnvelope:
    """A message of race ``race`` published by ``sender``: numbered ``v`` for everyone, or
    (``to``) for one racer only; ``payload`` is its JSON."""

    race: str
    sender: str
    v: int | None
    to: str | None
    payload: bytes


@dataclass(frozen=True)
class BoardEnvelope:
    """One racer's board (``player``) for one audience of race ``race``, as every distinct
    view its followers on other processes may see: ``payloads`` the views' JSON, ``keys``
    which view each kind of viewer gets (see solrace.bus.redis_bus), ``default`` the view of
    a viewer with no key."""

    race: str
    sender: str
    player: str
    audience: str
    keys: dict[str, int]
    default: int | None
    payloads: list[bytes]


@dataclass(frozen=True)
class Owner:
    """Process ``pid`` owns ``unit`` now: the others tell it which of their connections are
    in the unit (:class:`Hello`)."""

    unit: str
    pid: str


Envelope = EventEnvelope | BoardEnvelope | Owner


def write_envelope(msg: Envelope, sender: str) -> Wire:
    """A message for a unit's followers on the wire (``sender``: this process)."""
    if isinstance(msg, EventEnvelope):
        return {"k": "e", "r": msg.race, "p": msg.sender, "v": msg.v, "t": msg.to,
                "j": msg.payload}
    if isinstance(msg, BoardEnvelope):
        return {"k": "b", "r": msg.race, "p": msg.sender, "o": msg.player, "a": msg.audience,
                "m": msg.keys, "d": msg.default, "j": msg.payloads}
    return {"k": "c", "m": "owner", "u": msg.unit, "p": sender, "pid": msg.pid}


def read_envelope(msg: Wire) -> Envelope | None:
    """A message for a unit's followers from the wire; None for a kind not known here."""
    kind = msg.get("k")
    if kind == "e":
        return EventEnvelope(msg["r"], msg["p"], msg.get("v"), msg.get("t"), msg["j"])
    if kind == "b":
        return BoardEnvelope(msg["r"], msg["p"], msg["o"], msg["a"], msg["m"], msg["d"],
                             msg["j"])
    if kind == "c" and msg.get("m") == "owner":
        return Owner(msg["u"], str(msg.get("pid", msg["p"])))
    return None


def sender_of(msg: Wire) -> str | None:
    """Which process put a message on a unit's channel (it skips its own)."""
    sender = msg.get("p")
    return sender if isinstance(sender, str) else None


def numbered(msg: Wire) -> bool:
    """Is this a numbered race event (kept in the unit's stream, to catch up with)?"""
    return msg.get("k") == "e" and msg.get("v") is not None
