"""The race room: a sans-I/O state machine for one race.

A :class:`Race` takes parsed commands plus the current time (unix milliseconds) and returns an
:class:`Outcome`: the numbered race events (:class:`RaceEvent`), the racer whose ``state`` is
the reply, and the log entries that must be made durable before any of it is sent. It never
imports asyncio, websockets or sqlite3, never reads the clock, and never builds wire messages
(:mod:`solrace.protocol.messages` does, and :mod:`solrace.core.views` decides who sees which
card). It is deterministic: replaying its log with the same times rebuilds the same race (that
is how the server recovers after a crash, and how it rebuilds a race whose write failed).

Every command method either raises :class:`RaceError` *before* changing anything, or applies the
command completely. Rules are never decided here: every move is checked and applied by
``solrules``.
"""

from __future__ import annotations

import hmac
from typing import Any

import solrules

from solrace.core import daily, last_racer
from solrace.core.errors import Code
from solrace.core.race_parts import (
    LogEntry,
    Message,
    Options,
    Outcome,
    RaceError,
    RaceEvent,
    Status,
    commitment,
)
from solrace.core.racer import Racer
from solrace.core.shared_deal import SharedDeal
from solrace.core.standings import places_of, rank_of, table_of, time_of
from solrace.settings import (
    CLAIM_AFTER_MS,
    COUNTDOWN_S,
    EMPTY_LOBBY_TTL_MS,
    LAST_RACER_IDLE_MS,
    LOBBY_TTL_MS,
    MAX_ACTIONS,
)


class Race:
    """One race: a seeded deal shared by up to ``options.players`` racers.

    Lifecycle: lobby → countdown → running → finished. The countdown and the time limit end
    in :meth:`tick`, which the caller runs at :meth:`next_deadline`; transitions happen at
    their scheduled times even when ``tick`` runs late, so a replay gives the same result.
    ``deal`` is the group of races playing this deal (see :mod:`solrace.core.shared_deal`): a
    race on its own, or a tournament round.
    """

    def __init__(
        self,
        race: str,
        game: str,
        seed: int,
        salt: str,
        options: Options,
        created_at: int,
        host_token: str,
        countdown_ms: int = int(COUNTDOWN_S * 1000),
        seed_chosen: bool = False,
        seated_until: int | None = None,
        forfeit: bool = False,
        absent_ends: bool = False,
        last_idle_ms: int = LAST_RACER_IDLE_MS,
    ) -> None:
        self.race = race
        self.game = game
        self.seed = seed
        self.salt = salt
        self.options = options
        self.created_at = created_at
        self.host_token = host_token
        self.countdown_ms = countdown_ms
        self.seed_chosen = seed_chosen
        #: A race of a tournament: its racers are seated by the tournament, and it starts
        #: when they all joined (said ready) or at this time, whichever comes first.
        self.seated_until = seated_until
        #: A racer absent when it starts loses (is resigned at once): a knockout game.
        self.forfeit = forfeit
        #: A seat not taken by ``seated_until`` ends the race there (``no_show``): a paired
        #: quick race does not take place with an empty seat (stored: a race made before this
        #: rule replays as it was played).
        self.absent_ends = absent_ends
        #: How long the last one racing may make no move (solrace.core.last_racer; stored: 0
        #: for a race made before the rule), and since when he is the last one.
        self.last_idle_ms = last_idle_ms
        self.last_since: int | None = None
        #: The tournament it belongs to, for its pages: {tournament, name, round} (not durable:
        #: the tournament sets it).
        self.tournament: dict[str, Any] | None = None
        #: The arena it belongs to, for its pages: {arena, name} (not durable: the arena sets
        #: it).
        self.arena: dict[str, Any] | None = None
        #: Who created the race (client address, connection), to count open lobbies per
        #: client; not durable.
        self.creator: tuple[str, int] | None = None
        #: The race a rematch of this one created, once someone asked (not durable), and
        #: the racers who want a rematch in one click (solrace.protocol.dispatch.rematch).
        self.rematch: str | None = None
        self.rematch_wants: set[str] = set()
        #: The solver's verdict on the deal, shown once it is revealed: ``{"verdict": "won",
        #: "moves": N}``, ``{"verdict": "lost"}`` or ``{"verdict": "unknown"}``; None until
        #: known (not durable: the hub works it out again).
        self.par: dict[str, Any] | None = None
        self.commitment = commitment(game, seed, salt)
        self.status: Status = "lobby"
        self.v = 0
        self.racers: dict[str, Racer] = {}
        self.starts_at: int | None = None
        self.started_at: int | None = None
        self.ends_at: int | None = None
        self.finished_at: int | None = None
        #: Why it ended: "done" (every racer finished or resigned), "humans_done" (every
        #: human racer did: bots still racing stop), "resigned" (every racer but one resigned:
        #: he won), "time" (the time limit), "idle" (the last one racing made no move for
        #: ``last_idle_ms``), "abandoned"
        #: (every racer still racing left), "claimed" (a racer claimed it: every other racer
        #: still racing had been offline for a minute), "expired" (a lobby nobody started),
        #: "no_show" (a quick race whose seats were not all taken within the grace).
        self.reason: str | None = None
        self._standings: list[Message] | None = None
        self.deal: SharedDeal[Race] = SharedDeal([self])
        if options.kind == "daily" and options.day is not None:
            self.deal.held_until = daily.reveal_at(options.day, options.time_limit, countdown_ms)
        #: The ``ratings`` body once the race is scored (solrace.service.scoring; not
        #: durable: read from the player store when the race is loaded).
        self.ratings: dict[str, Any] | None = None
        # Validate game and seed now, so a bad create fails before anything is stored.
        solrules.new_game(game, seed)

    # ----------------------------------------------------------------- helpers
    def _event(self, kind: str, **fields: Any) -> RaceEvent:
        self.v += 1
        return RaceEvent(self.v, kind, fields)

    def _log(self, at: int, kind: str, player: str | None = None, data: Any = None) -> LogEntry:
        return LogEntry(self.race, at, kind, player, data)

    def racer(self, player: str | None) -> Racer:
        """The racer ``player``; ``forbidden`` if the sender is not a racer of this race."""
        if player is None or player not in self.racers:
            raise RaceError(Code.FORBIDDEN, "only a racer of this race can do that; join first")
        return self.racers[player]

    def find_token(self, token: str) -> Racer | None:
        """The racer holding ``token``, compared in constant time against every racer."""
        found = None
        for racer in self.racers.values():
            if hmac.compare_digest(racer.token.encode(), token.encode()):
                found = racer
        return found

    def time_ms(self, racer: Racer) -> int | None:
        return time_of(racer, self.started_at)

    @property
    def revealed(self) -> bool:
        """May the deal (seed, salt, every card, the move lists) be shown to anyone now?"""
        return self.deal.revealed

    def rank(self, racer: Racer) -> tuple[int, int, int]:
        """The racer's result as a sort key (:func:`solrace.core.standings.rank_of`)."""
        return rank_of(racer, self.started_at)

    def places(self) -> dict[str, int]:
        """Every racer's place as things stand (equal results share one)."""
        return places_of(self.racers, self.started_at)

    def standings(self) -> list[Message]:
        """Every racer by place (:mod:`solrace.core.standings`), kept once the race is over."""
        if self._standings is not None:
            return self._standings
        table = table_of(self.racers, self.started_at, self.status == "finished")
        if self.status == "finished":
            self._standings = table
        return table

    def lobby_ends(self) -> int:
        """When this lobby closes unless it starts: soon if nobody joined it."""
        return self.created_at + (LOBBY_TTL_MS if self.racers else EMPTY_LOBBY_TTL_MS)

    def next_deadline(self) -> int | None:
        """When :meth:`tick` has something to do next (unix ms), or None."""
        if self.status == "lobby":
            if self.seated_until is not None:
                return self.seated_until
            return self.lobby_ends()
        if self.status == "countdown":
            return self.starts_at
        if self.status == "running":  # the time limit, or the last racer's idleness first
            idle = last_racer.ends_at(self)
            return self.ends_at if idle is None or self.ends_at is None else min(idle, self.ends_at)
        return None

    def due(self, now: int) -> bool:
        """Is a transition due at ``now`` (the timer may not have fired yet)?"""
        deadline = self.next_deadline()
        return deadline is not None and deadline <= now

    # ------------------------------------------------------------ transitions
    def tick(self, now: int) -> Outcome:
        """Run the transitions due at ``now``: abandoned lobby, countdown end, time limit (or
        the last one racing idle)."""
        out = Outcome()
        if self.status == "lobby" and self.seated_until is not None:
            if now >= self.seated_until and self.absent_ends and not all(
                    r.ready for r in self.racers.values()):
                # A seat not taken: the race does not take place (nobody races an empty
                # seat; the matchmaker puts whoever came back in the queue).
                out.log.append(self._log(self.seated_until, "seated"))
                out.extend(self._finish(self.seated_until, "no_show"))
            elif now >= self.seated_until:  # the grace is over: start with whoever is there
                # Logged, although the clock alone decides it: a race rebuilt without this
                # entry is one whose seats nobody told closed (see :meth:`reseat`).
                out.log.append(self._log(self.seated_until, "seated"))
                out.extend(self._countdown(self.seated_until))
        elif self.status == "lobby" and now >= self.lobby_ends():
            out.extend(self._finish(self.lobby_ends(), "expired"))
        if self.status == "countdown" and self.starts_at is not None and now >= self.starts_at:
            out.extend(self._begin(self.starts_at))
        end = self.next_deadline() if self.status == "running" else None
        if end is not None and now >= end:
            out.extend(self._finish(end, "time" if end == self.ends_at else "idle"))
        return out

    def _countdown(self, now: int) -> Outcome:
        self.status = "countdown"
        self.starts_at = now + self.countdown_ms
        return Outcome(events=[self._event("countdown", starts_at=self.starts_at)])

    def _begin(self, at: int) -> Outcome:
        self.status = "running"
        self.started_at = at
        self.ends_at = at + self.options.time_limit * 1000
        for racer in self.racers.values():
            racer.reached_at = at
        event = self._event("started", started_at=self.started_at, ends_at=self.ends_at,
                            progress={p: r.progress() for p, r in self.racers.items()})
        out = Outcome(events=[event], started=True, views=True)
        if self.forfeit:
            for racer in self.racers.values():
                if not racer.ready:  # absent when the game starts: it is lost
                    racer.resigned = True
                    out.events.append(self._event("resigned", player=racer.player))
            out.extend(self._maybe_over(at))
        return out

    def _finish(self, at: int, reason: str) -> Outcome:
        self.status = "finished"
        self.finished_at = at
        self.reason = reason
        event = self._event("race_over", standings=self.standings(), reason=reason)
        return Outcome(events=[event], finished=True, views=True)

    def _maybe_over(self, at: int) -> Outcome:
        """End the race once every racer is done; once every human racer is (bots still
        racing then stop where they stand: nobody waits on a program, and a bot that had not
        finished by then could only have finished after every human finisher, and is ahead
        of every human who resigned); or once a single racer is left racing and every other
        racer resigned (he has won: a race of two ends when one resigns). Else a person left
        alone racing is told how long he may stay idle (solrace.core.last_racer)."""
        if self.status != "running":
            return Outcome()
        racers = list(self.racers.values())
        if all(r.done for r in racers):
            return self._finish(at, "done")
        humans = [r for r in racers if not r.bot]
        if humans and all(r.done for r in humans):
            return self._finish(at, "humans_done")
        if len(racers) >= 2 and sum(1 for r in racers if r.resigned) == len(racers) - 1:
            return self._finish(at, "resigned")
        racer = last_racer.left(self)
        if racer is None or self.last_since is not None:
            return Outcome()
        self.last_since = at  # he is the last one racing: told how long he may stay idle
        return Outcome(events=[self._event("last_racer", player=racer.player, ends_at=at
                                           + self.last_idle_ms, idle_ms=self.last_idle_ms)])

    # --------------------------------------------------------------- commands
    def join(self, name: str, token: str, now: int, bot: bool = False, pid: str | None = None,
             rating: int | None = None, level: int | None = None,
             provisional: bool = False, net: str = "", account: bool = False) -> Outcome:
        """Add a new racer with a server-made ``token`` (lobby or countdown only): a player
        (``pid``, with his ``rating``; ``account`` if he has a password), an anonymous racer,
        or a bot (a house bot has its ``level``), from the network tagged ``net``. A player
        races once per race."""
        if self.status in ("running", "finished"):
            raise RaceError(Code.RACE_STARTED,
                            "the race has started: watch it, or join the next one")
        if len(self.racers) >= self.options.players:
            raise RaceError(Code.RACE_FULL, f"the race already has {self.options.players} racers")
        if pid is not None and any(r.pid == pid for r in self.racers.values()):
            raise RaceError(Code.FORBIDDEN, "you are already a racer of this race: resume with "
                            "your token")
        return self._add(name, token, now, bot, pid, rating, level, provisional, net, account)

    def _add(self, name: str, token: str, now: int, bot: bool, pid: str | None = None,
             rating: int | None = None, level: int | None = None,
             provisional: bool = False, net: str = "", account: bool = False) -> Outcome:
        player = f"p{len(self.racers) + 1}"
        racer = self.racers[player] = Racer(
            player, name, token, solrules.new_game(self.game, self.seed), joined_at=now, bot=bot,
            pid=pid, rating=rating, level=level, provisional=provisional and rating is not None,
            net=net, account=account and pid is not None,
        )
        fields: Message = {"player": player, "name": name, "bot": bot}
        data: Message = {"name": name, "token": token}
        if bot:
            data["bot"] = True
        if net:
            data["net"] = net
        if racer.account:
            data["account"] = True
        for key, value in racer.identity().items():
            fields[key] = data[key] = value
        event = self._event("player_joined", **fields)
        return Outcome(events=[event], log=[self._log(now, "join", player, data)], acted=player)

    def ready(self, player: str | None, now: int) -> Outcome:
        """Mark a racer ready; when every racer (at least 2) is ready the countdown starts."""
        racer = self.racer(player)
        if self.status != "lobby":
            raise RaceError(Code.RACE_STARTED, "the race is already starting")
        if racer.ready:
            return Outcome()
        racer.ready = True
        out = Outcome(
            events=[self._event("ready", player=racer.player)],
            log=[self._log(now, "ready", racer.player)],
        )
        enough = len(self.racers) >= 2 or self.seated_until is not None
        if enough and all(r.ready for r in self.racers.values()):
            out.extend(self._countdown(now))
        return out

    def start(self, token: str, now: int) -> Outcome:
        """The host starts the countdown (needs at least one racer)."""
        if not hmac.compare_digest(token.encode(), self.host_token.encode()):
            raise RaceError(Code.FORBIDDEN,
                            "only the host (with the host token) can start the race")
        if self.status != "lobby":
            raise RaceError(Code.RACE_STARTED, "the race has already started")
        if not self.racers:
            raise RaceError(Code.NO_RACERS, "nobody has joined yet: share the link, and start "
                            "once someone is in")
        out = self._countdown(now)
        out.log.append(self._log(now, "start"))
        return out

    def _playing(self, player: str | None, seq: int) -> Racer | None:
        """Checks common to move and undo; None means "repeated seq": reply the state."""
        racer = self.racer(player)
        if self.status != "running":
            raise RaceError(Code.RACE_NOT_RUNNING, f"the race is {self.status}")
        if seq <= racer.seq:
            return None
        if racer.finished_at is not None:
            raise RaceError(Code.RACE_NOT_RUNNING, "you have already finished")
        if racer.resigned:
            raise RaceError(Code.RACE_NOT_RUNNING, "you resigned")
        if seq != racer.seq + 1:
            raise RaceError(Code.BAD_SEQ, f"expected seq {racer.seq + 1}, got {seq}")
        if racer.seq >= MAX_ACTIONS:
            raise RaceError(Code.LIMIT_REACHED,
                            f"a racer makes at most {MAX_ACTIONS} moves and undos")
        return racer

    def move(self, player: str | None, text: str, seq: int, now: int) -> Outcome:
        """Apply one move, exactly as listed in ``legal``; the reply is the racer's new
        ``state`` (``acted``). A ``seq`` already applied changes nothing (same reply)."""
        racer = self._playing(player, seq)
        if racer is None:
            return Outcome(acted=player)
        # A move copied from the ``legal`` of the racer's last full ``state`` is one lookup in
        # the list the game remembers; with lean states no list was made: the move alone is
        # checked.
        game = racer.game
        move = game.legal_move(text)
        if move is None:
            raise racer.refused(text)
        before = game.progress()[0]
        seen = game.seen
        up = game.face_up()
        try:
            game.push(move)
        except ValueError as exc:  # refusal() and push() should agree; be safe anyway
            raise RaceError(Code.ILLEGAL_MOVE, str(exc)) from None
        racer.actions.append(text)
        out = self._after_action(racer, before, seen, now, "move", text)
        out.turned = game.face_up() & ~up
        return out

    def undo(self, player: str | None, seq: int, now: int) -> Outcome:
        """Take back the racer's last move (an action of its own for ``seq``)."""
        if not self.options.undo:
            self.racer(player)
            raise RaceError(Code.FORBIDDEN, "this race does not allow undo")
        racer = self._playing(player, seq)
        if racer is None:
            return Outcome(acted=player)
        if not racer.game.move_stack:
            raise RaceError(Code.ILLEGAL_MOVE, "there is no move to undo")
        before = racer.game.progress()[0]
        up = racer.game.face_up()
        racer.game.pop()
        racer.actions.append("undo")
        out = self._after_action(racer, before, racer.game.seen, now, "undo", None)
        out.turned = racer.game.face_up() & ~up
        return out

    def _after_action(
        self, racer: Racer, before: int, seen: int, now: int, kind: str, data: str | None
    ) -> Outcome:
        if racer.game.progress()[0] != before:
            racer.reached_at = now
        racer.times.append(now)
        out = Outcome(
            log=[self._log(now, kind, racer.player, data)],
            acted=racer.player,
            moved=[racer.player],
            views=racer.game.seen != seen,
        )
        out.events.append(self._event("progress", player=racer.player, progress=racer.progress()))
        if racer.game.is_won():
            racer.finished_at = now
            places = self.places()
            racer.place = places[racer.player]
            finishers = {p: places[p] for p, r in self.racers.items()
                         if r.finished_at is not None}
            for p, place in finishers.items():
                self.racers[p].place = place
            fields: Message = {"player": racer.player, "place": racer.place,
                               "time_ms": self.time_ms(racer)}
            if self.options.hints:
                # With penalties a later finisher may still pass him: places of every
                # finisher so far, final only in ``race_over``.
                fields["penalty_ms"] = racer.penalty_ms
                fields["places"] = finishers
            out.events.append(self._event("finished", **fields))
            out.views = True
        if racer.done:  # the race can only end when the racer who acted has finished
            out.extend(self._maybe_over(now))
        return out

    def may_hint(self, player: str | None) -> Racer:
        """The racer, if he may be given a hint now (RaceError otherwise)."""
        racer = self.racer(player)
        if not self.options.hints:
            raise RaceError(Code.FORBIDDEN, "this race does not allow hints")
        if self.status != "running":
            raise RaceError(Code.RACE_NOT_RUNNING, f"the race is {self.status}")
        if racer.done:
            raise RaceError(Code.RACE_NOT_RUNNING, "you are no longer racing")
        if racer.hints >= MAX_ACTIONS:
            raise RaceError(Code.LIMIT_REACHED, f"a racer gets at most {MAX_ACTIONS} hints")
        return racer

    def hint(self, player: str | None, now: int) -> Outcome:
        """Count a hint given to the racer at his current position (a second hint at the same
        position is the same hint: not counted again). Everyone sees the count (``hinted``);
        the hint itself goes to the racer only."""
        racer = self.may_hint(player)
        if racer.hint_seq == racer.seq:
            return Outcome(acted=racer.player)
        racer.hints += 1
        racer.hint_seq = racer.seq
        return Outcome(
            events=[self._event("hinted", player=racer.player, hints=racer.hints)],
            log=[self._log(now, "hint", racer.player)],
            acted=racer.player,
        )

    def reveal(self) -> RaceEvent:
        """The deal of this race, which ended before the rest of its tournament round, is
        public now that the round is over: a numbered event (seed, salt and par go with it;
        not logged: a race rebuilt from its log is revealed with its round)."""
        return self._event("reveal")

    def still_racing(self) -> list[Racer]:
        """Racers who have neither finished nor resigned."""
        return [r for r in self.racers.values() if not r.done]

    def abandon(self, now: int) -> Outcome:
        """End a running race that every racer still racing has left (the server decides
        when: see ``limits.ABANDON_MS``); the standings are as they stand."""
        if self.status != "running":
            return Outcome()
        out = self._finish(now, "abandoned")
        out.log.append(self._log(now, "abandon"))
        return out

    def resign(self, player: str | None, now: int) -> Outcome:
        """The racer stops: a loss, ranked after everyone who did not resign. Nothing to do
        (no error) once he is done or the race is over: two racers who resign at once both
        mean "I stop", and the first one ended the race."""
        racer = self.racer(player)
        if self.status == "finished" or racer.done:
            return Outcome()
        if self.status != "running":
            raise RaceError(Code.RACE_NOT_RUNNING, f"the race is {self.status}")
        racer.resigned = True
        racer.resigned_at = now
        out = Outcome(
            events=[self._event("resigned", player=racer.player)],
            log=[self._log(now, "resign", racer.player)],
            views=True,
        )
        out.extend(self._maybe_over(now))
        return out

    def claim(self, player: str | None, now: int, after_ms: int = CLAIM_AFTER_MS,
              check: bool = True) -> Outcome:
        """A racer still racing ends the race when every other racer still racing has been
        offline (no connection) for ``after_ms``: the standings are as they stand.
        ``check`` is off when the claim is replayed from the log (presence is not durable:
        the check was made when it was accepted)."""
        racer = self.racer(player)
        if self.status != "running":
            raise RaceError(Code.RACE_NOT_RUNNING, f"the race is {self.status}")
        if racer.done:
            raise RaceError(Code.RACE_NOT_RUNNING, "you are no longer racing")
        others = [r for r in self.still_racing() if r is not racer]
        if check:
            if not others:
                raise RaceError(Code.FORBIDDEN, "nobody else is racing")
            waiting = [r for r in others if r.connections > 0 or r.offline_since is None
                       or now - r.offline_since < after_ms]
            if waiting:
                raise RaceError(Code.FORBIDDEN, f"{waiting[0].name} has not been offline for "
                                f"{after_ms // 1000} s: the race goes on")
        out = self._finish(now, "claimed")
        out.log.append(self._log(now, "claim", racer.player))
        return out

    def reseat(self, until: int, now: int) -> Outcome:
        """A race rebuilt by a process that did not run it until now (a takeover, a restart,
        a rebuild after a failed write) whose seats are still open: an absent racer gets until
        ``until`` to take his seat if his grace would end sooner — the time no process ran the
        race (a failover under load took longer than the 15 s of a seat) is not his to lose.
        Safe because closing the seats is logged (``seated``) before anyone is told: a log
        without it is a race whose seats nobody saw closed. Logged (``reseat``)."""
        out = Outcome()
        if (self.status != "lobby" or self.seated_until is None or self.seated_until >= until
                or all(r.ready for r in self.racers.values())):
            return out
        self.seated_until = until
        out.log.append(self._log(now, "reseat", data={"until": until}))
        return out

    # ----------------------------------------------------------------- replay
    def replay(self, entry: LogEntry) -> None:
        """Re-apply one durable log entry (at its recorded time) when loading a race."""
        if entry.kind == "reseat":
            # Given before the old grace ran out on the clock of the process that gave it:
            # no tick first, or the old deadline would fire on replay.
            self.reseat(int(entry.data["until"]), entry.at)
            return
        self.tick(entry.at)
        kind, player = entry.kind, entry.player
        if kind == "join":
            data = entry.data
            self._add(data["name"], data["token"], entry.at, bool(data.get("bot", False)),
                      data.get("id"), data.get("rating"), data.get("level"),
                      bool(data.get("provisional", False)), str(data.get("net", "")),
                      bool(data.get("account", False)))
        elif kind == "ready":
            self.ready(player, entry.at)
        elif kind == "start":
            self.start(self.host_token, entry.at)
        elif kind == "move":
            self.move(player, entry.data, self.racer(player).seq + 1, entry.at)
        elif kind == "undo":
            self.undo(player, self.racer(player).seq + 1, entry.at)
        elif kind == "resign":
            self.resign(player, entry.at)
        elif kind == "abandon":
            self.abandon(entry.at)
        elif kind == "hint":
            self.hint(player, entry.at)
        elif kind == "claim":
            self.claim(player, entry.at, check=False)
        elif kind == "seated":
            pass  # the tick above closed the seats at this entry's time
        else:
            raise ValueError(f"unknown log entry {kind!r}")
