"""Players over real WebSockets and HTTP: the key cookie, names, passwords, signing in on a
second device and out (see docs/protocol.md, "Who you are")."""

from __future__ import annotations

import asyncio
import http.client
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server


def get(srv: Server, path: str, headers: dict[str, str] | None = None
        ) -> tuple[int, dict[str, str], bytes]:
    host, port = srv.http.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", path, headers=headers or {})
    res = conn.getresponse()
    body = res.read()
    out = (res.status, {k.lower(): v for k, v in res.getheaders()}, body)
    conn.close()
    return out


async def aget(srv: Server, path: str, headers: dict[str, str] | None = None
               ) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(get, srv, path, headers)


def key_of(set_cookie: str) -> str:
    assert set_cookie.startswith("sr_player="), set_cookie
    return set_cookie.split(";", 1)[0].split("=", 1)[1]


async def browser(srv: Server) -> tuple[RaceClient, str]:
    """A client as a browser is: a page load gives it its key, its socket sends it."""
    _, headers, _ = await aget(srv, "/")
    key = key_of(headers["set-cookie"])
    client = await srv.client(additional_headers={"Cookie": f"sr_player={key}"})
    return client, key


async def test_a_page_gives_a_key_once_and_keeps_nothing(server: Server) -> None:
    status, headers, _ = await aget(server, "/")
    assert status == 200
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain HTTP here
    key = key_of(cookie)
    assert len(key) == 43
    # With the key, no new one; the API never sets one.
    _, headers, _ = await aget(server, "/race/abc", {"Cookie": f"sr_player={key}"})
    assert "set-cookie" not in headers
    _, headers, _ = await aget(server, "/api/lobby")
    assert "set-cookie" not in headers
    # A visit stores nothing: the key is nobody yet.
    client = await server.client(additional_headers={"Cookie": f"sr_player={key}"})
    me = await client.request({"type": "me"})
    assert me["player"] is None and me["anonymous"] is False
    # A client without the cookie is anonymous and cannot become a player.
    bare = await server.client()
    assert (await bare.request({"type": "me"}))["anonymous"] is True
    with pytest.raises(ServerError) as err:
        await bare.request({"type": "set_name", "name": "Bot"})
    assert err.value.code == "forbidden"


async def test_names_are_unique_once_folded(server: Server) -> None:
    ann, _ = await browser(server)
    me = await ann.request({"type": "set_name", "name": "Ann"})
    assert me["player"]["name"] == "Ann" and me["player"]["id"].startswith("pl")
    other, _ = await browser(server)
    for taken in ("Ann", "ann", "ＡＮＮ", " Ann "):
        with pytest.raises(ServerError) as err:
            await other.request({"type": "set_name", "name": taken})
        assert err.value.code in ("name_taken", "bad_message"), taken
    for bad in ("An\u202en", "A\u200bnn", "A\u0007"):
        with pytest.raises(ServerError) as err:
            await other.request({"type": "set_name", "name": bad})
        assert err.value.code == "bad_message"
    # Ann may change the case of her own name, then free it for someone else.
    assert (await ann.request({"type": "set_name", "name": "ANN"}))["player"]["name"] == "ANN"
    await ann.request({"type": "set_name", "name": "Annabel"})
    me = await other.request({"type": "set_name", "name": "ann"})
    assert me["player"]["name"] == "ann"


async def test_a_player_joins_under_his_name_and_id(server: Server) -> None:
    ann, _ = await browser(server)
    await ann.request({"type": "set_name", "name": "Ann"})
    host = await server.client()
    race = (await host.create("scotch"))["race"]
    joined = await ann.join(race, name="Somebody else")
    assert joined["name"] == "Ann" and joined["id"].startswith("pl")
    # The same player from another tab gets his racer back, not a second seat.
    tab = await server.client(additional_headers={"Cookie": ann.ws.request.headers["Cookie"]})
    again = await tab.join(race, name="Ann")
    assert again["player"] == joined["player"] and again["token"] == joined["token"]
    snap = await ann.next_event("snapshot")
    assert snap["players"][0]["id"] == joined["id"]


async def test_password_second_device_and_sign_out(server: Server) -> None:
    ann, key = await browser(server)
    me = await ann.request({"type": "set_name", "name": "Ann"})
    pid = me["player"]["id"]
    assert me["player"]["password"] is False
    me = await ann.request({"type": "set_password", "password": "correct horse"})
    assert me["player"]["password"] is True
    with pytest.raises(ServerError) as err:  # changing it needs the old one
        await ann.request({"type": "set_password", "password": "new password!"})
    assert err.value.code == "forbidden"

    # A second browser signs in: a ticket, exchanged over HTTP for a key of its own.
    phone, phone_key = await browser(server)
    with pytest.raises(ServerError) as err:
        await phone.request({"type": "sign_in", "name": "Ann", "password": "wrong horse"})
    assert err.value.code == "forbidden" and "wrong name or password" in err.value.message
    with pytest.raises(ServerError) as err:
        await phone.request({"type": "sign_in", "name": "Nobody", "password": "wrong horse"})
    assert "wrong name or password" in err.value.message  # the same answer
    signed = await phone.request({"type": "sign_in", "name": "ann", "password": "correct horse"})
    ticket = signed["ticket"]
    status, _, _ = await aget(server, "/api/session")
    assert status == 403  # no ticket
    status, headers, _ = await aget(server, "/api/session", {"X-Solrace-Ticket": ticket})
    assert status == 204
    new_key = key_of(headers["set-cookie"])
    assert new_key not in (key, phone_key)
    status, _, _ = await aget(server, "/api/session", {"X-Solrace-Ticket": ticket})
    assert status == 403  # used once
    second = await server.client(additional_headers={"Cookie": f"sr_player={new_key}"})
    me2 = await second.request({"type": "me"})
    assert me2["player"]["id"] == pid and me2["player"]["name"] == "Ann"

    # Signing out forgets that key only.
    status, _, _ = await aget(server, "/api/signout", {"Cookie": f"sr_player={new_key}"})
    assert status == 400  # without the header a link cannot sign anyone out
    status, headers, _ = await aget(server, "/api/signout", {
        "Cookie": f"sr_player={new_key}", "X-Solrace-Signout": "1"})
    assert status == 204 and "Max-Age=0" in headers["set-cookie"]
    gone = await server.client(additional_headers={"Cookie": f"sr_player={new_key}"})
    assert (await gone.request({"type": "me"}))["player"] is None
    first = await server.client(additional_headers={"Cookie": f"sr_player={key}"})
    assert (await first.request({"type": "me"}))["player"]["id"] == pid
    status, _, body = await aget(server, "/api/me", {"Cookie": f"sr_player={key}"})
    assert status == 200 and pid.encode() in body


async def test_failed_sign_ins_are_limited(server: Server) -> None:
    ann, _ = await browser(server)
    await ann.request({"type": "set_name", "name": "Ann"})
    await ann.request({"type": "set_password", "password": "correct horse"})
    server.app.accounts.checks.seconds = 0.0  # only the failures' limit is under test
    guesser, _ = await browser(server)
    codes: list[Any] = []
    for i in range(12):
        try:
            await guesser.request({"type": "sign_in", "name": "Ann", "password": f"guess {i:04}"})
        except ServerError as exc:
            codes.append(exc.code)
    assert codes[:10] == ["forbidden"] * 10 and codes[10:] == ["rate_limited"] * 2
    # Even the right password is refused now, from this network, for an hour.
    with pytest.raises(ServerError) as err:
        await guesser.request({"type": "sign_in", "name": "Ann", "password": "correct horse"})
    assert err.value.code == "rate_limited"


async def test_new_players_per_address_are_limited(server: Server) -> None:
    made = 0
    refused = None
    for _ in range(25):
        client, _ = await browser(server)
        try:
            await client.request({"type": "set_name", "name": f"P{made}"})
            made += 1
        except ServerError as exc:
            refused = exc.code
            break
        finally:
            await client.close()
    assert made == 20 and refused == "rate_limited"
