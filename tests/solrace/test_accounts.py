"""Players over real WebSockets and HTTP: the key cookie, names (unique by skeleton, some
reserved, never borrowed by an anonymous racer), passwords, signing in on a second device and
out, and what one address may do: sign-in failures, password hashing, new guests and accounts
(see docs/protocol.md, "Who you are")."""

from __future__ import annotations

import asyncio
import http.client
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from solrace.net.app import App
from solrace.service.rates import AddressRates
from solrace.store.sqlite_store import SQLiteStore as Storage
from solrace.tools.race_client import RaceClient, ServerError

from tests.solrace.conftest import Server, T, serving


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


async def test_names_are_unique_by_skeleton(server: Server) -> None:
    ann, _ = await browser(server)
    me = await ann.request({"type": "set_name", "name": "Ann"})
    assert me["player"]["name"] == "Ann" and me["player"]["id"].startswith("pl")
    other, _ = await browser(server)
    # Case, width, and letters of other scripts that look the same (Cyrillic А, Greek Α).
    for taken in ("Ann", "ann", "ＡＮＮ", " Ann ", "\u0410nn", "\u0391NN"):
        with pytest.raises(ServerError) as err:
            await other.request({"type": "set_name", "name": taken})
        assert err.value.code == "name_taken", taken
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


# --------------------------------------------------------------------- reserved names
async def test_reserved_names_are_the_sites_and_the_servers_guest_names(server: Server
                                                                        ) -> None:
    ann, _ = await browser(server)
    for name in ("Ace bot", "ace-BOT", "Random bot", "admin", "Ad-min", "MODERATOR", "r00t",
                 "Guest-12345", "guest 7", "Guest", "ann (guest)", "Ann (GUEST)"):
        with pytest.raises(ServerError) as err:
            await ann.request({"type": "set_name", "name": name})
        assert err.value.code == "name_reserved", name
    me = await ann.request({"type": "set_name", "name": "Ann"})
    with pytest.raises(ServerError) as err:  # nor by a rename
        await ann.request({"type": "set_name", "name": "Steady bot"})
    assert err.value.code == "name_reserved"
    assert me["player"]["account"] is False
    # The server still names its guests Guest-nnnnn; a password makes one an account.
    guest, key = await browser(server)
    me = await guest.request({"type": "set_password", "password": "correct horse"})
    assert me["player"]["name"].startswith("Guest-") and me["player"]["account"] is True
    status, _, body = await aget(server, "/api/me", {"Cookie": f"sr_player={key}"})
    assert status == 200 and json.loads(body)["player"]["account"] is True


async def test_an_anonymous_racer_never_races_under_a_players_name(server: Server) -> None:
    ann, _ = await browser(server)
    await ann.request({"type": "set_name", "name": "anna5629"})
    long, _ = await browser(server)
    await long.request({"type": "set_name", "name": "Annabel of the long name, 1234"})
    host = await server.client()
    race = (await host.create("scotch", players=8))["race"]
    names = {}
    for asked in ("anna5629", "\u0430nna5629", "ANNA5629", "Ace bot", "Zed",
                  "Annabel of the long name, 1234"):
        racer = await server.client()  # no cookie: anonymous
        names[asked] = (await racer.join(race, name=asked))["name"]
    assert names == {"anna5629": "anna5629 (guest)", "\u0430nna5629": "\u0430nna5629 (guest)",
                     "ANNA5629": "ANNA5629 (guest)", "Ace bot": "Ace bot (guest)",
                     "Zed": "Zed",  # nobody's name: as asked
                     "Annabel of the long name, 1234": "Annabel of the long name (guest)"}
    assert all(len(n) <= 32 for n in names.values())
    # A browser that is no player yet is anonymous too; the player himself races as himself.
    unknown, _ = await browser(server)
    assert (await unknown.join(race, name="anna5629"))["name"] == "anna5629 (guest)"
    assert (await ann.join(race, name="whatever"))["name"] == "anna5629"
    # A tournament's entrants race under the names they give: never another player's.
    created = await host.request({"type": "tournament_create", "name": "Cup",
                                  "format": "rounds", "games": ["scotch"], "race_size": 2})
    tid = created["tournament"]
    stranger = await server.client()
    joined = await stranger.request({"type": "tournament_join", "tournament": tid,
                                     "name": "ANNA5629"})
    assert joined["name"] == "ANNA5629 (guest)"
    mine = await ann.request({"type": "tournament_join", "tournament": tid, "name": "Anna5629"})
    assert mine["name"] == "Anna5629"  # his own name, as he writes it


# --------------------------------------------------------------------------- sign-ins
class Clock:
    """The server's clock (ms), moved on by the test: delays are checked without waiting."""

    def __init__(self) -> None:
        self.now = int(time.time() * 1000)

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


@pytest.fixture
async def proxied(tmp_path: Path) -> AsyncIterator[tuple[Server, Clock]]:
    """A server behind a proxy it trusts (each client says its address in X-Forwarded-For),
    on a clock the test moves."""
    storage = Storage(tmp_path / "race.db")
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    (client_dir / "index.html").write_text("<!doctype html><title>solrace</title>")
    clock = Clock()
    app = App(storage, countdown=0.05, rate_limit=0, client=client_dir, trust_proxy=True,
              clock=clock, http_rate=0)
    async with serving(app) as srv:
        yield srv, clock
    app.close()
    storage.close()


async def from_address(srv: Server, address: str, cookie: bool = True) -> RaceClient:
    """A browser (with its key, unless ``cookie`` is false) at ``address``."""
    headers = {"X-Forwarded-For": address}
    if cookie:
        _, got, _ = await aget(srv, "/", headers)
        headers["Cookie"] = f"sr_player={key_of(got['set-cookie'])}"
    return await srv.client(additional_headers=headers)


async def sign_in(client: RaceClient, name: str, password: str,
                  timeout: float = 10.0) -> dict[str, Any]:
    """The reply, an error's included."""
    try:
        return await client.request({"type": "sign_in", "name": name, "password": password},
                                    timeout)
    except ServerError as exc:
        return exc.reply


async def test_failed_sign_ins_slow_the_guesser_and_never_lock_the_owner_out(
        proxied: tuple[Server, Clock]) -> None:
    server, clock = proxied
    home = "198.51.100.7"
    owner = await from_address(server, home)
    await owner.request({"type": "set_name", "name": "Ann"})
    await owner.request({"type": "set_password", "password": "correct horse"})
    guesser = await from_address(server, "203.0.113.9", cookie=False)
    waits = []
    for i in range(10):
        reply = await sign_in(guesser, "ann", f"guess {i:04}")
        while reply["code"] == "rate_limited":  # told when: wait that long, no less
            waits.append(reply["retry_after"])
            clock.advance(reply["retry_after"] - 1)
            assert (await sign_in(guesser, "ann", f"guess {i:04}"))["code"] == "rate_limited"
            clock.advance(1)
            reply = await sign_in(guesser, "ann", f"guess {i:04}")
        assert reply["code"] == "forbidden"
    # Three free, then 1, 2, 4... seconds: each failure doubles the guesser's wait.
    assert waits == [1, 2, 4, 8, 16, 32, 64]
    assert (await sign_in(guesser, "ann", "correct horse"))["retry_after"] == 128
    # Ten failures for his name: the owner at home is not delayed at all...
    phone = await from_address(server, home)
    assert (await sign_in(phone, "ann", "correct horse"))["type"] == "signed_in"
    # ... and on a network new to him, by a few seconds at most, then he is in.
    cafe = await from_address(server, "192.0.2.44")
    reply = await sign_in(cafe, "ann", "correct horse")
    assert reply["code"] == "rate_limited" and reply["retry_after"] <= 8
    clock.advance(reply["retry_after"])
    assert (await sign_in(cafe, "ann", "correct horse"))["type"] == "signed_in"
    # A guesser trying name after name at one network is slowed down as well.
    spray = await from_address(server, "203.0.113.10", cookie=False)
    for i in range(30):
        assert (await sign_in(spray, f"nobody{i}", "guessing"))["code"] == "forbidden"
    assert (await sign_in(spray, "nobody99", "guessing"))["code"] == "rate_limited"
    # Failures are forgotten an hour after the last one.
    clock.advance(3600)
    assert (await sign_in(guesser, "ann", "guess again"))["code"] == "forbidden"


async def test_a_flood_of_sign_ins_delays_another_network_by_one_hash_each(
        proxied: tuple[Server, Clock]) -> None:
    """400 attempts from 40 addresses at once (10 each, unknown names: a scrypt each all the
    same), then the owner's from a 41st: his password is checked after at most one hash per
    address ahead of him, not after every attempt queued before his."""
    server, _ = proxied
    owner = await from_address(server, "198.51.100.7")
    await owner.request({"type": "set_name", "name": "Ann"})
    await owner.request({"type": "set_password", "password": "correct horse"})
    flood = [await from_address(server, f"203.0.113.{a}", cookie=False)
             for a in range(40) for _ in range(10)]
    answered: list[str] = []

    async def guess(client: RaceClient, i: int) -> None:
        # What is measured is the order of the hashes, not their time: on a busy machine the
        # 120 hashes that wait take far longer than a request's usual 10 s.
        reply = await sign_in(client, f"nobody{i}", "guessing", timeout=T * 30)
        answered.append(reply.get("code", reply["type"]))

    tasks = [asyncio.create_task(guess(c, i)) for i, c in enumerate(flood)]
    pool = server.app.accounts.hashing
    async with asyncio.timeout(T * 6):  # most of the flood waits its turn (3 per address)
        while pool.waiting < 90:
            await asyncio.sleep(0.005)
    before = answered.count("forbidden")
    reply = await sign_in(await from_address(server, "192.0.2.44", cookie=False), "ann",
                          "correct horse", timeout=T * 30)
    assert reply["type"] == "signed_in"
    after = answered.count("forbidden")
    await asyncio.gather(*tasks)
    # Each address may have 3 waiting: the rest is refused at once, before any hash.
    assert answered.count("forbidden") + answered.count("rate_limited") == 400
    # In turn by address: 40 addresses wait, so 40 hashes at most started before his (first
    # come, first served: the 90 or more waiting when he asked).
    waited = [n for address, n in pool.history if address == "192.0.2.44"]
    assert len(waited) == 1 and waited[0] <= 40, waited
    # Seen from outside: the guesses answered while his password was checked.
    assert after - before <= 40 + pool.threads + 4, (before, after)


async def test_guests_share_an_address_accounts_are_capped_per_day(
        proxied: tuple[Server, Clock]) -> None:
    server, clock = proxied
    # A school behind one address: 30 new players at once are no flood, whether they pick a
    # name or play a bot at once (a guest made on the way).
    for i in range(30):
        client = await from_address(server, "198.51.100.7")
        if i % 10 == 9:
            paired = await client.request({"type": "play_bot", "game": "scotch", "level": 1,
                                           "rated": False})
            assert paired["type"] == "paired"
        else:
            await client.request({"type": "set_name", "name": f"Pupil {i}"})
        me = await client.request({"type": "me"})
        assert me["player"]["account"] is False
        await client.close()
    # A flood is (here the guard is made small to reach it).
    server.app.accounts.new_players = AddressRates(1.0, burst=2.0)
    made = []
    for _ in range(3):
        client = await from_address(server, "198.51.100.8")
        made.append(await client.request({"type": "me"}))  # no player yet: nothing made
        try:
            await client.request({"type": "set_name", "name": f"Flood {len(made)}"})
        except ServerError as exc:
            assert exc.code == "rate_limited" and exc.reply["retry_after"] >= 1
            break
    else:
        pytest.fail("a flood of new players from one address was never refused")
    # Accounts (a first password): so many per network per UTC day.
    server.app.accounts.new_players = AddressRates(1.0, burst=200.0)
    server.app.accounts.accounts_per_day = 3
    for i in range(3):
        client = await from_address(server, "192.0.2.1")
        await client.request({"type": "set_name", "name": f"Signs up {i}"})
        me = await client.request({"type": "set_password", "password": "correct horse"})
        assert me["player"]["account"] is True
    late = await from_address(server, "192.0.2.1")
    with pytest.raises(ServerError) as err:
        await late.request({"type": "set_password", "password": "correct horse"})
    assert err.value.code == "rate_limited" and 1 <= err.value.reply["retry_after"] <= 86_400
    assert (await late.request({"type": "me"}))["player"]["account"] is False
    elsewhere = await from_address(server, "192.0.2.2")  # another network
    assert (await elsewhere.request({"type": "set_password", "password": "correct horse"})
            )["player"]["account"] is True
    clock.advance(86_400)  # the next day
    me = await late.request({"type": "set_password", "password": "correct horse"})
    assert me["player"]["account"] is True
