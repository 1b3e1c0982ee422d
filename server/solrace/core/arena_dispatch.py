"""The arena commands of the dispatcher (:func:`solrace.core.dispatch.handle` hands them here):
(world, session, command, now) → effects, pure like the rest of it.

Who may do what: only a player creates an arena or enters one (an arena's table names players;
the connection's player was made, if need be, before the command came here), only an
**account** creates one, at most :data:`ARENAS_PER_PLAYER` unfinished ones per player and the
tournaments' share per client address (both count against the tournaments' cap); anyone
watches."""

from __future__ import annotations

import solrules

from solrace.core.arena import Arena, ArenaSettings
from solrace.core.effects import (
    EMIT,
    ASeat,
    AView,
    Bind,
    Effects,
    Follow,
    NotLoaded,
    Reply,
    Session,
    Unbind,
    Unfollow,
    World,
)
from solrace.core.quotas import admit
from solrace.core.race_parts import RaceError
from solrace.core.tournament import TOutcome
from solrace.protocol import arena_messages, codec, commands, messages
from solrace.settings import ARENAS_PER_PLAYER, MAX_FOLLOWED


def arena(world: World, session: Session, cmd: commands.ArenaCmd, now: int) -> Effects:
    """The effects of an arena command (RaceError, ProtocolError or NotLoaded)."""
    if cmd.action == "create":
        return _create(world, session, cmd, now)
    aid = cmd.arena
    a = world.arenas.get(aid)
    if a is None:
        if aid in world.reloading:
            raise RaceError("unavailable", "the arena is being reloaded: try again")
        raise NotLoaded(aid, tournament=True)
    fx = Effects(arena=a, rid=cmd.rid)
    if cmd.action == "watch":
        if aid not in session.follows and len(session.follows) >= MAX_FOLLOWED:
            raise RaceError("limit_reached", f"one connection follows at most {MAX_FOLLOWED} "
                            "races")
        fx.steps += [Follow(aid), AView(aid, cmd.rid)]
        return fx
    if cmd.action == "leave":
        fx.steps += [Unfollow(aid), Unbind(aid), Reply(messages.ok(aid, cmd.rid))]
        fx.barrier = True
        return fx
    who = session.who
    if who is None:
        raise RaceError("forbidden", "only a player enters an arena: open the page with "
                        "cookies on")
    if not world.writable:
        raise RaceError("unavailable", "the server cannot save this right now: try again")
    if cmd.action == "pause":
        fx.aouts.append(a.pause(who.id, now))
        fx.steps += [Reply(messages.ok(aid, cmd.rid)), EMIT]
        return fx
    game = a.settings.game
    fx.aouts.append(a.join(who.id, who.name, now, account=who.account,
                           net=world.net(session.address), rating=who.rating(game),
                           provisional=who.provisional(game)))
    fx.steps += [EMIT, Bind(aid, who.id), Follow(aid),
                 Reply(arena_messages.joined(a, cmd.rid)), AView(aid), ASeat(aid, who.id)]
    fx.barrier = True
    return fx


def _create(world: World, session: Session, cmd: commands.ArenaCmd, now: int) -> Effects:
    if cmd.game not in solrules.GAMES:
        raise codec.ProtocolError("bad_message", f"unknown game; one of "
                                  f"{', '.join(solrules.GAMES)}", cmd.rid)
    who = session.who
    if who is None or not who.account:
        raise RaceError("forbidden", "an account (a name with a password) creates arenas")
    live = [a for a in world.arenas.values() if a.finished_at is None]
    mine = sum(1 for a in live if a.settings.creator == who.id)
    if mine >= ARENAS_PER_PLAYER:
        raise RaceError("limit_reached", f"you have {mine} arenas to come or running already")
    tournaments = [t for t in world.tournaments.values() if t.status != "finished"]
    caps = world.caps
    held = sum(1 for t in tournaments if t.creator == session.address)
    admit("tournaments", held, len(tournaments) + len(live), caps.tournaments,
          caps.tournaments_per_address)
    if not world.writable:
        raise RaceError("unavailable", "the server cannot save this right now: try again")
    name = cmd.name or f"{who.name}'s arena"
    settings = ArenaSettings(name, cmd.game, now + cmd.starts_in * 1000, cmd.minutes,
                             cmd.time_limit, cmd.rated, creator=who.id)
    new = Arena(world.entropy.tournament_id(), settings, now)
    # An empty outcome to emit: it arms the arena's deadline (its start).
    return Effects(arena=new, acreated=True, rid=cmd.rid, barrier=True, aouts=[TOutcome()],
                   steps=[Reply(arena_messages.created(new, cmd.rid)), EMIT])
