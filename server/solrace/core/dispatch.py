"""The dispatcher: (world, session, command, now) → effects. Pure: no I/O, no awaiting, no
clock, no randomness of its own.

Every client command goes through :func:`handle`, moves and undos included. It reads
the races held in memory, runs the command on its room (which checks it and applies it, or
raises :class:`~solrace.core.race.RaceError` before changing anything), and returns
:class:`Effects`: the outcomes to make durable, and the steps to take once they are (send a
reply, publish the events, follow the race, bind the connection to a racer, send a snapshot).
The server (:mod:`solrace.service.hub`) carries them out in that order, after the commit. A race
that is not in memory raises :class:`NotLoaded`: the caller loads it (away from the event loop)
and asks again."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import solrules

from solrace.core.arena_dispatch import arena
from solrace.core.effects import (
    EMIT,
    Announce,
    Bind,
    Effects,
    Entered,
    Follow,
    NeedsDeals,
    NeedsHint,
    NotLoaded,
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
from solrace.core.levels import LEVELS, bot_name
from solrace.core.quotas import admit, outside_reserve, refusal
from solrace.core.race import Race
from solrace.core.race_parts import Options, Outcome, RaceError
from solrace.core.tournament import Settings, Tournament, TournamentError, TOutcome
from solrace.protocol import codec, commands, messages
from solrace.settings import MAX_FOLLOWED, SEAT_GRACE_S

RaceCommand = (commands.Join | commands.Watch | commands.Leave | commands.Start
               | commands.Ready | commands.MoveCmd | commands.Undo | commands.Resign
               | commands.Rematch | commands.Hint | commands.Claim)


# ----------------------------------------------------------------------------- dispatcher
# (session, command, now) -> Effects. A transition found due while handling a command (the
# time limit passed, its timer has not fired yet) goes first; if the command is then refused
# (a move just after the time limit), the effects still record the transition, and the
# refusal is their reply.


def lookup(world: World, race_id: str) -> Race:
    """A race held in memory; NotLoaded (or ``unavailable`` while it is being rebuilt)."""
    race = world.races.get(race_id) or world.finished.get(race_id)
    if race is None:
        if race_id in world.reloading:
            raise RaceError("unavailable", "the race is being reloaded: try again")
        raise NotLoaded(race_id)
    return race



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
    if isinstance(cmd, (commands.PlayerCmd, commands.PlayCmd, commands.ModCmd)):  # net.connection's
        raise codec.ProtocolError("bad_message", f"{cmd.action} is not a race command", cmd.rid)
    race = world.races.get(cmd.race) or lookup(world, cmd.race)
    if not race.due(now) or not world.writable:
        return _on_race(world, session, cmd, race, [], now)
    outcomes = [race.tick(now)]  # a transition due goes first
    try:
        return _on_race(world, session, cmd, race, outcomes, now)
    except RaceError as exc:  # refused, but the transition happened: record it
        error = messages.error(exc.code, exc.message, cmd.rid)
    except Pending:  # a hint just as the race started: record the start first
        error = messages.error("unavailable", "the race just started: ask again", cmd.rid)
    return Effects(race, outcomes, [EMIT, Reply(error)], cmd.rid)

def _on_race(world: World, session: Session, cmd: RaceCommand, race: Race,
             outcomes: list[Outcome], now: int) -> Effects:
    race_id = race.race
    player = session.players.get(race_id)
    if race.deal.held_until is not None:
        race.deal.release(now)
    if isinstance(cmd, (commands.MoveCmd, commands.Undo)):  # the hot path: keep it short
        if not world.writable:
            _writable(world)
        if isinstance(cmd, commands.MoveCmd):
            out = race.move(player, cmd.move, cmd.seq, now)
        else:
            out = race.undo(player, cmd.seq, now)
        assert out.acted is not None
        outcomes.append(out)
        if out.turned is not None and race_id in session.lean:
            reply = messages.lean_state(race, out.acted, out.turned, cmd.rid)
        else:  # a full state: also the answer to a repeated seq, lean or not
            reply = messages.state(race, out.acted, cmd.rid)
        steps: list[Step] = [Reply(reply), EMIT]
        return Effects(race, outcomes, steps, cmd.rid)
    fx = Effects(race, outcomes, [], cmd.rid)
    if isinstance(cmd, commands.Join):
        return join(world, session, fx, race, cmd, now)
    if isinstance(cmd, commands.Watch):
        if race.deal.held_until is not None and player is None:
            raise RaceError("forbidden", "this deal stays secret until the day is over: "
                            "nobody may watch it before")
        _may_follow(world, session, race_id)
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
        return hint(world, session, fx, race, player, now)
    _writable(world)
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

def _writable(world: World) -> None:
    if not world.writable:
        raise RaceError("unavailable", "the server cannot save moves right now: try again")

def _may_follow(world: World, session: Session, race_id: str) -> None:
    if race_id not in session.follows and len(session.follows) >= MAX_FOLLOWED:
        raise RaceError(
            "limit_reached", f"one connection follows at most {MAX_FOLLOWED} races"
        )

def _may_create_race(world: World, address: str, conn: int | None) -> None:
    """The race cap and this client's share of it (see :mod:`solrace.core.quotas`), and at
    most ``caps.lobbies`` races not started yet per client address and per connection
    (``conn`` None: a race made for its racers, which starts within seconds or not at all, is
    no lobby a client holds open)."""
    caps = world.caps
    held = lobbies_here = lobbies_there = 0
    for race in world.races.values():
        if race.creator is None:
            continue
        owner, owner_conn = race.creator
        mine = owner == address
        held += mine
        if race.status == "lobby" and race.seated_until is None:
            lobbies_here += mine
            lobbies_there += owner_conn == conn
    admit("races", held, len(world.races), caps.races, caps.races_per_address)
    if conn is not None and (lobbies_here >= caps.lobbies or lobbies_there >= caps.lobbies):
        raise RaceError(
            "limit_reached",
            f"you already have {caps.lobbies} races waiting to start: start or finish one "
            "first",
        )

def create(world: World, session: Session, cmd: commands.Create, now: int) -> Effects:
    if cmd.game not in solrules.GAMES:
        raise codec.ProtocolError(
            "bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}", cmd.rid
        )
    options = Options(cmd.players, cmd.time_limit, cmd.undo, cmd.public, cmd.hints,
                      cmd.winnable, rated=cmd.rated)
    race = _new_race(world, session, cmd.game, options, cmd.seed, now)
    return Effects(race=race, created=race, rid=cmd.rid, barrier=True,
                   steps=[Reply(messages.created(race, cmd.rid))])

def _new_race(
    world: World, session: Session, game: str, options: Options, seed: int | None, now: int
) -> Race:
    _may_create_race(world, session.address, session.id)
    _writable(world)
    deals = world.deals
    if options.winnable:
        if not deals.ready(game):
            raise NeedsDeals(game, 1)
        if deals.demo and not options.demo_catalogue:
            options = dataclasses.replace(options, demo_catalogue=True)
    race = Race(
        world.entropy.race_id(),
        game,
        seed if seed is not None else deals.draw(game, options.winnable),
        world.entropy.salt(),
        options,
        now,
        world.entropy.token(),
        countdown_ms=world.countdown_ms,
        seed_chosen=seed is not None,
    )
    race.creator = (session.address, session.id)
    return race

@dataclass(frozen=True)
class Seat:
    """A racer a race is made for (a quick race's seeker, a house bot, the daily deal's
    player): ``ready`` when he is there already (a house bot)."""

    name: str
    pid: str | None = None
    rating: int | None = None
    bot: bool = False
    level: int | None = None
    ready: bool = False
    provisional: bool = False
    #: The player's network's tag and whether he is an account (the rules of rated play).
    net: str = ""
    account: bool = False


def seated_race(world: World, address: str, game: str, options: Options, seats: list[Seat],
                now: int, seed: int | None = None, salt: str | None = None,
                race_id: str | None = None, absent_ends: bool | None = None
                ) -> tuple[Race, Outcome]:
    """A new race made for ``seats`` (by the matchmaker, a challenge, a rematch in one click, a
    house bot, the daily deal), with their racers joined; it counts down once every racer sat
    (``join`` with his token), and a seat not taken within ``SEAT_GRACE_S`` is forfeited — in a
    race of people paired or challenged (``absent_ends``; by default a quick race's and a
    challenge's), the race ends then (``no_show``). Counted against ``address``'s share of the
    races. ``seed``/``salt``: the daily deal's (else a secret random deal, a winnable one if
    the options ask: NeedsDeals until one is ready)."""
    _may_create_race(world, address, None)
    _writable(world)
    if game not in solrules.GAMES:
        raise RaceError("bad_message", f"unknown game; one of {', '.join(solrules.GAMES)}")
    if seed is None and options.winnable and not world.deals.ready(game):
        raise NeedsDeals(game, 1)
    if absent_ends is None:
        absent_ends = options.kind in ("quick", "challenge")
    race = Race(
        race_id or world.entropy.race_id(), game,
        seed if seed is not None else world.deals.draw(game, options.winnable),
        salt or world.entropy.salt(), options, now, world.entropy.token(),
        countdown_ms=world.countdown_ms, seated_until=now + SEAT_GRACE_S * 1000, forfeit=True,
        absent_ends=absent_ends,
    )
    race.creator = (address, -1)
    out = Outcome()
    for seat in seats:
        joined = race.join(seat.name, world.entropy.token(), now, bot=seat.bot, pid=seat.pid,
                           rating=seat.rating, level=seat.level, provisional=seat.provisional,
                           net=seat.net, account=seat.account)
        out.extend(joined)
        if seat.ready:
            assert joined.acted is not None
            out.extend(race.ready(joined.acted, now))
    out.acted = None
    return race, out


def one_click(race: Race) -> bool:
    """Is the rematch of ``race`` made in one click (both racers ask, then both are seated in
    it at once)? A race of two players (no bot, no anonymous racer) outside a tournament.
    Any other race keeps the first asker's new lobby race (the contract's first rematch)."""
    return (len(race.racers) == 2 and race.tournament is None
            and all(r.pid is not None and not r.bot for r in race.racers.values()))


def rematch(
    world: World, session: Session, fx: Effects, race: Race, player: str | None, now: int,
    want: bool = True,
) -> Effects:
    """A racer of a finished race asks for another race with the same settings on a new,
    secret deal (``want``), or says no to it.

    Between two players (:func:`one_click`): each ``rematch`` says "I want one"; everyone
    following the race is told who wants it (``rematch`` with ``next`` null and ``wants``);
    once both want it, the new race is made with both seated (no lobby, no ready: it counts
    down once both sat, an empty seat ends it) and each racer gets his seat (``paired``, only
    on the connection that speaks for him), everyone the new race's id. A want is dropped
    when its racer has no connection left (he would not come), and ``want: false`` drops
    every want (``declined``). Wants live with the race in memory, not on disk.

    Any other race (a custom race with anonymous racers, or of more than two): the first asker
    creates a new lobby race and gets its host token; everyone following the old race is told
    (``rematch``), and later askers get the same new race."""
    racer = race.racer(player)
    if race.status != "finished":
        raise RaceError("race_not_over", "a rematch comes once the race is over")
    kind = race.options.kind
    if kind == "daily":
        raise RaceError("forbidden", "the daily deal is played once a day: come back tomorrow")
    if kind == "bot":
        raise RaceError("forbidden", "a rematch against a house bot is a new bot race: "
                        "play the bot again")
    if kind == "arena":  # the arena pairs its racers again, by its table
        raise RaceError("forbidden", "an arena pairs you again by itself")
    known = race.rematch and (world.races.get(race.rematch)
                              or world.finished.get(race.rematch))
    if known:
        fx.steps.append(Reply(messages.rematch(race, known, rid=fx.rid)))
        if one_click(race):
            seat = next((r for r in known.racers.values() if r.pid == racer.pid), None)
            if seat is not None and known.status == "lobby" and not seat.ready:
                others = [r for r in known.racers.values() if r is not seat]
                fx.steps.append(Reply(messages.paired(known, seat, others, rematch=race.race)))
        return fx
    if one_click(race):
        return _rematch_both(world, session, fx, race, racer.player, now, want)
    if not want:
        fx.steps.append(Reply(messages.rematch(race, None, rid=fx.rid)))
        return fx
    # A rematch of a custom race: an ordinary race with the same settings.
    options = dataclasses.replace(race.options, kind=None, day=None)
    new = _new_race(world, session, race.game, options, None, now)
    race.rematch = new.race
    fx.created = new
    fx.steps += [Reply(messages.rematch(race, new, by=racer.name, rid=fx.rid, host=True)),
                 Announce(race.race, messages.rematch(race, new, by=racer.name))]
    fx.barrier = True
    return fx


def _rematch_both(world: World, session: Session, fx: Effects, race: Race, player: str,
                  now: int, want: bool) -> Effects:
    """The rematch in one click (see :func:`rematch`)."""
    wants = race.rematch_wants
    name = race.racers[player].name
    if not want:
        wants.clear()
        msg = messages.rematch(race, None, declined=name)
        fx.steps += [Reply({**msg, "rid": fx.rid}), Announce(race.race, msg)]
        return fx
    for wanting in list(wants):  # someone who left would not come to his seat
        if race.racers[wanting].connections <= 0 and wanting != player:
            wants.discard(wanting)
    wants.add(player)
    if len(wants) < len(race.racers):
        msg = messages.rematch(race, None, by=name, wants=sorted(wants))
        fx.steps += [Reply({**msg, "rid": fx.rid}), Announce(race.race, msg)]
        return fx
    # Both want it: the same settings (rated as it was: the rules of rated play apply again
    # when it is scored), a new secret deal, both seated.
    old = list(race.racers.values())
    seats = [Seat(r.name, r.pid, r.rating, provisional=r.provisional, net=r.net,
                  account=r.account) for r in old]
    options = dataclasses.replace(race.options, day=None)
    new, opened = seated_race(world, session.address, race.game, options, seats, now,
                              absent_ends=True)
    race.rematch = new.race
    wants.clear()
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

def hint(
    world: World, session: Session, fx: Effects, race: Race, player: str | None, now: int
) -> Effects:
    """A move for the racer from a winning line (see :mod:`solrace.solver.assist`), counted in
    the standings; NeedsHint until it has been worked out."""
    racer = race.may_hint(player)
    answer = world.hint_answer(race.race, racer.player, racer.seq)
    if answer is None:
        refused = world.hint_refusal(session.address)
        if refused is not None:
            raise refused
        raise NeedsHint(race.race, racer.player, racer.seq, race.game, race.seed,
                        list(racer.actions), session.address)
    _writable(world)
    fx.outcomes.append(race.hint(racer.player, now))
    fx.steps += [Reply(messages.hint(race, racer.player, answer, fx.rid)), EMIT]
    return fx

# ------------------------------------------------------------ tournaments
def tournament(world: World, session: Session, cmd: commands.TournamentCmd, now: int) -> Effects:
    if cmd.action == "create":
        assert cmd.create is not None
        unknown = [g for g in cmd.create["games"] if g not in solrules.GAMES]
        if unknown:
            raise codec.ProtocolError(
                "bad_message", f"unknown game {unknown[0][:40]!r}; one of "
                f"{', '.join(solrules.GAMES)}", cmd.rid)
        live = [t for t in world.tournaments.values() if t.status != "finished"]
        caps = world.caps
        held = sum(1 for t in live if t.creator == session.address)
        admit("tournaments", held, len(live), caps.tournaments, caps.tournaments_per_address)
        _writable(world)
        settings = Settings.from_record(cmd.create)
        new = Tournament(world.entropy.tournament_id(), settings, world.entropy.token(), now)
        new.creator = session.address
        # An empty outcome to emit: it arms the tournament's deadline (entry closes).
        return Effects(tournament=new, tcreated=True, rid=cmd.rid, barrier=True,
                       steps=[Reply(messages.tournament_created(new, cmd.rid)), EMIT],
                       touts=[TOutcome()])
    tid = cmd.race
    t = world.tournaments.get(tid)
    if t is None:
        if tid in world.reloading:
            raise RaceError("unavailable", "the tournament is being reloaded: try again")
        raise NotLoaded(tid, tournament=True)
    fx = Effects(tournament=t, rid=cmd.rid)
    if cmd.action == "watch":
        _may_follow(world, session, tid)
        fx.steps += [Follow(tid), TView(tid, cmd.rid)]
        return fx
    if cmd.action == "leave":
        fx.steps += [Unfollow(tid), Unbind(tid), Reply(messages.ok(tid, cmd.rid))]
        fx.barrier = True
        return fx
    if cmd.action == "join":
        if cmd.token is not None:
            entrant = t.find_token(cmd.token)
            if entrant is None:
                raise RaceError("forbidden", "unknown token for this tournament")
        elif tid in session.seats and session.seats[tid] in t.entrants:
            # One connection enters a tournament once: joining again gives the same
            # entrant back (a client cannot fill a tournament by itself).
            entrant = t.entrants[session.seats[tid]]
        else:
            _may_follow(world, session, tid)
            _may_enter(world, session, t)
            _writable(world)
            assert cmd.name is not None
            out = t.join(cmd.name, world.entropy.token(), cmd.bot, cmd.code, now)
            fx.touts.append(out)
            assert out.entrant is not None
            entrant = t.entrants[out.entrant]
            fx.steps.append(Entered(tid, entrant.entrant, session.address))
        fx.steps += [EMIT, Bind(tid, entrant.entrant), Follow(tid),
                     Reply(messages.tournament_joined(t, entrant, cmd.rid)),
                     TView(tid), Seats(tid, entrant.entrant)]
        fx.barrier = True
        return fx
    _writable(world)
    token = cmd.token or ""
    winnable = t.settings.winnable

    def draw(game: str) -> int:
        return world.deals.draw(game, winnable)

    if cmd.action == "start":
        _room_for_round(world, t, token)
        _deals_for_round(world, t, token, t.next_game(), t.races_of_next_round())
        fx.touts.append(t.start(token, now, draw))
    elif cmd.action == "next":
        _room_for_round(world, t, token)
        _deals_for_round(world, t, token, t.next_game(), t.races_of_next_round())
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
            _deals_for_round(world, t, token, cur.game, 1)
        fx.touts.append(t.redeal(token, cmd.round or 0, now, draw))
    elif cmd.action == "finish":
        fx.touts.append(t.finish(token, now))
    elif cmd.action == "add_bot":
        fx.touts.append(_add_bot(world, t, token, cmd.level or 1, now))
    fx.steps += [Reply(messages.ok(tid, cmd.rid)), EMIT]
    return fx

def _add_bot(world: World, t: Tournament, token: str, level: int, now: int) -> TOutcome:
    """The host enters a house bot of ``level``, named after it (numbered when the tournament
    has one of that name already)."""
    if not world.can_play_bot(level):
        raise RaceError("unavailable", "this bot needs the server's solver, which is off here: "
                        "choose level 1 or 2")
    base = bot_name(LEVELS[level])
    names = {e.name for e in t.entrants.values()}
    name = next(n for i in range(1, len(names) + 2)
                if (n := base if i == 1 else f"{base} {i}") not in names)
    return t.add_bot(token, name, world.entropy.token(), level, now)


def _may_enter(world: World, session: Session, t: Tournament) -> None:
    """This address's share of the tournament's entrants, and the part of them kept for
    addresses with none yet (see :mod:`solrace.core.quotas`)."""
    held = world.entrants_from(t.tid, session.address)
    why = refusal(held, len(t.active()), t.settings.max_entrants,
                  world.caps.entrants_per_address)
    if why == "share":
        raise RaceError("limit_reached", f"{held} entrants of this tournament came from "
                        "your network already, its share")
    if why == "reserve":
        raise RaceError("tournament_full", "the tournament is nearly full; the last places "
                        "are kept for players from other networks")

def _deals_for_round(world: World, t: Tournament, token: str, game: str, races: int) -> None:
    """A winnable tournament's next round needs its deals ready (one per round, one per
    race in a knockout): NeedsDeals until they are."""
    if not t.settings.winnable or not t.is_host(token):
        return
    need = races if t.settings.format == "knockout" else 1
    if world.deals.ready(game) < need:
        raise NeedsDeals(game, need)

def _room_for_round(world: World, t: Tournament, token: str) -> None:
    """The races of the tournament's next round fit in the race cap, outside the reserve
    kept for single players (see :mod:`solrace.core.quotas`); ``limit_reached`` otherwise.
    Only the host may ask (the tournament checks the token after)."""
    if not t.is_host(token):
        return
    need = t.races_of_next_round()
    if not outside_reserve(len(world.races), world.caps.races, need):
        raise RaceError("limit_reached", f"this server cannot hold the {need} races of "
                        "the next round now: try again in a while")

def join(
    world: World, session: Session, fx: Effects, race: Race, cmd: commands.Join, now: int
) -> Effects:
    """Join as a new racer (``name``) or resume one (``token``): ``joined``, ``snapshot``
    and, in a running race, the racer's ``state``."""
    seat = session.seats.get(race.race)
    who = session.who
    mine = None if who is None else next(
        (r for r in race.racers.values() if r.pid == who.id), None)
    if cmd.token is not None or mine is not None:
        # A token, or a player who is a racer here already (from another tab or device):
        # that racer, resumed.
        racer = race.find_token(cmd.token) if cmd.token is not None else mine
        if racer is None:
            raise RaceError("forbidden", "unknown token for this race")
        if race.seated_until is not None and race.status == "lobby" and not racer.ready:
            # A tournament's entrant takes his seat: the race starts once all are there.
            _writable(world)
            fx.outcomes.append(race.ready(racer.player, now))
    elif race.seated_until is not None and seat is None:
        raise RaceError("forbidden", "this race seats a tournament's entrants: join the "
                        "tournament to race in it")
    elif seat is not None:
        # One connection holds one seat per race: joining again, even after leaving,
        # gives the same racer back (a client cannot fill a lobby by itself).
        racer = race.racers[seat]
    else:
        _may_follow(world, session, race.race)
        _writable(world)
        net = world.net(session.address)
        if who is not None:  # a player races under his name
            out = race.join(who.name, world.entropy.token(), now, bot=cmd.bot, pid=who.id,
                            rating=who.rating(race.game),
                            provisional=who.provisional(race.game), net=net,
                            account=who.account)
        else:
            assert cmd.name is not None
            out = race.join(cmd.name, world.entropy.token(), now, bot=cmd.bot, net=net)
        fx.outcomes.append(out)
        assert out.acted is not None
        racer = race.racers[out.acted]
    fx.steps += [EMIT, Bind(race.race, racer.player), Follow(race.race, cmd.boards, cmd.lean),
                 Reply(messages.joined(race, racer, cmd.rid)), Snapshot(race.race)]
    if race.status == "running" or any(out.started for out in fx.outcomes):
        fx.steps.append(State(race.race, racer.player))
    fx.barrier = True
    return fx
