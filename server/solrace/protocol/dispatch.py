"""The dispatcher: (world, session, command, now) → effects. Pure: no I/O, no awaiting, no
clock, no randomness of its own.

Every client command goes through :func:`handle`, moves and undos included. It turns the
command into calls on the core — the room itself (which checks the command and applies it, or
raises :class:`~solrace.core.race_parts.RaceError` before changing anything) and the decisions
of :mod:`solrace.core.rooms` (who may join, new races within the caps) — and renders what they
return as replies: it returns :class:`~solrace.core.effects.Effects`, the outcomes to make
durable and the steps to take once they are (send a reply, publish the events, follow the
race, bind the connection to a racer, send a snapshot). The server
(:mod:`solrace.service.hub`) carries them out in that order, after the commit. A race that is
not in memory raises :class:`~solrace.core.effects.NotLoaded`: the caller loads it (away from
the event loop) and asks again. The core decides; this layer speaks the wire."""

from __future__ import annotations

from functools import partial

import solrules

from solrace.core import rooms
from solrace.core.effects import (
    EMIT,
    Announce,
    Bind,
    Effects,
    Entered,
    Follow,
    Later,
    Pending,
    Reply,
    Seats,
    Session,
    Snapshot,
    State,
    Step,
    TView,
    Unbind,
    Unfollow,
    World,
)
from solrace.core.errors import Code
from solrace.core.race import Race
from solrace.core.race_parts import Options, Outcome, RaceError
from solrace.core.tournament import TournamentError
from solrace.core.tournament_parts import TOutcome
from solrace.protocol import commands, messages
from solrace.protocol.arena_dispatch import arena
from solrace.protocol.codec import ProtocolError

RaceCommand = (commands.Join | commands.Watch | commands.Leave | commands.Start
               | commands.Ready | commands.MoveCmd | commands.Undo | commands.Resign
               | commands.Rematch | commands.Hint | commands.Claim)


# ----------------------------------------------------------------------------- dispatcher
# (session, command, now) -> Effects. A transition found due while handling a command (the
# time limit passed, its timer has not fired yet) goes first; if the command is then refused
# (a move just after the time limit), the effects still record the transition, and the
# refusal is their reply.


def handle(world: World, session: Session, cmd: commands.Command, now: int) -> Effects:
    """The effects of ``cmd`` from ``session`` at ``now``; raises RaceError or
    ProtocolError (nothing changed then) or NotLoaded."""
    if isinstance(cmd, commands.Ping):
        return Effects(steps=[Reply(messages.pong(now, cmd.rid))])
    if isinstance(cmd, commands.Create):
        return create(world, session, cmd, now)
    if isinstance(cmd, commands.TournamentCmd):
        try:
            return tournament(world, session, cmd, now)
        except TournamentError as exc:
            raise RaceError(exc.code, exc.message) from None
    if isinstance(cmd, commands.ArenaCmd):
        try:
            return arena(world, session, cmd, now)
        except TournamentError as exc:
            raise RaceError(exc.code, exc.message) from None
    if isinstance(cmd, (commands.PlayerCmd, commands.PlayCmd, commands.ModCmd)):
        raise ProtocolError(Code.BAD_MESSAGE, f"{cmd.action} is not a race command", cmd.rid)
    race = world.races.get(cmd.race) or rooms.lookup(world, cmd.race)
    if not race.due(now) or not world.writable:
        return _on_race(world, session, cmd, race, [], now)
    outcomes = [race.tick(now)]  # a transition due goes first
    try:
        return _on_race(world, session, cmd, race, outcomes, now)
    except RaceError as exc:  # refused, but the transition happened: record it
        error = messages.error(exc.code, exc.message, cmd.rid)
    except Pending:  # a hint just as the race started: record the start first
        error = messages.error(Code.UNAVAILABLE, "the race just started: ask again", cmd.rid)
    return Effects(race, outcomes, [EMIT, Reply(error)], cmd.rid)

def _on_race(world: World, session: Session, cmd: RaceCommand, race: Race,
             outcomes: list[Outcome], now: int) -> Effects:
    race_id = race.race
    player = session.players.get(race_id)
    if race.deal.held_until is not None:
        race.deal.release(now)
    if isinstance(cmd, (commands.MoveCmd, commands.Undo)):  # the hot path: keep it short
        if not world.writable:
            rooms.writable(world)
        if isinstance(cmd, commands.MoveCmd):
            out = race.move(player, cmd.move, cmd.seq, now)
        else:
            out = race.undo(player, cmd.seq, now)
        assert out.acted is not None
        outcomes.append(out)
        later: Later
        if out.turned is not None and race_id in session.lean:
            later = Later(partial(messages.lean_state, race, out.acted, out.turned, cmd.rid))
        else:  # a full state: also the answer to a repeated seq, lean or not
            later = Later(partial(messages.state, race, out.acted, cmd.rid))
        steps: list[Step] = [later, EMIT]
        return Effects(race, outcomes, steps, cmd.rid)
    fx = Effects(race, outcomes, [], cmd.rid)
    if isinstance(cmd, commands.Join):
        return join(world, session, fx, race, cmd, now)
    if isinstance(cmd, commands.Watch):
        if race.deal.held_until is not None and player is None:
            raise RaceError(Code.FORBIDDEN, "this deal stays secret until the day is over: "
                            "nobody may watch it before")
        rooms.may_follow(session, race_id)
        fx.steps += [EMIT, Follow(race_id), Snapshot(race_id, cmd.rid)]
        return fx
    if isinstance(cmd, commands.Leave):
        fx.steps += [EMIT, Unfollow(race_id), Unbind(race_id),
                     Reply(messages.ok(race_id, cmd.rid))]
        fx.barrier = True
        return fx
    if isinstance(cmd, commands.Rematch):
        return rematch(world, session, fx, race, player, now, cmd.want)
    if isinstance(cmd, commands.Hint):
        mover, answer, out = rooms.take_hint(world, session, race, player, now)
        fx.outcomes.append(out)
        fx.steps += [Reply(messages.hint(race, mover, answer, fx.rid)), EMIT]
        return fx
    rooms.writable(world)
    if isinstance(cmd, commands.Start):
        fx.outcomes.append(race.start(cmd.token, now))
    elif isinstance(cmd, commands.Ready):
        fx.outcomes.append(race.ready(player, now))
    elif isinstance(cmd, commands.Claim):
        fx.outcomes.append(race.claim(player, now, world.claim_after_ms))
    else:
        fx.outcomes.append(race.resign(player, now))
    fx.steps += [Reply(messages.ok(race_id, cmd.rid)), EMIT]
    return fx


def _known_game(game: str, rid: object) -> None:
    if game not in solrules.GAMES:
        raise ProtocolError(
            Code.BAD_MESSAGE, f"unknown game; one of {', '.join(solrules.GAMES)}", rid
        )


def create(world: World, session: Session, cmd: commands.Create, now: int) -> Effects:
    _known_game(cmd.game, cmd.rid)
    options = Options(cmd.players, cmd.time_limit, cmd.undo, cmd.public, cmd.hints,
                      cmd.winnable, rated=cmd.rated)
    race = rooms.new_race(world, session, cmd.game, options, cmd.seed, now)
    return Effects(race=race, created=race, rid=cmd.rid, barrier=True,
                   steps=[Reply(messages.created(race, cmd.rid))])


def join(
    world: World, session: Session, fx: Effects, race: Race, cmd: commands.Join, now: int
) -> Effects:
    """Join as a new racer (``name``) or resume one (``token``): ``joined``, ``snapshot``
    and, in a running race, the racer's ``state``."""
    racer, out = rooms.take_seat(world, session, race, cmd.token, cmd.name, cmd.bot, now)
    if out is not None:
        fx.outcomes.append(out)
    fx.steps += [EMIT, Bind(race.race, racer.player), Follow(race.race, cmd.boards, cmd.lean),
                 Reply(messages.joined(race, racer, cmd.rid)), Snapshot(race.race)]
    if race.status == "running" or any(out.started for out in fx.outcomes):
        fx.steps.append(State(race.race, racer.player))
    fx.barrier = True
    return fx


def rematch(
    world: World, session: Session, fx: Effects, race: Race, player: str | None, now: int,
    want: bool = True,
) -> Effects:
    """A racer of a finished race asks for another race with the same settings on a new,
    secret deal (``want``), or says no to it.

    Between two players (:func:`~solrace.core.rooms.one_click`): each ``rematch`` says "I want
    one"; everyone following the race is told who wants it (``rematch`` with ``next`` null and
    ``wants``); once both want it, the new race is made with both seated (no lobby, no ready:
    it counts down once both sat, an empty seat ends it) and each racer gets his seat
    (``paired``, only on the connection that speaks for him), everyone the new race's id. A
    want is dropped when its racer has no connection left (he would not come), and ``want:
    false`` drops every want (``declined``). Wants live with the race in memory, not on disk.

    Any other race (a custom race with anonymous racers, or of more than two): the first asker
    creates a new lobby race and gets its host token; everyone following the old race is told
    (``rematch``), and later askers get the same new race."""
    racer = rooms.rematch_asker(race, player)
    known = rooms.rematch_made(world, race)
    if known is not None:
        fx.steps.append(Reply(messages.rematch(race, known, rid=fx.rid)))
        if rooms.one_click(race):
            seat = rooms.seat_to_take(known, racer)
            if seat is not None:
                others = [r for r in known.racers.values() if r is not seat]
                fx.steps.append(Reply(messages.paired(known, seat, others, rematch=race.race)))
        return fx
    if rooms.one_click(race):
        return _rematch_both(world, session, fx, race, racer.player, now, want)
    if not want:
        fx.steps.append(Reply(messages.rematch(race, None, rid=fx.rid)))
        return fx
    new = rooms.lobby_rematch(world, session, race, now)
    fx.created = new
    fx.steps += [Reply(messages.rematch(race, new, by=racer.name, rid=fx.rid, host=True)),
                 Announce(race.race, messages.rematch(race, new, by=racer.name))]
    fx.barrier = True
    return fx


def _rematch_both(world: World, session: Session, fx: Effects, race: Race, player: str,
                  now: int, want: bool) -> Effects:
    """The rematch in one click (see :func:`rematch`)."""
    name = race.racers[player].name
    everyone = rooms.want_rematch(race, player, want)
    if not want:
        msg = messages.rematch(race, None, declined=name)
        fx.steps += [Reply({**msg, "rid": fx.rid}), Announce(race.race, msg)]
        return fx
    if not everyone:
        msg = messages.rematch(race, None, by=name, wants=sorted(race.rematch_wants))
        fx.steps += [Reply({**msg, "rid": fx.rid}), Announce(race.race, msg)]
        return fx
    old = list(race.racers.values())
    new, opened = rooms.both_rematch(world, session.address, race, now)
    fx.created, fx.opened = new, opened
    msg = messages.rematch(race, new, by=name)
    fx.steps += [Reply({**msg, "rid": fx.rid}), Announce(race.race, msg)]
    racers = list(new.racers.values())
    for i, was in enumerate(old):
        you, other = racers[i], racers[1 - i]
        fx.steps.append(Announce(race.race, messages.paired(new, you, [other],
                                                            rematch=race.race), to=was.player))
    fx.barrier = True
    return fx


# ------------------------------------------------------------ tournaments
def tournament(world: World, session: Session, cmd: commands.TournamentCmd, now: int
               ) -> Effects:
    if cmd.action == "create":
        assert cmd.create is not None
        unknown = [g for g in cmd.create["games"] if g not in solrules.GAMES]
        if unknown:
            raise ProtocolError(
                Code.BAD_MESSAGE, f"unknown game {unknown[0][:40]!r}; one of "
                f"{', '.join(solrules.GAMES)}", cmd.rid)
        new = rooms.new_tournament(world, session.address, cmd.create, now)
        # An empty outcome to emit: it arms the tournament's deadline (entry closes).
        return Effects(tournament=new, tcreated=True, rid=cmd.rid, barrier=True,
                       steps=[Reply(messages.tournament_created(new, cmd.rid)), EMIT],
                       touts=[TOutcome()])
    tid = cmd.race
    t = rooms.lookup_tournament(world, tid)
    fx = Effects(tournament=t, rid=cmd.rid)
    if cmd.action == "watch":
        rooms.may_follow(session, tid)
        fx.steps += [Follow(tid), TView(tid, cmd.rid)]
        return fx
    if cmd.action == "leave":
        fx.steps += [Unfollow(tid), Unbind(tid), Reply(messages.ok(tid, cmd.rid))]
        fx.barrier = True
        return fx
    if cmd.action == "join":
        entrant, out = rooms.enter(world, session, t, cmd.token, cmd.name, cmd.bot, cmd.code,
                                   now)
        if out is not None:
            fx.touts.append(out)
            fx.steps.append(Entered(tid, entrant.entrant, session.address))
        fx.steps += [EMIT, Bind(tid, entrant.entrant), Follow(tid),
                     Reply(messages.tournament_joined(t, entrant, cmd.rid)),
                     TView(tid), Seats(tid, entrant.entrant)]
        fx.barrier = True
        return fx
    rooms.writable(world)
    token = cmd.token or ""
    winnable = t.settings.winnable

    def draw(game: str) -> int:
        return world.deals.draw(game, winnable)

    if cmd.action == "start":
        rooms.room_for_round(world, t, token)
        rooms.deals_for_round(world, t, token, t.next_game(), t.races_of_next_round())
        fx.touts.append(t.start(token, now, draw))
    elif cmd.action == "next":
        rooms.room_for_round(world, t, token)
        rooms.deals_for_round(world, t, token, t.next_game(), t.races_of_next_round())
        fx.touts.append(t.next(token, now, draw))
    elif cmd.action == "entry":
        fx.touts.append(t.set_entry(token, bool(cmd.flag), now))
    elif cmd.action == "pause":
        fx.touts.append(t.set_paused(token, bool(cmd.flag), now))
    elif cmd.action == "remove":
        fx.touts.append(t.remove(token, cmd.entrant or "", now))
    elif cmd.action == "redeal":
        cur = t.current()
        if cur is not None:
            rooms.deals_for_round(world, t, token, cur.game, 1)
        fx.touts.append(t.redeal(token, cmd.round or 0, now, draw))
    elif cmd.action == "finish":
        fx.touts.append(t.finish(token, now))
    elif cmd.action == "add_bot":
        fx.touts.append(rooms.add_bot(world, t, token, cmd.level or 1, now))
    fx.steps += [Reply(messages.ok(tid, cmd.rid)), EMIT]
    return fx
