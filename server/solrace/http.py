"""HTTP routes on the WebSocket port: the browser client, health, and the read-only API.

``/ws`` goes on to the WebSocket handshake; everything else is answered here (``GET`` only). The
API shows a race as any outsider may see it (the views rule; move lists, seed and salt once the
deal is revealed). A race not in memory is loaded, and a replay built, away from the event loop.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import solrules
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from . import messages
from .room import Race

if TYPE_CHECKING:
    from .hub import Hub

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
    import solrace

    packaged = Path(solrace.__file__).parent / "webclient"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "client"


def response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("Cache-Control", "no-cache"),
        ]
    )
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def json_response(status: int, obj: Any) -> Response:
    body = json.dumps(obj, separators=(",", ":")).encode()
    return response(status, body, "application/json")


def replay(race: Race, player: str) -> dict[str, Any]:
    """Every board a racer saw, after each of its actions (blocking: run it in a thread)."""
    racer = race.racers[player]
    game = solrules.new_game(race.game, race.seed)
    boards = [game.board()]
    for action in racer.actions:
        if action == "undo":
            game.pop()
        else:
            game.push(solrules.Move.from_text(action))
        boards.append(game.board())
    return {
        "race": race.race,
        "player": player,
        "name": racer.name,
        "bot": racer.bot,
        "moves": list(racer.actions),
        "times": [t - (race.started_at or 0) for t in racer.times],
        "boards": boards,
    }


class Routes:
    """The HTTP side of the server (see the module docstring)."""

    def __init__(self, hub: Hub, client: Path) -> None:
        self.hub = hub
        self.client = client

    async def process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/ws":
            return None
        try:
            return await self.route(path)
        except Exception:
            log.exception("HTTP %s failed", path[:200])
            return json_response(500, {"error": "internal"})

    async def route(self, path: str) -> Response:
        if path == "/healthz":
            if not self.hub.store.healthy:
                return response(503, b"store unavailable", "text/plain; charset=utf-8")
            return response(200, b"ok", "text/plain; charset=utf-8")
        if path == "/api/games":
            games = [{"game": g, "title": solrules.TITLES.get(g, g)} for g in solrules.GAMES]
            return json_response(200, games)
        parts = [p for p in path.split("/") if p]
        if path == "/" or (parts and parts[0] == "race" and len(parts) <= 3):
            return self.static("index.html")
        if parts and parts[0] == "static" and len(parts) > 1:
            return self.static("/".join(parts[1:]))
        if len(parts) == 3 and parts[:2] == ["api", "races"]:
            race = await self.hub.load(parts[2])
            if race is None:
                return json_response(404, {"error": "not_found"})
            return json_response(200, messages.summary(race, self.hub.masking))
        if len(parts) == 5 and parts[:2] == ["api", "races"] and parts[3] == "replay":
            return await self.replay(parts[2], parts[4])
        return json_response(404, {"error": "not_found"})

    async def replay(self, race_id: str, player: str) -> Response:
        race = await self.hub.load(race_id)
        if race is None or player not in race.racers:
            return json_response(404, {"error": "not_found"})
        if not race.revealed:
            return json_response(403, {"error": "forbidden", "message": "race not finished"})
        body = await asyncio.to_thread(replay, race, player)
        return json_response(200, body)

    def static(self, rel: str) -> Response:
        root = self.client.resolve()
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            return json_response(404, {"error": "not_found"})
        ctype = CONTENT_TYPES.get(target.suffix.lower())
        if ctype is None:
            return json_response(404, {"error": "not_found"})
        return response(200, target.read_bytes(), ctype)
