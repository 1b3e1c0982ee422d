"""What the dispatcher works with: who sends a command (:class:`Session`), what it is given
besides the command (:class:`World`, with :class:`Entropy` and a :class:`DealDrawer`), what
it cannot wait for (:class:`Pending`), and what it returns (:class:`Effects`: outcomes to make
durable, then steps to take). Pure types: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from solrace.core.arena import Arena
from solrace.core.identity import Who
from solrace.core.quotas import Caps
from solrace.core.race import Race
from solrace.core.race_parts import Outcome, RaceError
from solrace.core.tournament import Tournament, TOutcome

Message = dict[str, Any]


class Session(Protocol):
    """A client as the dispatcher sees it: the racer it speaks for in each race it joined, the
    seat it took in each race (kept after ``leave``: one connection, one seat per race), the
    races it follows (with whether it wants the other racers' boards), where it is (client
    address, connection number) for the limits per client, and the player it is, if any."""

    id: int
    address: str
    players: dict[str, str]
    seats: dict[str, str]
    follows: dict[str, bool]
    #: The races where it asked for lean ``state`` replies (``join`` with ``lean``).
    lean: set[str]
    #: The player it is (None: anonymous): a player races under his name, once per race.
    who: Who | None


class Pending(Exception):
    """The command needs something the dispatcher cannot wait for: the caller awaits
    ``hub.prepare(exc)``, then dispatches the command again."""


class NotLoaded(Pending):
    """The race (or tournament) is not in memory: load it, then dispatch the command again."""

    def __init__(self, race: str, tournament: bool = False) -> None:
        super().__init__(race)
        self.race = race
        self.tournament = tournament


class NeedsHint(Pending):
    """A hint for this racer at this position (``seq``) has not been worked out yet: the
    solver works it out from the racer's actions (see :mod:`solrace.solver.assist`)."""

    def __init__(self, race: str, player: str, seq: int, game: str, seed: int,
                 actions: list[str], address: str) -> None:
        super().__init__(race)
        self.race = race
        self.player = player
        self.seq = seq
        self.game = game
        self.seed = seed
        self.actions = actions
        self.address = address


class NeedsDeals(Pending):
    """Not enough winnable deals of ``game`` are ready here: take ``n`` from the pool (see
    :mod:`solrace.solver.pool`), then dispatch the command again."""

    def __init__(self, game: str, n: int) -> None:
        super().__init__(game)
        self.game = game
        self.n = n


# ------------------------------------------------------------------------------- steps
class Reply(NamedTuple):
    """Send this ready message to the sender."""

    msg: Message


class Later(NamedTuple):
    """A reply built by ``build`` once the effects' writes are on their way, in the same call
    (:meth:`solrace.service.hub.Hub.run`): the racer's state after a move, which only he
    waits for, does not hold up the commit that carries the move to everyone else."""

    build: Callable[[], Message]


class Emit(NamedTuple):
    """Publish the effects' outcomes: events to every follower, boards, first states."""


class Follow(NamedTuple):
    race: str
    boards: bool = True
    lean: bool = False  # its racer's moves are answered with lean states


class Unfollow(NamedTuple):
    race: str


class Bind(NamedTuple):
    """The sender speaks for racer ``player`` of ``race`` from now on."""

    race: str
    player: str


class Unbind(NamedTuple):
    race: str


class Snapshot(NamedTuple):
    """Send the race's snapshot as the sender may see it, built when it is sent."""

    race: str
    rid: Any = None


class State(NamedTuple):
    """Send the racer's current ``state``, built when it is sent."""

    race: str
    player: str


class Announce(NamedTuple):
    """Publish this unnumbered message to everyone following the race (``to``: only to the
    connection that speaks for that racer of it)."""

    race: str
    msg: Message
    to: str | None = None


class TView(NamedTuple):
    """Send the tournament's view as the sender sees it, built when it is sent."""

    tournament: str
    rid: Any = None


class Seats(NamedTuple):
    """Send an entrant his seats in the races of the current round (he came back)."""

    tournament: str
    entrant: str


class Entered(NamedTuple):
    """``entrant`` of ``tournament`` joined from ``address`` (for that address's share)."""

    tournament: str
    entrant: str
    address: str


class AView(NamedTuple):
    """Send the arena's view (with the sender's own row), built when it is sent."""

    arena: str
    rid: Any = None


class ASeat(NamedTuple):
    """Send an entrant of an arena his seat in the race he is in (he came back)."""

    arena: str
    player: str


Step = (Reply | Later | Emit | Follow | Unfollow | Bind | Unbind | Snapshot | State | Announce
        | TView | Seats | Entered | AView | ASeat)
EMIT = Emit()


@dataclass(slots=True)
class Effects:
    """What a command does. ``outcomes`` (of ``race``) are made durable first; then ``steps``
    run in order. ``created``: a new race to hold and store (forgotten if that write fails).
    ``barrier``: the connection reads its next command only after the steps ran (a command
    that binds the connection to a racer must be done before the racer's next move is read).
    ``rid`` answers a failed write with ``unavailable``. ``opened``: the outcome of
    ``created`` itself when it is made with its racers seated (a rematch in one click), made
    durable with it and emitted after the steps."""

    race: Race | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    rid: Any = None
    created: Race | None = None
    opened: Outcome | None = None
    barrier: bool = False
    tournament: Tournament | None = None
    touts: list[TOutcome] = field(default_factory=list)
    tcreated: bool = False  # ``tournament`` is new
    arena: Arena | None = None
    aouts: list[TOutcome] = field(default_factory=list)
    acreated: bool = False  # ``arena`` is new


class Entropy(Protocol):
    """Where new secrets and ids come from (``secrets`` in the server; a seeded generator in
    a test): the dispatcher draws nothing itself."""

    def token(self) -> str: ...

    def salt(self) -> str: ...

    def race_id(self) -> str: ...

    def tournament_id(self) -> str: ...


class DealDrawer(Protocol):
    """New deals (:class:`solrace.solver.deal_source.DealSource`): a random seed, or a winnable
    one from what is ready."""

    demo: bool

    def ready(self, game: str) -> int: ...

    def draw(self, game: str, winnable: bool = False) -> int: ...


class World(Protocol):
    """What the dispatcher is given besides the command: the races and tournaments held in
    memory (read; the dispatcher changes a race only through its own methods), the caps and
    settings, what the store says (``writable``), hint answers already worked out, and where
    randomness comes from. The hub is one; a test builds its own."""

    @property
    def races(self) -> Mapping[str, Race]: ...

    @property
    def finished(self) -> Mapping[str, Race]: ...

    @property
    def tournaments(self) -> Mapping[str, Tournament]: ...

    @property
    def arenas(self) -> Mapping[str, Arena]: ...

    @property
    def reloading(self) -> Container[str]: ...

    @property
    def writable(self) -> bool: ...

    @property
    def caps(self) -> Caps: ...

    @property
    def countdown_ms(self) -> int: ...

    @property
    def claim_after_ms(self) -> int: ...

    @property
    def deals(self) -> DealDrawer: ...

    @property
    def entropy(self) -> Entropy: ...

    def net(self, address: str) -> str:
        """The tag of a client address's network (solrace.core.keys.net_tag)."""

    def hint_answer(self, race: str, player: str, seq: int) -> Message | None:
        """The hint worked out for this racer at this position, if any."""

    def hint_refusal(self, address: str) -> RaceError | None:
        """Why no hint can be worked out for this client now (no solver, too many in
        flight), or None."""

    def entrants_from(self, tournament: str, address: str) -> int:
        """Entrants of the tournament who joined from this client address."""

    def can_play_bot(self, level: int) -> bool:
        """Can this server play a house bot of ``level`` (the solver's levels need it)?"""
