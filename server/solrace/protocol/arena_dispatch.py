"""The arena commands of the dispatcher (:func:`solrace.protocol.dispatch.handle` hands them
here): (world, session, command, now) → effects, pure like the rest of it.

Who may do what (:mod:`solrace.core.rooms` decides): only a player creates an arena or enters
one (an arena's table names players; the connection's player was made, if need be, before the
command came here), only an **account** creates one, at most
:data:`~solrace.settings.ARENAS_PER_PLAYER` unfinished ones per player and the tournaments'
share per client address (both count against the tournaments' cap); anyone watches."""

from __future__ import annotations

import solrules

from solrace.core import rooms
from solrace.core.effects import (
    EMIT,
    ASeat,
    AView,
    Bind,
    Effects,
    Follow,
    Reply,
    Session,
    Unbind,
    Unfollow,
    World,
)
from solrace.core.errors import Code
from solrace.core.tournament_parts import TOutcome
from solrace.protocol import arena_messages, commands, messages
from solrace.protocol.codec import ProtocolError


def arena(world: World, session: Session, cmd: commands.ArenaCmd, now: int) -> Effects:
    """The effects of an arena command (RaceError, ProtocolError or NotLoaded)."""
    if cmd.action == "create":
        if cmd.game not in solrules.GAMES:
            raise ProtocolError(Code.BAD_MESSAGE, f"unknown game; one of "
                                f"{', '.join(solrules.GAMES)}", cmd.rid)
        new = rooms.new_arena(world, session, cmd.game, cmd.name, cmd.starts_in, cmd.minutes,
                              cmd.time_limit, cmd.rated, now)
        # An empty outcome to emit: it arms the arena's deadline (its start).
        return Effects(arena=new, acreated=True, rid=cmd.rid, barrier=True,
                       aouts=[TOutcome()],
                       steps=[Reply(arena_messages.created(new, cmd.rid)), EMIT])
    aid = cmd.arena
    a = rooms.lookup_arena(world, aid)
    fx = Effects(arena=a, rid=cmd.rid)
    if cmd.action == "watch":
        rooms.may_follow(session, aid)
        fx.steps += [Follow(aid), Follow(arena_messages.watchers(aid)), AView(aid, cmd.rid)]
        return fx
    if cmd.action == "leave":
        fx.steps += [Unfollow(aid), Unfollow(arena_messages.watchers(aid)), Unbind(aid),
                     Reply(messages.ok(aid, cmd.rid))]
        fx.barrier = True
        return fx
    who = rooms.arena_player(world, session)
    if cmd.action == "pause":
        fx.aouts.append(a.pause(who.id, now))
        fx.steps += [Reply(messages.ok(aid, cmd.rid)), EMIT]
        return fx
    game = a.settings.game
    fx.aouts.append(a.join(who.id, who.name, now, account=who.account,
                           net=world.net(session.address), rating=who.rating(game),
                           provisional=who.provisional(game)))
    # An entrant gets the table less often than a watcher (solrace.service.arenas), also on
    # a page that watched before he joined.
    fx.steps += [EMIT, Bind(aid, who.id), Follow(aid), Unfollow(arena_messages.watchers(aid)),
                 Reply(arena_messages.joined(a, cmd.rid)), AView(aid), ASeat(aid, who.id)]
    fx.barrier = True
    return fx
