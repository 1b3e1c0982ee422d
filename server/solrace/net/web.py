"""HTTP routes on the WebSocket port: the browser client, health, and the read-only API.

``/ws`` goes on to the WebSocket handshake once the request passes the checks: the connection
cap (503), and the page's ``Origin`` (403: only this server's own pages, plus
``--allow-origin``, may open a socket, so that a page on another site cannot drive a
visitor's). Everything else is answered here: ``GET`` and ``HEAD`` only (405), no control
characters in the path (400), a rate per client address (429), security headers on every
answer (:mod:`solrace.net.answers` makes the answers). The API shows a race as any outsider
may see it (the views rule; move lists, seed and salt once the deal is revealed). A race not
in memory is loaded, and a replay built, away from the event loop; built replays are cached.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import solrules
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from solrace.core.arena import Arena
from solrace.core.errors import Code
from solrace.core.identity import Player, well_formed_key
from solrace.core.quotas import client_key, refusal
from solrace.core.rating import PROVISIONAL
from solrace.core.scoring import stats
from solrace.core.tournament import Tournament
from solrace.net.answers import (
    SINGLE_HEADERS,
    accepts_gzip,
    json_response,
    player_cookie,
    response,
    set_cookie,
    text_response,
)
from solrace.net.arena_routes import arena_api
from solrace.protocol import messages, player_messages, replays
from solrace.runtime.builder import Builder
from solrace.service.entropy import new_key
from solrace.service.rates import AddressRates
from solrace.settings import (
    ANALYSIS_RETRY_S,
    BUILDER_NICE,
    HTTP_BURST,
    HTTP_RATE,
    LEADERBOARD_MIN_RACES,
    REPLAY_CACHE_BYTES,
    REPLAY_COST,
    STATIC_BURST,
    STATIC_RATE,
)
from solrace.solver.analyst import Analyst
from solrace.store import sqlite_replays
from solrace.store.player_base import STATS_RESULTS, PlayerStore

if TYPE_CHECKING:
    from solrace.service.front import Front
    from solrace.service.hub import Hub
    from solrace.service.showcase import Showcase

log = logging.getLogger(__name__)

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".woff2": "font/woff2",
}


def client_dir() -> Path:
    """Where the browser client's files are: the installed package data if present, else
    the repo's ``client/`` directory."""
    packaged = Path(__file__).parents[1] / "webclient"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "client"


class ReplayCache:
    """Built replays (encoded), least recently used out first, at most ``limit`` bytes."""

    def __init__(self, limit: int = REPLAY_CACHE_BYTES) -> None:
        self.limit = limit
        self.size = 0
        self.items: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()

    def get(self, key: tuple[str, str, str]) -> bytes | None:
        body = self.items.get(key)
        if body is not None:
            self.items.move_to_end(key)
        return body

    def put(self, key: tuple[str, str, str], body: bytes) -> None:
        if len(body) > self.limit or key in self.items:
            return
        self.items[key] = body
        self.size += len(body)
        while self.size > self.limit:
            _, old = self.items.popitem(last=False)
            self.size -= len(old)


#: Bytes a second a slow client reads: an answer bigger than this gets more time to be read.
SLOW_CLIENT_BYTES = 256 * 1024
#: Seconds an answer may take to be read, at most.
MAX_ANSWER_SECONDS = 60.0
#: An answer bigger than this may not fit in the sockets' buffers at once: its reader is
#: given ANSWER_GRACE_S more than its size at SLOW_CLIENT_BYTES a second.
ANSWER_BUFFERED_BYTES = 64 * 1024
ANSWER_GRACE_S = 5.0

#: The client's pages (index.html): the first part of their paths.
PAGES = ("race", "tournament", "player", "leaderboard", "daily", "mod", "arena", "challenge")
#: The player routes of the API (``/api/{what}/...``).
PLAYER_API = ("me", "session", "signout", "players", "leaderboard", "daily", "mod")


async def player_page(store: PlayerStore, player: Player) -> dict[str, Any]:
    """``GET /api/players/{name}``: ratings with their history, statistics per game, and the
    latest races."""
    ratings = await store.ratings(player.id)
    results = await store.results(player.id, STATS_RESULTS)
    history: dict[str, list[list[int]]] = {}
    for r in reversed(results):  # oldest first
        if r.get("rated") and r.get("after") is not None:
            history.setdefault(r["game"], []).append([r["at"], r["after"], r["deviation"]])
    return {
        "id": player.id, "name": player.name, "created_at": player.created_at,
        "ratings": {g: {**r.as_dict(), "history": history.get(g, [])}
                    for g, r in ratings.items()},
        "stats": stats(results),
        "recent": [{k: r.get(k) for k in ("race", "game", "at", "place", "racers", "time_ms",
                                            "foundation", "total", "rated", "delta", "kind",
                                            "finished")}
                   for r in results[:20]],
    }


def _controls(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


class Routes:
    """The HTTP side of the server (see the module docstring).

    ``connections()`` is the number of open WebSocket connections, ``from_address(a)`` those
    of one client address; the caps are the hub's (:class:`solrace.core.quotas.Caps`);
    ``allow_origins`` the pages of other sites that may open a socket;
    ``trust_proxy``: take the client's address from ``X-Forwarded-For`` (the last address, the
    one the proxy saw), as when nginx is in front.
    """

    def __init__(
        self,
        hub: Hub,
        client: Path,
        *,
        connections: Callable[[], int] = lambda: 0,
        from_address: Callable[[str], int] = lambda address: 0,
        allow_origins: Iterable[str] = (),
        trust_proxy: bool = False,
        http_rate: float = HTTP_RATE,
        builder_nice: int = BUILDER_NICE,
    ) -> None:
        self.hub = hub
        self.client = client
        self.connections = connections
        self.from_address = from_address
        self.allow_origins = {o.rstrip("/").lower() for o in allow_origins}
        self.trust_proxy = trust_proxy
        self.rates = AddressRates(http_rate, burst=http_rate * HTTP_BURST / HTTP_RATE)
        self.static_rates = AddressRates(http_rate * STATIC_RATE / HTTP_RATE,
                                         burst=http_rate * STATIC_BURST / HTTP_RATE)
        self.replays = ReplayCache()
        self.builder = Builder(builder_nice)
        #: Post-race analyses, worked out by the hub's solver (none: thinks and moves only).
        self.analyst = Analyst(hub.assist.solver, hub.supervisor)
        self.files: dict[Path, tuple[str, bytes]] = {}
        #: Players and the daily deal (set by the app; None: the server keeps no players).
        self.front: Front | None = None
        #: The arenas to list (set by the app: the schedule knows them on every process).
        self.arenas_listed: Callable[[], Awaitable[list[Arena]]] | None = None
        #: The home page's live figures (set by the app: solrace.service.showcase).
        self.showcase: Showcase | None = None

    def address(self, conn: ServerConnection, request: Request | None) -> str:
        """The client's address (the proxy's forwarded one with ``trust_proxy``), as the
        unit of every per-client limit (:func:`solrace.core.quotas.client_key`: an IPv6 client
        is its /64)."""
        if self.trust_proxy and request is not None:
            forwarded = request.headers.get("X-Forwarded-For")
            if forwarded:
                return client_key(forwarded.rsplit(",", 1)[-1].strip()[:64])
            real = request.headers.get("X-Real-IP")
            if real:
                return client_key(real.strip()[:64])
        peer = conn.remote_address
        return client_key(str(peer[0])) if peer else ""

    def origin_ok(self, request: Request) -> bool:
        """Same origin as the page (the ``Host`` the browser asked for), an allowed origin, or
        no ``Origin`` at all (not a browser: the Python client, bots)."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if origin in self.allow_origins:
            return True
        parsed = urllib.parse.urlsplit(origin)
        host = (request.headers.get("Host") or "").lower()
        return parsed.scheme in ("http", "https") and bool(host) and parsed.netloc == host

    async def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        if request.method not in ("GET", "HEAD"):
            return response(405, b"only GET and HEAD", "text/plain; charset=utf-8",
                            [("Allow", "GET, HEAD")])
        if _controls(request.path):
            return text_response(400, "bad request")
        if any(len(request.headers.get_all(name)) > 1 for name in SINGLE_HEADERS):
            # Which one would count? Two answers to one question is a bad request.
            return text_response(400, "bad request: a header given twice")
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            caps = self.hub.caps
            address = self.address(conn, request)
            why = refusal(self.from_address(address), self.connections(), caps.connections,
                          caps.connections_per_address)
            if why == "share":
                return response(429, b"too many connections from your network",
                                "text/plain; charset=utf-8", [("Retry-After", "5")])
            if why is not None:
                return text_response(503, "too many connections: try again later")
            if not self.origin_ok(request):
                return text_response(403, "this page may not open a socket here")
            return None
        # A page load fetches some thirty client files: they cost little (a 304, or a small
        # file from memory) and have their own, larger budget, so that a room of players
        # behind one address loading pages at once does not use up its API calls. A replay
        # costs more only when it has to be built.
        address = self.address(conn, request)
        if path.startswith("/static/"):
            wait = self.static_rates.wait(address)
        else:
            cost = 1.0
            if "/replay/" in path:
                race_id, player = path.rsplit("/", 3)[1::2]
                gz = "gzip" if accepts_gzip(request.headers) else ""
                cached = self.replays.get((race_id, player, gz)) is not None
                cost = 1.0 if cached else REPLAY_COST
            wait = self.rates.wait(address, cost)
        if wait:
            return json_response(429, {"error": Code.RATE_LIMITED},
                                 [("Retry-After", str(max(1, math.ceil(wait))))])
        try:
            gzip_ok = accepts_gzip(request.headers)
            answer = await self.route(path, request.headers.get("If-None-Match"), gzip_ok,
                                      request, address)
        except Exception:
            log.exception("HTTP %s failed", path[:200])
            answer = json_response(500, {"error": Code.INTERNAL})
        if request.method == "HEAD":
            answer = dataclasses.replace(answer, body=b"")
        elif len(answer.body) > ANSWER_BUFFERED_BYTES:
            # websockets closes an HTTP answer's connection ``close_timeout`` (1 s) after
            # writing it, and aborts it if the client has not read it all by then: a replay of
            # a few hundred KB to a phone on a slow network, or to a busy client, would arrive
            # cut short. Give it the time a slow client needs, and some.
            conn.close_timeout = min(MAX_ANSWER_SECONDS, max(
                conn.close_timeout or 0.0,
                ANSWER_GRACE_S + len(answer.body) / SLOW_CLIENT_BYTES))
        return answer

    async def route(self, path: str, etag: str | None = None, gzip_ok: bool = False,
                    request: Request | None = None, address: str = "") -> Response:
        if path == "/healthz":
            if not self.hub.store.healthy:
                return text_response(503, "store unavailable")
            return text_response(200, "ok")
        if path == "/api/lobby":
            return json_response(200, [messages.listing(r) for r in self.hub.open_races()[:100]])
        if path == "/api/live" and self.showcase is not None:
            return json_response(200, self.showcase.answer())
        if path == "/api/games":
            deals = self.hub.assist.deals
            games = []
            for g in solrules.GAMES:
                entry = {"game": g, "title": solrules.TITLES.get(g, g),
                         "winnable": deals.winnable(g)}
                if deals.pool is not None and not deals.demo:
                    entry["pool"] = deals.pool.stats(g)
                if deals.demo:
                    entry["demo_catalogue"] = True
                games.append(entry)
            return json_response(200, games)
        parts = [p for p in path.split("/") if p]
        if path == "/" or (parts and parts[0] in PAGES and len(parts) <= 3):
            return self.page(etag, request)
        if parts and parts[0] == "api" and len(parts) >= 2 and parts[1] in PLAYER_API:
            return await self.players_api(parts[1:], request)
        if len(parts) in (2, 3) and parts[:2] == ["api", "arenas"]:
            status, body = await arena_api(self.hub, parts, await self.listed_arenas())
            return json_response(status, body)
        if len(parts) in (3, 4) and parts[:2] == ["api", "tournaments"]:
            t = await self.hub.load_tournament(parts[2])
            if not isinstance(t, Tournament):
                return json_response(404, {"error": Code.NOT_FOUND})
            if len(parts) == 3:
                return json_response(200, messages.tournament_view(t))
            if parts[3] == "standings.csv":
                return response(200, messages.standings_csv(t).encode(),
                                "text/csv; charset=utf-8",
                                [("Content-Disposition",
                                  f'attachment; filename="{t.tid}-standings.csv"')])
            return json_response(404, {"error": Code.NOT_FOUND})
        if parts and parts[0] == "static" and len(parts) > 1:
            return self.static("/".join(parts[1:]), etag)
        if len(parts) == 3 and parts[:2] == ["api", "races"]:
            race = await self.hub.load(parts[2])
            if race is None:
                return json_response(404, {"error": Code.NOT_FOUND})
            race.deal.release(self.hub.clock())
            if race.deal.held_until is not None:  # today's deal: nothing of it yet
                return json_response(403, {"error": Code.FORBIDDEN, "message": "this deal stays "
                                           "secret until the day is over"})
            return json_response(200, messages.summary(race, self.hub.masking))
        if len(parts) == 5 and parts[:2] == ["api", "races"] and parts[3] == "replay":
            return await self.replay(parts[2], parts[4], gzip_ok,
                                     moderator=await self.is_moderator(request))
        if len(parts) == 5 and parts[:2] == ["api", "races"] and parts[3] == "analysis":
            return await self.analysis(parts[2], parts[4], address, request,
                                       moderator=await self.is_moderator(request))
        return json_response(404, {"error": Code.NOT_FOUND})

    def page(self, etag: str | None, request: Request | None) -> Response:
        """The single-page client; a browser without a player key gets one (a cookie the
        server keeps nothing of until the player exists, see solrace.service.accounts)."""
        answer = self.static("index.html", etag)
        if request is not None and self.front is not None and self.front.accounts.store \
                is not None:
            cookie = player_cookie(request.headers)
            if cookie is None or not well_formed_key(cookie):
                answer.headers["Set-Cookie"] = set_cookie(new_key(), self.https(request))[1]
        return answer

    def https(self, request: Request) -> bool:
        """Did the page come over HTTPS (through the proxy this server trusts)?"""
        return self.trust_proxy and request.headers.get("X-Forwarded-Proto", "") == "https"

    async def players_api(self, parts: list[str], request: Request | None) -> Response:
        """``/api/me``, ``/api/session``, ``/api/signout``, ``/api/players/{name}``,
        ``/api/leaderboard/{game}``, ``/api/daily/{game}`` (docs/protocol.md)."""
        front = self.front
        if front is None or front.accounts.store is None:
            return json_response(404, {"error": Code.NOT_FOUND, "message": "no players here"})
        accounts, store = front.accounts, front.accounts.store
        headers = request.headers if request is not None else Headers()
        cookie = player_cookie(headers)
        what = parts[0]
        if what == "me" and len(parts) == 1:
            player = await accounts.of_cookie(cookie)
            return json_response(200, await self._me(player))
        if what == "session" and len(parts) == 1:
            ticket = headers.get("X-Solrace-Ticket")
            key = None if ticket is None else await accounts.redeem(ticket)
            if key is None:
                return json_response(403, {"error": Code.FORBIDDEN,
                                           "message": "unknown or used ticket"})
            return response(204, b"", "text/plain; charset=utf-8",
                            [set_cookie(key, request is not None and self.https(request))])
        if what == "signout" and len(parts) == 1:
            if headers.get("X-Solrace-Signout") != "1":
                return json_response(400, {"error": Code.BAD_REQUEST,
                                           "message": "send X-Solrace-Signout: 1"})
            await accounts.forget(cookie)
            return response(204, b"", "text/plain; charset=utf-8",
                            [set_cookie("", request is not None and self.https(request), 0)])
        if len(parts) != 2:
            return json_response(404, {"error": Code.NOT_FOUND})
        arg = urllib.parse.unquote(parts[1])
        if what == "players":
            player = await store.by_name(arg)
            if player is None:
                return json_response(404, {"error": Code.NOT_FOUND})
            page = await player_page(store, player)
            mod = front.moderation
            page["closed"] = None if mod is None else await mod.store.closure(player.id)
            return json_response(200, page)
        if what == "mod":
            return await self.mod_api(arg, cookie)
        if arg not in solrules.GAMES:
            return json_response(404, {"error": Code.NOT_FOUND, "message": "unknown game"})
        if what == "leaderboard":
            rows = await store.leaderboard(arg, LEADERBOARD_MIN_RACES, PROVISIONAL, 100)
            return json_response(200, {"game": arg, "min_races": LEADERBOARD_MIN_RACES,
                                       "players": [{"rank": i + 1, **row}
                                                   for i, row in enumerate(rows)]})
        if what == "daily" and front.daily is not None:
            return json_response(200, await front.daily.page(arg, cookie))
        return json_response(404, {"error": Code.NOT_FOUND})

    async def mod_api(self, what: str, cookie: str | None) -> Response:
        """``GET /api/mod/flags``: the flagged results waiting for a decision, for a
        moderator's cookie only (solrace.service.moderation)."""
        front = self.front
        assert front is not None
        mod = front.moderation
        player = await front.accounts.of_cookie(cookie)
        if what != "flags":
            return json_response(404, {"error": Code.NOT_FOUND})
        if mod is None or player is None or not await mod.is_moderator(player.id):
            # Not an error for the page that asks (a browser reports every 4xx as a failed
            # load): it says the page is for moderators.
            return json_response(200, {"moderator": False, "flags": []})
        return json_response(200, {"moderator": True, "flags": await mod.flags()})

    async def listed_arenas(self) -> list[Arena]:
        """The arenas ``GET /api/arenas`` lists (``listed`` of the app: the schedule's and
        every arena created lately, on any process)."""
        return await self.arenas_listed() if self.arenas_listed is not None else \
            list(self.hub.arenas.values())

    async def is_moderator(self, request: Request | None) -> bool:
        """Does the request come from a moderator's browser? (A moderator may look at a
        flagged daily result's replay before the day is over.)"""
        front = self.front
        if request is None or front is None or front.moderation is None:
            return False
        player = await front.accounts.of_cookie(player_cookie(request.headers))
        return player is not None and await front.moderation.is_moderator(player.id)

    async def _me(self, player: Player | None) -> dict[str, Any]:
        if player is None:
            return player_messages.me(None, {}, anonymous=False)
        assert self.front is not None and self.front.accounts.store is not None
        ratings = await self.front.accounts.store.ratings(player.id)
        return player_messages.me(player, ratings, anonymous=False)

    def close(self) -> None:
        self.builder.close()

    async def replay(self, race_id: str, player: str, gzip_ok: bool = False,
                     moderator: bool = False) -> Response:
        """A racer's replay, built once (in a process of its own: :mod:`solrace.protocol.replays`,
        :mod:`solrace.runtime.builder`) and cached, gzipped for a client that
        accepts it (a replay is every board after every action: it shrinks some twentyfold,
        and a long one then reaches a slow reader in time). A moderator also gets the replay
        of a finished race whose deal is still held (a daily result to judge), never cached."""
        if moderator:
            race = await self.hub.load(race_id)
            if race is not None and race.status == "finished" and player in race.racers:
                race.deal.release(self.hub.clock())
                if not race.revealed:
                    held = await self.builder.run(*replays.job(race, player, gzip_ok))
                    extra = [("Vary", "Accept-Encoding")]
                    if gzip_ok:
                        extra.append(("Content-Encoding", "gzip"))
                    return response(200, held, "application/json", extra)
        key = (race_id, player, "gzip" if gzip_ok else "")
        body = self.replays.get(key)
        path = getattr(self.hub.store, "path", None)
        if body is None and self.hub.get(race_id) is None and isinstance(path, str):
            # Not in memory: rebuilt from the file in the builder's process, not here.
            status, body = await self.builder.run(*sqlite_replays.job(
                path, race_id, player, self.hub.clock(), gzip_ok))
            if body is None:
                return json_response(status, {"error": Code.NOT_FOUND} if status == 404 else {
                    "error": Code.FORBIDDEN, "message": "race not finished"})
            self.replays.put(key, body)
        if body is None:
            race = await self.hub.load(race_id)
            if race is None or player not in race.racers:
                return json_response(404, {"error": Code.NOT_FOUND})
            race.deal.release(self.hub.clock())
            if not race.revealed:
                return json_response(403, {"error": Code.FORBIDDEN, "message": "race not finished"})

            body = await self.builder.run(*replays.job(race, player, gzip_ok))
            self.replays.put(key, body)
        extra = [("Vary", "Accept-Encoding")]
        if gzip_ok:
            extra.append(("Content-Encoding", "gzip"))
        return response(200, body, "application/json", extra)

    async def analysis(self, race_id: str, player: str, address: str,
                       request: Request | None = None, moderator: bool = False
                       ) -> Response:
        """A racer's post-race analysis (:mod:`solrace.solver.analyst`): only once the deal is
        revealed (to a moderator, once the race is over: a flagged daily result is judged
        before the day ends); ``202`` while it is worked out, or not started yet (its address
        has its share being worked out, or the process is full). Its positions take their
        turns as the address's, and within it as the player's of the ``sr_player`` cookie (if
        known)."""
        race = await self.hub.load(race_id)
        if race is None or player not in race.racers:
            return json_response(404, {"error": Code.NOT_FOUND})
        race.deal.release(self.hub.clock())
        if not race.revealed and not (moderator and race.status == "finished"):
            return json_response(403, {"error": Code.FORBIDDEN, "message": "the analysis opens "
                                       "once the deal is revealed"})
        known = self.analyst.known(race.race, player)
        if known is None:  # (the store is asked who asks only then, not at every poll)
            who, front = None, self.front
            if request is not None and front is not None and front.accounts.store is not None:
                who = await front.accounts.of_cookie(player_cookie(request.headers))
            known = self.analyst.ask(race, player, address, who.id if who else None)
        status, report = known
        if report is not None:
            return json_response(200, report)
        retry = [("Retry-After", str(ANALYSIS_RETRY_S))]
        if status == "computing":
            return json_response(202, {"status": "computing", "retry_after": ANALYSIS_RETRY_S},
                                 retry)
        # Over a limit the analysis is not started, and the client is told to ask again later,
        # as while one is worked out: not an error (a replay page of a race of eight asks for
        # eight at once, and a browser reports every 4xx as a failed load).
        later = ANALYSIS_RETRY_S * (2 if status == "busy" else 5)
        why = ("analyses you asked for are being worked out: this one starts after them"
               if status == "busy" else "the solver is busy with other analyses")
        return json_response(202, {"status": "queued", "retry_after": later, "message": why},
                             [("Retry-After", str(later))])

    def static(self, rel: str, etag: str | None = None) -> Response:
        """A file of the client, with an ``ETag`` (its size and time): a browser that has it
        asks again with ``If-None-Match`` and gets ``304 Not Modified`` without the body."""
        root = self.client.resolve()
        try:
            target = (root / rel).resolve()
        except (OSError, ValueError):
            return json_response(404, {"error": Code.NOT_FOUND})
        if not target.is_relative_to(root) or not target.is_file():
            return json_response(404, {"error": Code.NOT_FOUND})
        ctype = CONTENT_TYPES.get(target.suffix.lower())
        if ctype is None:
            return json_response(404, {"error": Code.NOT_FOUND})
        info = target.stat()
        tag = f'"{info.st_size:x}-{info.st_mtime_ns:x}"'
        if etag is not None and tag in (t.strip() for t in etag.split(",")):
            return response(304, b"", ctype, [("ETag", tag)])
        cached = self.files.get(target)
        if cached is None or cached[0] != tag:
            # The client is a few hundred KiB: kept in memory, a page load reads no file.
            cached = self.files[target] = (tag, target.read_bytes())
        return response(200, cached[1], ctype, [("ETag", tag)])
