"""Random bytes, random JSON and random msgpack at a live socket: the server answers every
frame (a typed error or a reply), keeps the connection open, and no race changes. Every case
checks all three itself, so the tests do not depend on their order."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from solrace.net.app import App
from solrace.store.sqlite_store import SQLiteStore as Storage
from solrace.tools.race_client import RaceClient
from websockets.sync.client import ClientConnection, connect

from tests.profiles import examples

from .conftest import T

TYPES = ["create", "join", "watch", "leave", "start", "ready", "move", "undo", "resign",
         "ping", "fly", ""]
KEYS = ["type", "race", "name", "token", "move", "seq", "rid", "game", "players", "seed",
        "undo", "time_limit"]

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
messages = st.dictionaries(st.sampled_from(KEYS), values, max_size=6) | st.fixed_dictionaries(
    {"type": st.sampled_from(TYPES)},
    optional={k: values for k in KEYS if k != "type"},
)


class Live:
    def __init__(self, tmp: Path) -> None:
        self.ready = threading.Event()
        self.tmp = tmp
        self.url = ""
        self.http = ""
        self.race = ""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop: asyncio.Event | None = None
        self.app: App | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self.main()), daemon=True)

    async def main(self) -> None:
        storage = Storage(self.tmp / "fuzz.db")
        app = App(storage, countdown=0.0, rate_limit=0, client=self.tmp)
        self.app = app
        self.loop = asyncio.get_running_loop()
        self.stop = asyncio.Event()
        async with app.serve("127.0.0.1", 0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            self.url = f"ws://127.0.0.1:{port}/ws"
            self.http = f"http://127.0.0.1:{port}"
            # A running race with a couple of moves made, to check it never changes.
            host = await RaceClient.connect(self.url)
            created = await host.create("scotch", players=1, seed=42)
            self.race = created["race"]
            racer = await RaceClient.connect(self.url)
            await racer.join(self.race, name="ann")
            await host.start(self.race, created["host_token"])
            await racer.wait_state(self.race, T)
            for _ in range(2):
                await racer.move(self.race, racer.states[self.race]["legal"][0])
            self.ready.set()
            await self.stop.wait()
            await racer.close()
            await host.close()
        app.close()
        storage.close()

    def summary(self) -> Any:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.http}/api/races/{self.race}", timeout=T) as resp:
            return json.loads(resp.read())


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    server = Live(tmp_path_factory.mktemp("fuzz"))
    server.thread.start()
    assert server.ready.wait(T * 2)
    yield server
    assert server.loop is not None and server.stop is not None
    server.loop.call_soon_threadsafe(server.stop.set)
    server.thread.join(T)


@pytest.fixture(scope="module")
def sock(live: Live) -> Iterator[ClientConnection]:
    with connect(live.url, compression=None, max_size=2**22) as ws:
        yield ws


#: Every error code the protocol has (docs/protocol.md, "Errors").
CODES = {"bad_message", "not_found", "forbidden", "race_full", "race_not_running",
         "illegal_move", "rate_limited", "bad_seq", "race_started", "no_racers",
         "race_not_over", "limit_reached", "unavailable", "internal", "entry_closed",
         "tournament_full", "tournament_started", "tournament_over", "nothing_waiting",
         "name_taken", "name_reserved"}


def still_answers(ws: ClientConnection, live: Live) -> None:
    """The frame just sent was answered (an error with a known code and a message, or a
    reply), the connection is open, the server answers a ping after it, and the race of the
    setup is as it was. The pong may come first: a ping is answered at once while an earlier
    command waits (a race looked up in the store, say), so both are waited for."""
    ws.send(json.dumps({"type": "ping", "rid": "alive"}))
    before: list[dict[str, Any]] = []
    ponged = False
    while not (ponged and before):
        try:
            frame = ws.recv(timeout=T)
        except TimeoutError:
            raise AssertionError(f"no {'answer to the frame' if ponged else 'pong'} within "
                                 f"{T} s (got {before})") from None
        msg = json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame)
        if msg.get("rid") == "alive":
            assert msg["type"] == "pong" and not ponged
            ponged = True
        else:
            before.append(msg)
    for msg in before:
        if msg.get("type") == "error":
            assert msg["code"] in CODES and isinstance(msg["message"], str) and msg["message"]
    race_unchanged(live)


def race_unchanged(live: Live) -> None:
    """The race the setup left running: the same two moves, the same events."""
    assert live.app is not None
    race = live.app.hub.races[live.race]
    assert race.status == "running" and race.v == 5  # joined, countdown, started, 2 moves
    assert [r.seq for r in race.racers.values()] == [2]


FUZZ = settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(live: Live, sock: ClientConnection, data: bytes) -> None:
    sock.send(data)
    still_answers(sock, live)


@FUZZ
@given(st.text(max_size=300))
def test_random_text(live: Live, sock: ClientConnection, text: str) -> None:
    sock.send(text)
    still_answers(sock, live)


@FUZZ
@given(messages)
def test_random_json(live: Live, sock: ClientConnection, msg: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(msg))
    except ValueError:  # NaN and friends are not JSON: send them raw anyway
        sock.send(json.dumps(msg, allow_nan=True))
    still_answers(sock, live)


@FUZZ
@given(messages)
def test_random_msgpack(live: Live, sock: ClientConnection, msg: dict[str, Any]) -> None:
    try:
        frame = msgpack.packb(msg)
    except (OverflowError, ValueError):
        assume(False)  # ints beyond 64 bits have no msgpack form
    sock.send(frame)
    still_answers(sock, live)


def test_the_api_shows_the_race_as_it_was(live: Live) -> None:
    summary = live.summary()
    assert summary["status"] == "running"
    assert summary["players"][0]["progress"]["moves"] == 2
    assert summary["v"] == 5  # joined, countdown, started, 2 x progress
    race_unchanged(live)
