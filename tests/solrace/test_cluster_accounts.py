"""Names and sign-ins across ``solrace serve`` processes on one real Redis: a name is taken on
every process by its skeleton, an anonymous racer on one process never races under a player's
name made on another, and failed sign-ins for a name count on every process."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient, ServerError

from .conftest import T
from .servers import RedisServer, Solrace
from .test_cluster_play import fetch


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    yield server
    server.stop()


async def browser(proc: Solrace, address: str, cookie: bool = True) -> RaceClient:
    """A browser at ``address`` (the processes trust the proxy's X-Forwarded-For)."""
    headers = {"X-Forwarded-For": address}
    if cookie:
        _, got = await asyncio.to_thread(fetch, proc.http + "/", headers)
        headers["Cookie"] = got["set-cookie"].split(";", 1)[0]
    return await RaceClient.connect(proc.url, additional_headers=headers)


async def sign_in(client: RaceClient, name: str, password: str) -> dict[str, Any]:
    try:
        return await client.request({"type": "sign_in", "name": name, "password": password})
    except ServerError as exc:
        return exc.reply


async def fail(client: RaceClient, name: str, times: int) -> None:
    """``times`` failed sign-ins, each after the wait the server asks for."""
    for i in range(times):
        reply = await sign_in(client, name, f"guess {i:04}")
        while reply["code"] == "rate_limited":
            assert reply["retry_after"] <= 8
            await asyncio.sleep(reply["retry_after"])
            reply = await sign_in(client, name, f"guess {i:04}")
        assert reply["code"] == "forbidden"


async def test_names_and_racers_names_on_every_process(redis: RedisServer) -> None:
    a = await Solrace(redis.url, "--trust-proxy").start()
    b = await Solrace(redis.url, "--trust-proxy").start()
    clients: list[RaceClient] = []
    try:
        ann = await browser(a, "198.51.100.7")
        clients.append(ann)
        await ann.request({"type": "set_name", "name": "anna5629"})
        twin = await browser(b, "203.0.113.9")
        clients.append(twin)
        with pytest.raises(ServerError) as err:
            await twin.request({"type": "set_name", "name": "\u0430nna5629"})
        assert err.value.code == "name_taken"
        with pytest.raises(ServerError) as err:
            await twin.request({"type": "set_name", "name": "Sharp bot"})
        assert err.value.code == "name_reserved"
        host = await RaceClient.connect(a.url)
        clients.append(host)
        race = (await host.create("scotch", players=4))["race"]
        stranger = await RaceClient.connect(b.url)  # anonymous, on the other process
        clients.append(stranger)
        assert (await stranger.join(race, name="ANNA5629"))["name"] == "ANNA5629 (guest)"
        page, _ = await asyncio.to_thread(fetch, b.http + "/api/players/%D0%B0nna5629")
        assert page["name"] == "anna5629"
    finally:
        for client in clients:
            await client.close()
        a.stop()
        b.stop()


async def test_failed_sign_ins_for_a_name_count_on_every_process(redis: RedisServer) -> None:
    a = await Solrace(redis.url, "--trust-proxy").start()
    b = await Solrace(redis.url, "--trust-proxy").start()
    try:
        owner = await browser(a, "198.51.100.7")
        await owner.request({"type": "set_name", "name": "Ann"})
        await owner.request({"type": "set_password", "password": "correct horse"})
        guesser = await browser(a, "203.0.113.9", cookie=False)
        await fail(guesser, "ann", 5)
        # Five failures for Ann on a: a stranger's try on b waits for them (with the failures
        # of a's memory alone, b would check it at once and answer "forbidden").
        elsewhere = await browser(b, "192.0.2.44", cookie=False)
        reply = await sign_in(elsewhere, "ANN", "wrong password")
        assert reply["code"] == "rate_limited" and 1 <= reply["retry_after"] <= 8
        await asyncio.sleep(reply["retry_after"])
        assert (await sign_in(elsewhere, "ANN", "correct horse"))["type"] == "signed_in"
        for client in (owner, guesser, elsewhere):
            await client.close()
    finally:
        a.stop()
        b.stop()


def _has_key_file() -> bool:
    done = subprocess.run([sys.executable, "-m", "solrace", "serve", "--help"],
                          capture_output=True, text=True, timeout=T * 6)
    return "--key-file" in done.stdout


async def test_a_networks_failures_count_on_every_process(redis: RedisServer,
                                                          tmp_path: Path) -> None:
    """With the deployment's key shared (networks are kept as tags made with it), a network's
    failures and the networks a player signed in from are the same on every process."""
    if not await asyncio.to_thread(_has_key_file):
        pytest.skip("solrace serve has no --key-file yet: processes without a shared master "
                    "key tag networks differently")
    key = tmp_path / "master.key"
    key.write_text(secrets.token_hex(32))
    key.chmod(0o600)
    a = await Solrace(redis.url, "--trust-proxy", "--key-file", str(key)).start()
    b = await Solrace(redis.url, "--trust-proxy", "--key-file", str(key)).start()
    try:
        owner = await browser(a, "198.51.100.7")
        await owner.request({"type": "set_name", "name": "Ann"})
        await owner.request({"type": "set_password", "password": "correct horse"})
        guesser = await browser(a, "203.0.113.9", cookie=False)
        await fail(guesser, "ann", 5)
        again = await browser(b, "203.0.113.9", cookie=False)
        reply = await sign_in(again, "ann", "guess again")
        assert reply["code"] == "rate_limited"  # the same network, on the other process
        home = await browser(b, "198.51.100.7")  # his network: never delayed by strangers
        assert (await sign_in(home, "ann", "correct horse"))["type"] == "signed_in"
        for client in (owner, guesser, again, home):
            await client.close()
    finally:
        a.stop()
        b.stop()
