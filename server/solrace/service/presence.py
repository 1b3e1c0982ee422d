"""Who is connected for each racer, and what follows from it.

A racer has one live connection at a time (a second one takes over: the first is told
``replaced``); each racer's live connections are counted (the counts are kept per race, so a
race rebuilt from the store still knows who is online); going online or offline is told to
the race (an unnumbered ``presence`` message), and a running race that every racer still racing
has left ends ``abandon_ms`` later unless one comes back (``reason: "abandoned"``).

:class:`Presence` does not know the hub: it is given the clock, how to find a race held here,
how to publish on it and record an outcome, whether the store takes writes, and which ids are
tournaments (an entrant taken over is told as one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from solrace.core.effects import Session
from solrace.core.race import Race
from solrace.core.race_parts import Outcome
from solrace.protocol import messages
from solrace.protocol.event import Event
from solrace.service.timers import Deadlines
from solrace.settings import ABANDON_MS


class Peer(Session, Protocol):
    """A session that can be told things and bound to a racer (a WebSocket connection, or
    one of another process)."""

    def __hash__(self) -> int: ...

    def send(self, msg: dict[str, Any] | Event, urgent: bool = True) -> None: ...

    def attach(self, race: str, player: str) -> None:
        """Speak for ``player`` of ``race`` (and keep the seat)."""

    def detach(self, race: str) -> str | None:
        """Stop speaking for a racer of ``race``; which one it was."""


class Presence:
    """See the module docstring."""

    def __init__(self, clock: Callable[[], int], get: Callable[[str], Race | None],
                 publish: Callable[[str, Event], None],
                 record: Callable[[Race, Outcome], None], writable: Callable[[], bool],
                 is_tournament: Callable[[str], bool]) -> None:
        self.clock = clock
        self.get = get
        self.publish = publish
        self.record = record
        self.writable = writable
        self.is_tournament = is_tournament
        #: Told the live connections of a player bound in a unit that is no race (an arena's
        #: entrant): (unit, player, connections).
        self.on_unit: Callable[[str, str, int], None] | None = None
        #: How long a running race every racer still racing has left goes on (ms).
        self.abandon_ms = ABANDON_MS
        #: Live connections per racer, by race (not durable).
        self.online: dict[str, dict[str, int]] = {}
        #: The one connection bound to each racer: (race, player) -> session.
        self.bound: dict[tuple[str, str], Peer] = {}
        #: Races every racer still racing has left: when they end.
        self.deserted = Deadlines(clock, self._desert)

    def bind(self, session: Peer, race_id: str, player: str) -> None:
        """``session`` speaks for ``player`` of ``race_id`` from now on. A racer has one live
        connection: one that spoke for it before is told (``replaced``) and unbound."""
        if session.players.get(race_id) == player:
            return
        self.unbind(session, race_id)
        older = self.bound.get((race_id, player))
        if older is not None:
            older.send(messages.replaced(race_id, player,
                                         tournament=self.is_tournament(race_id)))
            self.unbind(older, race_id)
        session.attach(race_id, player)
        self.bound[race_id, player] = session
        self.count(race_id, player, +1)

    def unbind(self, session: Peer, race_id: str) -> None:
        player = session.detach(race_id)
        if player is not None:
            if self.bound.get((race_id, player)) is session:
                del self.bound[race_id, player]
            self.count(race_id, player, -1)

    def count(self, race_id: str, player: str, delta: int) -> None:
        """One more (or one fewer) live connection for a racer; when it goes online or
        offline, the race is told (an unnumbered ``presence`` message)."""
        race = self.get(race_id)
        if race is None and self.on_unit is not None:
            # An arena's entrant: his connections are counted here, the arena decides.
            counts = self.online.setdefault(race_id, {})
            after = max(0, counts.get(player, 0) + delta)
            if after:
                counts[player] = after
            else:
                counts.pop(player, None)
                if not counts:
                    del self.online[race_id]
            self.on_unit(race_id, player, after)
            return
        if race is None or player not in race.racers:
            return
        counts = self.online.setdefault(race_id, {})
        before = counts.get(player, 0)
        after = max(0, before + delta)
        if after:
            counts[player] = after
        else:
            counts.pop(player, None)
            if not counts:
                del self.online[race_id]
        racer = race.racers[player]
        racer.connections = after
        if after:
            racer.offline_since = None
        elif before or racer.offline_since is None:
            racer.offline_since = self.clock()
        if (after > 0) != (before > 0):
            self.publish(race_id, Event(messages.presence(race, player)))
            self.check(race)

    def restore(self, race: Race) -> None:
        """A race rebuilt from the store: who is online, as counted here; nobody knows since
        when a racer rebuilt here has been away: from now."""
        online = self.online.get(race.race, {})
        now = self.clock()
        for player, racer in race.racers.items():
            racer.connections = online.get(player, 0)
            racer.offline_since = None if racer.connections else now

    def check(self, race: Race) -> None:
        """A running race whose racers still racing all left ends ``abandon_ms`` later,
        unless one of them comes back first."""
        racing = race.still_racing()
        deserted = race.status == "running" and bool(racing) and all(
            r.connections == 0 for r in racing)
        if deserted:
            if race.race not in self.deserted.timers:
                self.deserted.set(race.race, self.clock() + self.abandon_ms)
        else:
            self.deserted.cancel(race.race)

    def _desert(self, race_id: str) -> None:
        race = self.get(race_id)
        if race is None or race.status != "running" or not self.writable():
            return
        if all(r.connections == 0 for r in race.still_racing()):
            self.record(race, race.abandon(self.clock()))

    def forget(self, race_id: str) -> None:
        self.deserted.cancel(race_id)

    def close(self) -> None:
        self.deserted.close()
