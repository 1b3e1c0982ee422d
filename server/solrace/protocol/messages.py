"""Wire messages built from a race's state: what each message looks like (docs/protocol.md).

The room (:mod:`solrace.core.race`) knows what happened; this module knows how it is written,
and asks :mod:`solrace.core.views` which cards the receiver may see and
:mod:`solrace.core.shared_deal` (through ``race.revealed``) whether seed, salt and move lists
may be shown. Pure: no I/O."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import solrules

from solrace.core import last_racer
from solrace.core.challenge import Challenge
from solrace.core.errors import Code
from solrace.core.race import Race
from solrace.core.race_parts import RaceEvent
from solrace.core.racer import Racer
from solrace.core.tournament import Entrant, Result, TEvent, Tournament, shared_places
from solrace.core.views import board_for
from solrace.settings import NO_SHOW_PAUSE_S

Message = dict[str, Any]


def event(race: Race, ev: RaceEvent) -> Message:
    """A numbered race event. ``race_over`` carries seed and salt only if the deal is revealed
    (a race of a tournament round that ends before the others gets ``reveal`` later, with
    them)."""
    msg: Message = {"type": ev.kind, "race": race.race, "v": ev.v, **ev.fields}
    if ev.kind in ("race_over", "reveal") and race.revealed:
        msg["seed"] = str(race.seed)
        msg["salt"] = race.salt
        if race.par is not None:
            msg["par"] = race.par
    return msg


def state(race: Race, player: str, rid: Any = None) -> Message:
    """The racer's own ``state``: his board with every face-up card, every legal move (none
    once he is done or the race is not running), progress."""
    racer = race.racers[player]
    if racer.done or race.status != "running":
        legal: list[str] = []
    else:
        legal = list(racer.game.legal_by_text())
    msg: Message = {
        "type": "state",
        "race": race.race,
        "player": player,
        "seq": racer.seq,
        "board": racer.game.board(),
        "legal": legal,
        "safe": safe_moves(racer.game, legal),
        "progress": racer.progress(),
    }
    if rid is not None:
        msg["rid"] = rid
    return msg


def lean_state(race: Race, player: str, turned: int, rid: Any = None) -> Message:
    """The racer's ``state`` after his move or undo, for a client that knows the rules
    (``join`` with ``lean``): no board, no legal list, no safe moves (it works them out from
    the board it has), only what it could not know: the seq, progress, and the cards the action
    turned face up (``turned``, a bitmask of physical cards) with their places."""
    racer = race.racers[player]
    msg: Message = {
        "type": "state",
        "race": race.race,
        "player": player,
        "seq": racer.seq,
        "lean": True,
        "progress": racer.progress(),
        "turned": [{"pile": p, "index": i, "card": c}
                   for p, i, c in racer.game.places(turned)],
    }
    if rid is not None:
        msg["rid"] = rid
    return msg


def safe_moves(game: solrules.Game, legal: list[str]) -> list[str]:
    """The moves of ``legal`` that send a card home when nothing could ever need it, judged
    from what every player sees (``solrules.safe_moves``): a client may play them for the
    racer (auto-move). Worked out only when a foundation move is legal at all."""
    for text in legal:
        if ">f" in text:
            return solrules.safe_moves(game)
    return []


def header(race: Race) -> Message:
    """The race's public facts, common to snapshots and the HTTP summary."""
    return {
        "race": race.race,
        "game": race.game,
        "status": race.status,
        "v": race.v,
        "options": race.options.as_dict(),
        "commitment": race.commitment,
        "seed_chosen": race.seed_chosen,
        "created_at": race.created_at,
        "starts_at": race.starts_at,
        "started_at": race.started_at,
        "ends_at": race.ends_at,
        "tournament": race.tournament,
        "arena": race.arena,
        "seated_until": race.seated_until,
        "reason": race.reason,
        "rematch": race.rematch,
        "rematch_wants": sorted(race.rematch_wants),
        "last_racer": last_racer.view(race),
    }


def player_entry(race: Race, racer: Racer) -> Message:
    return {
        "player": racer.player,
        "name": racer.name,
        "bot": racer.bot,
        "progress": racer.progress(),
        "ready": racer.ready,
        "finished": racer.finished_at is not None,
        "place": racer.place,
        "time_ms": race.time_ms(racer),
        "resigned": racer.resigned,
        "hints": racer.hints,
        "penalty_ms": racer.penalty_ms,
        "connected": racer.connections > 0,
        "offline_since": racer.offline_since,
        **racer.identity(),
    }


def snapshot(
    race: Race, you: str | None, seat: Racer | None, now: int, rid: Any = None,
    masking: bool = True,
) -> Message:
    """The full current view for one receiver: ``you`` is his racer in this race (None for a
    spectator), ``seat`` his racer in the deal (see :func:`solrace.core.views.seat_of`), which
    decides the cards he is shown. Once the race runs every racer's board is included; before
    the start none, not even an open Scotch layout, so that nobody studies the deal before the
    clock runs. Standings once finished; seed and salt once the deal is revealed."""
    boards = race.status in ("running", "finished")
    players = []
    for racer in race.racers.values():
        entry = player_entry(race, racer)
        if boards:
            entry["board"] = board_for(race, racer.player, seat, masking)
        players.append(entry)
    msg: Message = {
        "type": "snapshot",
        **header(race),
        "now": now,
        "you": you,
        "role": "racer" if you is not None else "spectator",
        "players": players,
    }
    if race.status == "finished":
        msg["standings"] = race.standings()
        msg["ratings"] = race.ratings
    if race.revealed:
        msg["seed"] = str(race.seed)
        msg["salt"] = race.salt
        if race.par is not None:
            msg["par"] = race.par
    if rid is not None:
        msg["rid"] = rid
    return msg


def summary(race: Race, masking: bool = True) -> Message:
    """The ``GET /api/races/{race}`` view, as any outsider may see it: boards while the race
    runs (masked by the views rule); move lists, seed and salt once the deal is revealed."""
    revealed = race.revealed
    boards = race.status in ("running", "finished")
    players = []
    for racer in race.racers.values():
        entry = player_entry(race, racer)
        del entry["connected"], entry["offline_since"]
        if boards:
            entry["board"] = board_for(race, racer.player, None, masking)
        if revealed:
            entry["moves"] = list(racer.actions)
        players.append(entry)
    out: Message = {**header(race), "finished_at": race.finished_at, "players": players}
    if race.status == "finished":
        out["standings"] = race.standings()
        out["ratings"] = race.ratings
    if revealed:
        out["seed"] = str(race.seed)
        out["salt"] = race.salt
        if race.par is not None:
            out["par"] = race.par
    return out


def created(race: Race, rid: Any = None) -> Message:
    msg: Message = {
        "type": "created",
        "race": race.race,
        "host_token": race.host_token,
        "commitment": race.commitment,
        "game": race.game,
        "options": race.options.as_dict(),
        "seed_chosen": race.seed_chosen,
    }
    if rid is not None:
        msg["rid"] = rid
    return msg


def joined(race: Race, racer: Racer, rid: Any = None) -> Message:
    msg: Message = {
        "type": "joined",
        "race": race.race,
        "player": racer.player,
        "token": racer.token,
        "name": racer.name,
        "bot": racer.bot,
        **racer.identity(),
    }
    if rid is not None:
        msg["rid"] = rid
    return msg


def paired(race: Race, racer: Racer, opponents: list[Racer], rid: Any = None,
           casual: str | None = None, rematch: str | None = None,
           challenge: str | None = None) -> Message:
    """A seat of a race made for the receiver (a quick race, a bot race, the daily deal, a
    challenge, a rematch in one click): his racer and its token (he takes the seat with
    ``join``), and who he races. ``casual``: why the race is casual although he asked for a
    rated one (``"guest"``: he or his challenger has no password). ``rematch``: the race it
    is the rematch of; ``challenge``: the challenge it came from."""
    o = race.options
    msg: Message = {
        "type": "paired", "race": race.race, "player": racer.player, "token": racer.token,
        "game": race.game, "time_limit": o.time_limit, "rated": o.rated, "kind": o.kind,
        "opponents": [{"name": r.name, "bot": r.bot, **r.identity()} for r in opponents],
    }
    if o.day is not None:
        msg["day"] = o.day
    if casual is not None:
        msg["casual"] = casual
    if rematch is not None:
        msg["rematch"] = rematch
    if challenge is not None:
        msg["challenge"] = challenge
    if rid is not None:
        msg["rid"] = rid
    return msg


def seeking(game: str, time_limit: int, rated: bool, bot_at: int | None,
            casual: str | None = None, rid: Any = None, since: int | None = None) -> Message:
    """A seek is in its queue: ``bot_at`` (unix ms) is when a house bot takes the other seat
    if nobody comes (None: never); ``casual`` as in :func:`paired`; ``since`` (unix ms) when
    the seek began (earlier than now for a seek taken over after a page reload)."""
    msg: Message = {"type": "seeking", "game": game, "time_limit": time_limit, "rated": rated,
                    "bot_at": bot_at, "since": since}
    if casual is not None:
        msg["casual"] = casual
    if rid is not None:
        msg["rid"] = rid
    return msg


def challenge(ch: Challenge, rid: Any = None, you: str | None = None,
              kind: str = "challenge") -> Message:
    """A challenge as its pages see it (:meth:`Challenge.view`): to every page of the player
    it names when it is made, in answer to ``challenge_get`` (``you``: ``"challenger"``,
    ``"challenged"`` or ``"other"``), and, as ``challenge_created``, to its challenger."""
    msg: Message = {"type": kind, **ch.view()}
    if you is not None:
        msg["you"] = you
    if rid is not None:
        msg["rid"] = rid
    return msg


def challenges(incoming: list[Challenge], outgoing: list[Challenge],
               rid: Any = None) -> Message:
    """A player's open challenges: made for him, and by him (oldest first)."""
    msg: Message = {"type": "challenges", "incoming": [c.view() for c in incoming],
                    "outgoing": [c.view() for c in outgoing]}
    if rid is not None:
        msg["rid"] = rid
    return msg


def challenge_answer(kind: str, ch: Challenge, **fields: Any) -> Message:
    """What became of a challenge, to its players' pages: ``challenge_declined`` {``by``
    (who), ``open`` (a link stays open for others)} and ``challenge_expired`` to the
    challenger, ``challenge_ended`` {``reason``: accepted, declined, cancelled, expired} to
    the player it was for."""
    return {"type": kind, "challenge": ch.id, **fields}


#: Why a seek left its queue without its connection asking (``seek_ended``).
SEEK_ENDED = {
    "replaced": "you seek a race from another tab or device now: this search has stopped",
    "no_show": "you did not take your seat in your last quick race: you may seek again in "
               f"{NO_SHOW_PAUSE_S} s",
    "seated": "a challenge of yours was accepted: your race is there, this search has stopped",
}


def seek_ended(reason: str) -> Message:
    """A seek left its queue without its connection asking: ``replaced`` (the same player
    seeks from another connection: one seek per player), ``no_show`` (he was paired and
    never took his seat: he may not seek for a while) or ``seated`` (a challenge gave him a
    race)."""
    return {"type": "seek_ended", "reason": reason, "message": SEEK_ENDED[reason]}


def error(code: Code, message: str, rid: Any = None, **fields: Any) -> Message:
    """Every refusal: its ``code`` (solrace.core.errors, the table of docs/protocol.md), a
    sentence a player understands and what the code carries (``until``, ``retry_after``)."""
    msg: Message = {"type": "error", "code": code, "message": message, **fields}
    if rid is not None:
        msg["rid"] = rid
    return msg


def pong(now: int, rid: Any = None) -> Message:
    """The answer to ``ping``, with the server's clock (unix ms)."""
    return {"type": "pong", "rid": rid, "now": now}


def service(healthy: bool) -> Message:
    """Whether the server can save moves now (every connected client is told)."""
    return {"type": "service", "status": "ok" if healthy else "degraded"}


def replaced(unit: str, player: str, tournament: bool = False) -> Message:
    """To a connection that spoke for a racer (or an entrant) another one took over."""
    if tournament:
        return {"type": "replaced", "tournament": unit, "entrant": player, "race": unit,
                "player": player}
    return {"type": "replaced", "race": unit, "player": player}


def board(race_id: str, player: str, cards: Message) -> Message:
    """A view of one racer's board (unnumbered, throttled), as its receiver may see it."""
    return {"type": "board", "race": race_id, "player": player, "board": cards}


def rematch(old: Race, new: Race | None, by: str | None = None, rid: Any = None,
            host: bool = False, wants: list[str] | None = None,
            declined: str | None = None) -> Message:
    """The rematch of ``old`` is ``new``: to everyone following ``old`` (``by`` who asked),
    and to the asker, who gets the host token of a race he created (``host``). In one click
    (:func:`solrace.protocol.dispatch.rematch`), ``new`` is None until both racers want it:
    ``wants`` the racers who do (``by`` the last of them), or ``declined`` the name of the
    racer who said no."""
    msg: Message = {"type": "rematch", "race": old.race,
                    "next": None if new is None else new.race}
    if by is not None:
        msg["by"] = by
    if wants is not None:
        msg["wants"] = wants
    if declined is not None:
        msg["declined"] = declined
    if rid is not None:
        msg["rid"] = rid
    if host and new is not None:
        msg["host_token"] = new.host_token
        msg["commitment"] = new.commitment
    return msg


def tournament_created(t: Tournament, rid: Any = None) -> Message:
    return {"type": "tournament_created", "rid": rid, "tournament": t.tid,
            "host_token": t.host_token}


def tournament_joined(t: Tournament, entrant: Entrant, rid: Any = None) -> Message:
    return {"type": "tournament_joined", "rid": rid, "tournament": t.tid,
            "entrant": entrant.entrant, "token": entrant.token, "name": entrant.name,
            "bot": entrant.bot}


def ok(race_id: str, rid: Any = None) -> Message:
    msg: Message = {"type": "ok", "race": race_id}
    if rid is not None:
        msg["rid"] = rid
    return msg


def listing(race: Race) -> Message:
    """A public race waiting for racers, as the home page's lobby lists it."""
    return {
        "race": race.race,
        "game": race.game,
        "status": race.status,
        "options": race.options.as_dict(),
        "racers": len(race.racers),
        "seed_chosen": race.seed_chosen,
        "created_at": race.created_at,
        "starts_at": race.starts_at,
    }


def par(race: Race) -> Message:
    """The deal's par, worked out after the deal was revealed (unnumbered)."""
    return {"type": "par", "race": race.race, "par": race.par}


def hint(race: Race, player: str, answer: Message, rid: Any = None) -> Message:
    msg: Message = {"type": "hint", "race": race.race, "move": answer.get("move"),
                    "source": answer.get("source", "heuristic"),
                    "lost": bool(answer.get("lost", False)),
                    "hints": race.racers[player].hints}
    if rid is not None:
        msg["rid"] = rid
    return msg


def presence(race: Race, player: str) -> Message:
    return {"type": "presence", "race": race.race, "player": player,
            "connected": race.racers[player].connections > 0}


# ------------------------------------------------------------------------- tournaments
def race_order(t: Tournament, results: list[Result]) -> tuple[list[str], list[int]]:
    """A tournament race's entrants in place order, and their places: equal results share a
    place (two entrants who resigned with nothing home are both 3rd: ``[1, 2, 3, 3]``)."""
    ordered = sorted(results, key=lambda r: r.key(t.entrants[r.entrant].order))
    return [r.entrant for r in ordered], shared_places([r.rank() for r in ordered])


def tournament_view(t: Tournament, you: str | None = None, rid: Any = None) -> Message:
    """The whole ``tournament`` view; ``you``: the receiver's entrant, if any."""
    rounds = []
    for rnd in t.rounds:
        orders = {race: race_order(t, res) for race, res in rnd.results.items()}
        entry: Message = {"round": rnd.number, "game": rnd.game, "races": list(rnd.races),
                          "status": "over" if rnd.over else "running",
                          "results": {race: order[0] for race, order in orders.items()},
                          "places": {race: order[1] for race, order in orders.items()},
                          "seats": {race: list(rnd.seats.get(race, [])) for race in rnd.races}}
        if rnd.void:
            entry["void"] = list(rnd.void)
        rounds.append(entry)
    msg: Message = {
        "type": "tournament",
        "tournament": t.tid,
        "name": t.settings.name,
        "format": t.settings.format,
        "status": t.status,
        "v": t.v,
        "settings": t.settings.as_dict(),
        "total_rounds": t.total_rounds,
        "entry_open": t.entry_open,
        "paused": t.paused,
        "next_at": t.next_deadline() if t.status == "running" else None,
        "entry_ends": t.entry_ends() if t.status == "entry" else None,
        "reason": t.reason,
        "created_at": t.created_at,
        "entrants": [{"entrant": e.entrant, "name": e.name, "bot": e.bot,
                      "removed": e.removed, **({} if e.level is None else {"level": e.level})}
                     for e in t.entrants.values()],
        "rounds": rounds,
        "standings": t.standings(),
        "you": you,
    }
    bracket = t.bracket()
    if bracket is not None:
        msg["bracket"] = bracket
    if rid is not None:
        msg["rid"] = rid
    return msg


def tournament_event(t: Tournament, ev: TEvent) -> Message:
    if ev.kind == "standings":
        cur = t.current()
        msg = {"type": "standings", "tournament": t.tid, "v": ev.v,
               "round": cur.number if cur else 0, "standings": t.standings(),
               "round_over": bool(cur and cur.over), "status": t.status,
               "next_at": t.next_deadline() if t.status == "running" else None}
        if ev.race is not None and cur is not None and ev.race in cur.results:
            # The race that just ended and its order, for pages that list the rounds' races.
            msg["race"] = ev.race
            msg["results"], msg["places"] = race_order(t, cur.results[ev.race])
        return msg
    if ev.kind == "tournament_over":
        return {"type": "tournament_over", "tournament": t.tid, "v": ev.v,
                "standings": t.standings(), "reason": t.reason}
    view = tournament_view(t)
    view["v"] = ev.v
    return view


def seat(t: Tournament, round_: int, race: Race, player: str) -> Message:
    """An entrant's seat in a race of the tournament (to him only)."""
    return {"type": "round", "tournament": t.tid, "v": t.v, "round": round_,
            "race": race.race, "player": player, "token": race.racers[player].token,
            "game": race.game}


#: Characters that make a spreadsheet read a cell as a formula when they start it.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "|")
#: A separator some spreadsheet may split on (";" in many locales, full-width ones too), then
#: a formula start (full-width ones too): "x;=1+1" would put a formula in the next cell.
FORMULA_INSIDE = re.compile(r"([;,\t|；，]\s*)([=+\-@＝＋－＠﹦﹢﹣])")


def csv_cell(value: Any) -> Any:
    """A cell a spreadsheet will show as text, whatever separator it splits on: a formula
    start right after a separator inside it gets an apostrophe before it, and so does the
    cell if it starts with one, as written or once its full-width and other compatibility
    characters are folded (``＝`` is ``=``)."""
    if not isinstance(value, str):
        return value
    value = FORMULA_INSIDE.sub(r"\1'\2", value)
    if unicodedata.normalize("NFKC", value).startswith(FORMULA_START):
        return "'" + value
    return value


def standings_csv(t: Tournament) -> str:
    """The table as CSV: a header, then one row per entrant, every cell quoted and made safe
    for spreadsheets (:func:`csv_cell`)."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_ALL)
    writer.writerow(["place", "name", "points", "entrant", "bot"])
    for row in t.standings():
        place = row["place"] if row["place"] is not None else \
            "closed" if row.get("closed") else "flagged"
        writer.writerow([place, csv_cell(row["name"]), row["points"], row["entrant"],
                         "yes" if row["bot"] else "no"])
    return out.getvalue()
