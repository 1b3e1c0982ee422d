"""What the dispatcher decides about the rooms, with no message in sight: the races, tournaments
and arenas held (:func:`lookup`), whether the store takes writes, who may follow, join, hint or
ask for a rematch, and new rooms made within the caps and each client's share of them (see
:mod:`solrace.core.quotas`): a lobby race, a race made for its seats (:func:`seated_race`), a
tournament, an arena.

Each function either raises (:class:`~solrace.core.race_parts.RaceError`,
:class:`~solrace.core.tournament.TournamentError` or a
:class:`~solrace.core.effects.Pending`) before changing anything, or does what it says and
returns the domain result (a race, a racer, an outcome); :mod:`solrace.protocol.dispatch` turns
commands into these calls and renders their results as replies. Pure: no I/O, no clock, no
randomness of its own (ids, tokens and salts come from ``world.entropy``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

import solrules

from solrace.core.arena import Arena, ArenaSettings
from solrace.core.effects import Message, NeedsDeals, NeedsHint, NotLoaded, Session, World
from solrace.core.errors import Code
from solrace.core.identity import Who
from solrace.core.levels import LEVELS, bot_name
from solrace.core.quotas import admit, outside_reserve, refusal
from solrace.core.race import Race
from solrace.core.race_parts import Options, Outcome, RaceError
from solrace.core.racer import Racer
from solrace.core.tournament import Tournament
from solrace.core.tournament_parts import Entrant, Settings, TOutcome
from solrace.settings import ARENAS_PER_PLAYER, MAX_FOLLOWED, SEAT_GRACE_S

T = TypeVar("T")


# ------------------------------------------------------------------ the rooms held
def _held(world: World, held: T | None, key: str, what: str, tournament: bool = False) -> T:
    """``held`` if the world holds it; else NotLoaded (or ``unavailable`` while ``key`` is
    being rebuilt after a failed write)."""
    if held is None:
        if key in world.reloading:
            raise RaceError(Code.UNAVAILABLE, f"the {what} is being reloaded: try again")
        raise NotLoaded(key, tournament=tournament)
    return held


def lookup(world: World, race_id: str) -> Race:
    """A race held in memory (live or finished); see :func:`_held`."""
    return _held(world, world.races.get(race_id) or world.finished.get(race_id), race_id, "race")


def lookup_tournament(world: World, tid: str) -> Tournament:
    """A tournament held in memory; see :func:`_held`."""
    return _held(world, world.tournaments.get(tid), tid, "tournament", tournament=True)


def lookup_arena(world: World, aid: str) -> Arena:
    """An arena held in memory (arenas load as tournaments do); see :func:`_held`."""
    return _held(world, world.arenas.get(aid), aid, "arena", tournament=True)


def writable(world: World) -> None:
    """``unavailable`` while the store refuses writes."""
    if not world.writable:
        raise RaceError(Code.UNAVAILABLE, "the server cannot save moves right now: try again")


def may_follow(session: Session, unit: str) -> None:
    """One connection follows at most ``MAX_FOLLOWED`` races, tournaments and arenas."""
    if unit not in session.follows and len(session.follows) >= MAX_FOLLOWED:
        raise RaceError(
            Code.LIMIT_REACHED, f"one connection follows at most {MAX_FOLLOWED} races"
        )


# ------------------------------------------------------------------------ races
def may_create_race(world: World, address: str, conn: int | None) -> None:
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
            Code.LIMIT_REACHED,
            f"you already have {caps.lobbies} races waiting to start: start or finish one "
            "first",
        )


def new_race(
    world: World, session: Session, game: str, options: Options, seed: int | None, now: int
) -> Race:
    """A new lobby race of ``session``'s (``seed``: chosen by its creator; else a secret one,
    winnable if the options ask: NeedsDeals until one is ready)."""
    may_create_race(world, session.address, session.id)
    writable(world)
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
    may_create_race(world, address, None)
    writable(world)
    if game not in solrules.GAMES:
        raise RaceError(Code.BAD_MESSAGE, f"unknown game; one of {', '.join(solrules.GAMES)}")
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


def take_seat(world: World, session: Session, race: Race, token: str | None, name: str | None,
              bot: bool, now: int) -> tuple[Racer, Outcome | None]:
    """The racer ``session`` joins ``race`` as, and the outcome to make durable (None: none).

    A token, or a player who is a racer here already (from another tab or device): that racer,
    resumed (a tournament's entrant taking his seat gets ready: a seated race starts once all
    are there). One connection holds one seat per race: joining again, even after leaving,
    gives the same racer back (a client cannot fill a lobby by itself). Otherwise a new racer,
    under the player's name or ``name``; a race made for its seats takes nobody else."""
    seat = session.seats.get(race.race)
    who = session.who
    mine = None if who is None else next(
        (r for r in race.racers.values() if r.pid == who.id), None)
    if token is not None or mine is not None:
        racer = race.find_token(token) if token is not None else mine
        if racer is None:
            raise RaceError(Code.FORBIDDEN, "unknown token for this race")
        if race.seated_until is not None and race.status == "lobby" and not racer.ready:
            writable(world)
            return racer, race.ready(racer.player, now)
        return racer, None
    if race.seated_until is not None and seat is None:
        raise RaceError(Code.FORBIDDEN, "this race seats a tournament's entrants: join the "
                        "tournament to race in it")
    if seat is not None:
        return race.racers[seat], None
    may_follow(session, race.race)
    writable(world)
    net = world.net(session.address)
    if who is not None:  # a player races under his name
        out = race.join(who.name, world.entropy.token(), now, bot=bot, pid=who.id,
                        rating=who.rating(race.game), provisional=who.provisional(race.game),
                        net=net, account=who.account)
    else:
        assert name is not None
        out = race.join(name, world.entropy.token(), now, bot=bot, net=net)
    assert out.acted is not None
    return race.racers[out.acted], out


def take_hint(world: World, session: Session, race: Race, player: str | None, now: int
              ) -> tuple[str, Message, Outcome]:
    """A move for the racer from a winning line (see :mod:`solrace.solver.assist`), counted in
    the standings: his id, the answer and the outcome; NeedsHint until it has been worked
    out."""
    racer = race.may_hint(player)
    answer = world.hint_answer(race.race, racer.player, racer.seq)
    if answer is None:
        refused = world.hint_refusal(session.address)
        if refused is not None:
            raise refused
        raise NeedsHint(race.race, racer.player, racer.seq, race.game, race.seed,
                        list(racer.actions), session.address)
    writable(world)
    return racer.player, answer, race.hint(racer.player, now)


# --------------------------------------------------------------------- rematches
def one_click(race: Race) -> bool:
    """Is the rematch of ``race`` made in one click (both racers ask, then both are seated in
    it at once)? A race of two players (no bot, no anonymous racer) outside a tournament.
    Any other race keeps the first asker's new lobby race (the contract's first rematch)."""
    return (len(race.racers) == 2 and race.tournament is None
            and all(r.pid is not None and not r.bot for r in race.racers.values()))


def rematch_asker(race: Race, player: str | None) -> Racer:
    """The racer of ``race`` who asks for a rematch, if this race has one."""
    racer = race.racer(player)
    if race.status != "finished":
        raise RaceError(Code.RACE_NOT_OVER, "a rematch comes once the race is over")
    kind = race.options.kind
    if kind == "daily":
        raise RaceError(Code.FORBIDDEN, "the daily deal is played once a day: come back tomorrow")
    if kind == "bot":
        raise RaceError(Code.FORBIDDEN, "a rematch against a house bot is a new bot race: "
                        "play the bot again")
    if kind == "arena":  # the arena pairs its racers again, by its table
        raise RaceError(Code.FORBIDDEN, "an arena pairs you again by itself")
    return racer


def rematch_made(world: World, race: Race) -> Race | None:
    """The rematch of ``race`` made already, if it is held."""
    return (race.rematch and (world.races.get(race.rematch)
                              or world.finished.get(race.rematch))) or None


def seat_to_take(new: Race, racer: Racer) -> Racer | None:
    """``racer``'s seat in the rematch in one click ``new``, while it waits for him."""
    seat = next((r for r in new.racers.values() if r.pid == racer.pid), None)
    if seat is not None and new.status == "lobby" and not seat.ready:
        return seat
    return None


def lobby_rematch(world: World, session: Session, race: Race, now: int) -> Race:
    """The rematch of a race that is not :func:`one_click`: an ordinary lobby race with the
    same settings, on a new secret deal."""
    options = dataclasses.replace(race.options, kind=None, day=None)
    new = new_race(world, session, race.game, options, None, now)
    race.rematch = new.race
    return new


def want_rematch(race: Race, player: str, want: bool) -> bool:
    """``player`` wants the rematch in one click (``want``), or says no to it (every want is
    dropped then). A want is dropped when its racer has no connection left (he would not
    come). Whether every racer wants it now. Wants live with the race in memory."""
    wants = race.rematch_wants
    if not want:
        wants.clear()
        return False
    for wanting in list(wants):  # someone who left would not come to his seat
        if race.racers[wanting].connections <= 0 and wanting != player:
            wants.discard(wanting)
    wants.add(player)
    return len(wants) >= len(race.racers)


def both_rematch(world: World, address: str, race: Race, now: int) -> tuple[Race, Outcome]:
    """The rematch in one click, once both want it: the same settings (rated as it was: the
    rules of rated play apply again when it is scored), a new secret deal, both seated (its
    racers in the order of ``race``'s)."""
    seats = [Seat(r.name, r.pid, r.rating, provisional=r.provisional, net=r.net,
                  account=r.account) for r in race.racers.values()]
    options = dataclasses.replace(race.options, day=None)
    new, opened = seated_race(world, address, race.game, options, seats, now, absent_ends=True)
    race.rematch = new.race
    race.rematch_wants.clear()
    return new, opened


# ------------------------------------------------------------------- tournaments
def new_tournament(world: World, address: str, record: dict[str, Any], now: int) -> Tournament:
    """A new tournament of these settings (checked by the codec, games known), within the
    tournaments' cap and ``address``'s share of it."""
    live = [t for t in world.tournaments.values() if t.status != "finished"]
    caps = world.caps
    held = sum(1 for t in live if t.creator == address)
    admit("tournaments", held, len(live), caps.tournaments, caps.tournaments_per_address)
    writable(world)
    settings = Settings.from_record(record)
    new = Tournament(world.entropy.tournament_id(), settings, world.entropy.token(), now)
    new.creator = address
    return new


def enter(world: World, session: Session, t: Tournament, token: str | None, name: str | None,
          bot: bool, code: str | None, now: int) -> tuple[Entrant, TOutcome | None]:
    """The entrant ``session`` is in ``t``, and the outcome to make durable when he is new.

    A token resumes its entrant; one connection enters a tournament once (joining again gives
    the same entrant back: a client cannot fill a tournament by itself); else a new entrant,
    within the address's share (:func:`may_enter`)."""
    tid = t.tid
    if token is not None:
        entrant = t.find_token(token)
        if entrant is None:
            raise RaceError(Code.FORBIDDEN, "unknown token for this tournament")
        return entrant, None
    if tid in session.seats and session.seats[tid] in t.entrants:
        return t.entrants[session.seats[tid]], None
    may_follow(session, tid)
    may_enter(world, session, t)
    writable(world)
    assert name is not None
    out = t.join(name, world.entropy.token(), bot, code, now,
                 player=session.who.id if session.who is not None and not bot else None)
    assert out.entrant is not None
    return t.entrants[out.entrant], out


def may_enter(world: World, session: Session, t: Tournament) -> None:
    """This address's share of the tournament's entrants, and the part of them kept for
    addresses with none yet (see :mod:`solrace.core.quotas`)."""
    held = world.entrants_from(t.tid, session.address)
    why = refusal(held, len(t.active()), t.settings.max_entrants,
                  world.caps.entrants_per_address)
    if why == "share":
        raise RaceError(Code.LIMIT_REACHED, f"{held} entrants of this tournament came from "
                        "your network already, its share")
    if why == "reserve":
        raise RaceError(Code.TOURNAMENT_FULL, "the tournament is nearly full; the last places "
                        "are kept for players from other networks")


def add_bot(world: World, t: Tournament, token: str, level: int, now: int) -> TOutcome:
    """The host enters a house bot of ``level``, named after it (numbered when the tournament
    has one of that name already)."""
    if not world.can_play_bot(level):
        raise RaceError(Code.UNAVAILABLE, "this bot needs the server's solver, which is off here: "
                        "choose level 1 or 2")
    base = bot_name(LEVELS[level])
    names = {e.name for e in t.entrants.values()}
    name = next(n for i in range(1, len(names) + 2)
                if (n := base if i == 1 else f"{base} {i}") not in names)
    return t.add_bot(token, name, world.entropy.token(), level, now)


def deals_for_round(world: World, t: Tournament, token: str, game: str, races: int) -> None:
    """A winnable tournament's next round needs its deals ready (one per round, one per
    race in a knockout): NeedsDeals until they are."""
    if not t.settings.winnable or not t.is_host(token):
        return
    need = races if t.settings.format == "knockout" else 1
    if world.deals.ready(game) < need:
        raise NeedsDeals(game, need)


def room_for_round(world: World, t: Tournament, token: str) -> None:
    """The races of the tournament's next round fit in the race cap, outside the reserve
    kept for single players (see :mod:`solrace.core.quotas`); ``limit_reached`` otherwise.
    Only the host may ask (the tournament checks the token after)."""
    if not t.is_host(token):
        return
    need = t.races_of_next_round()
    if not outside_reserve(len(world.races), world.caps.races, need):
        raise RaceError(Code.LIMIT_REACHED, f"this server cannot hold the {need} races of "
                        "the next round now: try again in a while")


# ------------------------------------------------------------------------ arenas
def arena_player(world: World, session: Session) -> Who:
    """The player who enters or pauses in an arena (an arena's table names players; the
    connection's player was made, if need be, before the command came here)."""
    who = session.who
    if who is None:
        raise RaceError(Code.FORBIDDEN, "only a player enters an arena: open the page with "
                        "cookies on")
    if not world.writable:
        raise RaceError(Code.UNAVAILABLE, "the server cannot save this right now: try again")
    return who


def new_arena(world: World, session: Session, game: str, name: str | None, starts_in: int,
              minutes: int, time_limit: int, rated: bool, now: int) -> Arena:
    """A new arena of an **account**'s (``game`` known): at most :data:`ARENAS_PER_PLAYER`
    unfinished ones per player and the tournaments' share per client address (both count
    against the tournaments' cap)."""
    who = session.who
    if who is None or not who.account:
        raise RaceError(Code.FORBIDDEN, "an account (a name with a password) creates arenas")
    live = [a for a in world.arenas.values() if a.finished_at is None]
    mine = sum(1 for a in live if a.settings.creator == who.id)
    if mine >= ARENAS_PER_PLAYER:
        raise RaceError(Code.LIMIT_REACHED, f"you have {mine} arenas to come or running already")
    tournaments = [t for t in world.tournaments.values() if t.status != "finished"]
    caps = world.caps
    held = sum(1 for t in tournaments if t.creator == session.address)
    admit("tournaments", held, len(tournaments) + len(live), caps.tournaments,
          caps.tournaments_per_address)
    if not world.writable:
        raise RaceError(Code.UNAVAILABLE, "the server cannot save this right now: try again")
    settings = ArenaSettings(name or f"{who.name}'s arena", game, now + starts_in * 1000,
                             minutes, time_limit, rated, creator=who.id)
    return Arena(world.entropy.tournament_id(), settings, now)
