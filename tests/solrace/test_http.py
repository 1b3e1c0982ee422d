"""HTTP hardening on a real server: methods, paths, headers, origins, rates, caps, and replays
that never stall the event loop."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import solrace.net.app as app_module
import solrace.net.connection as connection_module
import solrules
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.net.app import App
from solrace.net.web import AddressRates
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient, ServerError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from .conftest import Server, T, serving
from .failing import FailingStore


def raw(port: int, request: bytes, timeout: float = T) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is; the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def port_of(server: Server) -> int:
    return int(server.http.rsplit(":", 1)[1])


async def get(port: int, path: str, method: str = "GET", extra: str = "",
              timeout: float = T) -> Any:
    request = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode()
    return await asyncio.to_thread(raw, port, request, timeout)


async def test_methods_paths_and_headers(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    port = port_of(server)
    status, headers, body = await get(port, "/")
    assert status == 200 and b"solrace" in body
    csp = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["server"] == "solrace"  # no versions
    status, headers, body = await get(port, "/static/app.js")
    assert status == 200 and headers["x-content-type-options"] == "nosniff"
    status, headers, body = await get(port, "/", method="HEAD")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        status, headers, _ = await get(port, "/api/games", method=method)
        assert status == 405 and headers["allow"] == "GET, HEAD", method
    caplog.clear()
    for path in ("/static/a\x00b", "/static/a\x01b", "/api/races/\x7f"):
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        status, _, _ = await asyncio.to_thread(raw, port, request)
        assert status == 400, repr(path)
    assert not [r for r in caplog.records if r.levelname == "ERROR"], "no traceback"


async def test_a_header_given_twice_is_a_bad_request(server: Server) -> None:
    port = port_of(server)
    for extra in ("Origin: http://a.example\r\nOrigin: http://b.example\r\n",
                  'If-None-Match: "1"\r\nIf-None-Match: "2"\r\n'):
        for path in ("/ws", "/static/app.js", "/"):
            status, headers, _ = await get(port, path, extra=extra)
            assert status == 400, (path, extra)
            assert headers["x-content-type-options"] == "nosniff"


async def test_every_header_that_decides_something_given_twice_is_400(server: Server) -> None:
    """The players' routes read a ticket, a sign-out's header and, behind a proxy, the scheme:
    each given twice is a bad request (it used to raise inside the route: 500)."""
    port = port_of(server)
    server.app.routes.trust_proxy = True  # X-Forwarded-Proto decides the cookie's Secure
    for path, header, value in (("/api/session", "X-Solrace-Ticket", "a" * 43),
                                ("/api/signout", "X-Solrace-Signout", "1"),
                                ("/", "X-Forwarded-Proto", "https")):
        status, _, _ = await get(port, path, extra=f"{header}: {value}\r\n")
        assert status in (200, 204, 403), (path, status)  # once: the route's own answer
        status, headers, _ = await get(port, path, extra=f"{header}: {value}\r\n" * 2)
        assert status == 400, (path, header, status)
        assert headers["x-content-type-options"] == "nosniff"


def test_every_header_read_from_a_request_must_be_single() -> None:
    """No ``headers.get`` on a request can raise: each header read that way is one that a
    request may give once only (checked before any route reads it)."""
    import re

    import solrace.net.answers as answers
    import solrace.net.web as web

    single = set(answers.SINGLE_HEADERS)
    for module in (answers, web, app_module, connection_module):
        read = set(re.findall(r'headers\.get\("([^"]+)"', Path(module.__file__).read_text()))
        assert read <= single, (module.__name__, read - single)


async def test_accept_encoding_may_come_in_several_lines(tmp_path: Path) -> None:
    """A header a client may split over several lines is read whole: a replay asked for with
    ``Accept-Encoding`` twice comes gzipped if either line takes gzip (it used to be a 500)."""
    long_race(tmp_path / "long.db", 10)
    store = SQLiteStore(tmp_path / "long.db")
    app = App(store, client=tmp_path, http_rate=0, rate_limit=0)
    async with serving(app) as server:
        status, headers, body = await get(
            port_of(server), "/api/races/long/replay/p1",
            extra="Accept-Encoding: identity\r\nAccept-Encoding: gzip\r\n", timeout=T * 6)
        assert status == 200 and headers["content-encoding"] == "gzip"
        assert len(json.loads(gzip.decompress(body))["moves"]) == 10
    app.close()
    store.close()


async def test_the_librarys_own_answers_carry_the_security_headers(server: Server) -> None:
    port = port_of(server)
    answers = {
        426: f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode(),
        414: b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        431: b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
    }
    for expected, request in answers.items():
        status, headers, _ = await asyncio.to_thread(raw, port, request)
        assert status == expected
        for name in ("x-content-type-options", "x-frame-options", "referrer-policy"):
            assert name in headers, (expected, name)


async def test_only_this_servers_pages_may_open_a_socket(server: Server) -> None:
    port = port_of(server)
    own = f"http://127.0.0.1:{port}"
    async with connect(server.url, origin=own) as ws:  # type: ignore[arg-type]
        await ws.send('{"type": "ping"}')
        assert json.loads(await ws.recv())["type"] == "pong"
    with pytest.raises(InvalidStatus) as info:
        async with connect(server.url, origin="http://evil.example"):  # type: ignore[arg-type]
            pass
    assert info.value.response.status_code == 403
    server.app.routes.allow_origins.add("http://friend.example")
    async with connect(server.url, origin="http://friend.example"):  # type: ignore[arg-type]
        pass
    async with connect(server.url):  # no Origin: not a browser (bots, the Python client)
        pass


async def test_connections_are_capped(server: Server) -> None:
    server.app.hub.caps.connections = 3
    held = [await connect(server.url) for _ in range(3)]
    with pytest.raises(InvalidStatus) as info:
        await connect(server.url)
    assert info.value.response.status_code == 503
    await held.pop().close()
    async with asyncio.timeout(T):
        while server.app.connections >= 3:
            await asyncio.sleep(0.01)
    held.append(await connect(server.url))  # a freed place is taken again
    for ws in held:
        await ws.close()


async def test_http_rate_per_address(server: Server) -> None:
    port = port_of(server)
    server.app.routes.rates = AddressRates(5)
    statuses = [(await get(port, "/api/games"))[0] for _ in range(20)]
    assert statuses[:10] == [200] * 10 and 429 in statuses[10:]
    # Behind a proxy, each forwarded address has its own budget.
    server.app.routes.trust_proxy = True
    status, _, _ = await get(port, "/api/games", extra="X-Forwarded-For: 203.0.113.9\r\n")
    assert status == 200


async def test_client_files_are_cheap_and_revalidated(server: Server) -> None:
    port = port_of(server)
    server.app.routes.rates = AddressRates(5)  # bursts of 10 requests
    # A page load's thirty client files do not touch the budget of the API calls...
    for _ in range(30):
        status, headers, body = await get(port, "/static/app.js")
        assert status == 200 and body == b"export {};"
    tag = headers["etag"]
    assert (await get(port, "/api/games"))[0] == 200
    # ... and a browser that has a file gets 304 without it, until the file changes.
    status, _, body = await get(port, "/static/app.js", extra=f"If-None-Match: {tag}\r\n")
    assert status == 304 and body == b""
    (server.app.routes.client / "app.js").write_text("export const x = 1;")
    status, headers, body = await get(port, "/static/app.js", extra=f"If-None-Match: {tag}\r\n")
    assert status == 200 and body == b"export const x = 1;" and headers["etag"] != tag


async def test_games_say_how_many_winnable_deals_there_are(server: Server) -> None:
    _, _, body = await get(port_of(server), "/api/games")
    games = {g["game"]: g for g in json.loads(body)}
    assert set(games) == set(solrules.GAMES)
    for game, entry in games.items():
        assert entry["winnable"] == server.app.hub.assist.deals.winnable(game)


async def test_health_says_when_the_store_cannot_write(tmp_path: Path) -> None:
    store = FailingStore(tmp_path / "race.db")
    app = App(store, client=tmp_path, rate_limit=0)
    async with serving(app) as server:
        port = port_of(server)
        assert (await get(port, "/healthz"))[0] == 200
        client = await server.client()
        store.failing = True
        with pytest.raises(ServerError):  # the write fails: unavailable, and the store says so
            await client.create("scotch")
        assert (await get(port, "/healthz"))[0] == 503
        store.failing = False
        async with asyncio.timeout(T * 2):  # the next probe write goes through
            while (await get(port, "/healthz"))[0] != 200:
                await asyncio.sleep(0.05)
    app.close()
    store.close()


def long_race(db: Path, actions: int) -> str:
    """A finished race whose racer made ``actions`` moves and undos, straight into ``db``."""
    store = SQLiteStore(db)
    race = Race("long", "scotch", 1, "salt", Options(1, 86400, True), 1000, "host", 0)
    store.add_race(race)
    store.append(race.join("ann", "tok", 1000).log)
    store.append(race.start("host", 1000).log)
    race.tick(1000)
    move = race.racers["p1"].game.legal_moves()[0].text()
    for seq in range(1, actions + 1):
        out = race.move("p1", move, seq, 2000 + seq) if seq % 2 else race.undo("p1", seq, 2000)
        store.append(out.log)
    store.append(race.resign("p1", 90_000).log)
    store.mark_finished("long", 90_000)
    store.commit()
    store.close()
    return move


async def test_huge_replays_never_stall_the_server(tmp_path: Path) -> None:
    """Four requests for the replay of a 10,000-action race at once: other clients' pings
    go on being answered while the replays are built (built in the event loop, not one would
    be until they all were), the replays are right, and the next request takes the cached one.
    How long a ping waits is a benchmark's business (bench/), not this test's."""
    move = long_race(tmp_path / "long.db", 10_000)
    store = SQLiteStore(tmp_path / "long.db")
    app = App(store, client=tmp_path, http_rate=0, rate_limit=0)
    async with app.serve("127.0.0.1", 0) as ws_server:
        port = next(iter(ws_server.sockets)).getsockname()[1]
        pinger = await RaceClient.connect(f"ws://127.0.0.1:{port}/ws")
        building = True
        answered = 0

        async def ping() -> None:
            nonlocal answered
            while building:
                await pinger.ping()
                answered += building
                await asyncio.sleep(0.01)

        pings = asyncio.create_task(ping())
        answers = await asyncio.gather(  # a busy machine may take a while: no hurry here
            *(get(port, "/api/races/long/replay/p1", timeout=T * 12) for _ in range(4)))
        building = False
        await pings
        for status, _, body in answers:
            replay = json.loads(body)
            assert status == 200 and len(replay["moves"]) == 10_000
            assert len(replay["boards"]) == 10_001 and replay["moves"][0] == move
        game = solrules.new_game("scotch", 1)
        assert replay["boards"][-1] == game.board()  # moves and undos in pairs
        assert answered >= 3, "no ping was answered while the replays were built"
        assert app.routes.replays.get(("long", "p1", "")) is not None  # built once, cached
        status, _, body = await get(port, "/api/races/long/replay/p1")
        assert status == 200 and body == app.routes.replays.get(("long", "p1", ""))
        await pinger.close()
    app.close()
    store.close()


async def test_a_big_answer_reaches_a_slow_reader_whole(tmp_path: Path) -> None:
    """A replay of megabytes read by a client that takes its time (here: reading nothing for
    two seconds, longer than the one second websockets gives an answer before it aborts the
    connection, then through a small receive buffer): the whole of it arrives, gzipped as the
    client accepts."""
    long_race(tmp_path / "long.db", 10_000)
    store = SQLiteStore(tmp_path / "long.db")
    app = App(store, client=tmp_path, http_rate=0, rate_limit=0)
    async with serving(app) as server:
        port = port_of(server)

        def slow() -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=T * 6) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.sendall(b"GET /api/races/long/replay/p1 HTTP/1.1\r\nHost: x\r\n"
                             b"Accept-Encoding: gzip, deflate\r\n\r\n")
                time.sleep(2.0)
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
            return data.partition(b"\r\n\r\n")[2]

        body = await asyncio.to_thread(slow)
        replay = json.loads(gzip.decompress(body))
        assert len(replay["moves"]) == 10_000 and len(replay["boards"]) == 10_001
    app.close()
    store.close()


async def test_a_room_of_thirty_behind_one_address_is_served(server: Server) -> None:
    """A club of 30 players on one network opens the results of a race of 8 together: the
    summary, the 8 replays and the page's client files each, all from one address."""
    host = await server.client()
    race = (await host.create("scotch", players=8))["race"]
    racers = [await server.client() for _ in range(8)]
    for i, c in enumerate(racers):
        await c.join(race, name=f"r{i}")
    for c in racers:
        await c.ready(race)
    for c in racers:
        await c.wait_state(race, T)
        await c.resign(race)
    port = port_of(server)
    statuses = []
    for _viewer in range(30):
        statuses.append((await get(port, f"/api/races/{race}"))[0])
        for p in range(1, 9):
            # The first viewer's replays are built by a niced process: on a machine busy with
            # other work that takes a while (what is tested is the rate, not the time).
            statuses.append((await get(port, f"/api/races/{race}/replay/p{p}",
                                       timeout=T * 6))[0])
        for _ in range(35):
            statuses.append((await get(port, "/static/app.js"))[0])
    assert statuses.count(429) == 0 and set(statuses) == {200}, sorted(set(statuses))
