"""Players: who a connection is, and the commands that change it (``me``, ``set_name``,
``set_password``, ``sign_in``), plus the two HTTP steps of a sign-in and a sign-out, and the
name an anonymous racer races under.

A connection arrives with the hash of its browser's key (the ``sr_player`` cookie, read at
the WebSocket handshake) and, if that key is a player's, that player (:class:`Who`). A key
the store has never seen becomes a player only when the connection does something that needs
one (:meth:`Accounts.ensure`): a visit costs the server nothing. Such a player is a *guest*;
one with a password is an *account*.

Names are one name by their skeleton (solrace.core.names), and some no player may take
(``name_reserved``). An anonymous racer who asks for a player's name, or a reserved one, races
under it with the guest mark (:meth:`Accounts.racer_name`).

What a client can make the server do here is bounded per client address (its network:
``core.quotas.client_key``): new guests (a flood guard only, a token bucket: a school's NAT is
never near it), new accounts per UTC day (counted in the store: every process shares it),
password hashes (solrace.service.hashing: a pool of their own, in turn by address) and failed
sign-ins (solrace.core.sign_in: growing delays per name and per network; the owner is never
locked out from a network he signed in from). Networks are kept in the store only as their
tags (``core.keys.net_tag``), never as addresses.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol

from solrace.core.identity import (
    Player,
    Who,
    check_password,
    hash_password,
    key_hash,
    name_key,
    well_formed_key,
)
from solrace.core.keys import KEY_BYTES, MasterKey, net_tag
from solrace.core.names import guest_marked, reserved
from solrace.core.quotas import client_key
from solrace.core.race_parts import RaceError
from solrace.core.rating import Rating
from solrace.core.sign_in import Throttled, failure_keys, sign_in_wait
from solrace.protocol import codec, commands
from solrace.service.entropy import guest_name, new_key, new_player_id, password_salt
from solrace.service.hashing import PasswordPool
from solrace.service.rates import AddressRates
from solrace.settings import (
    ACCOUNTS_PER_ADDRESS_DAY,
    NEW_PLAYERS_BURST,
    NEW_PLAYERS_RATE,
    TICKET_MS,
)
from solrace.store.player_base import PlayerStore

log = logging.getLogger(__name__)

Message = dict[str, Any]


class Client(Protocol):
    """A connection, as far as players are concerned."""

    id: int
    address: str
    key: str | None
    who: Who | None

    def send(self, msg: dict[str, Any], urgent: bool = True) -> None: ...


def player_view(player: Player, ratings: dict[str, Rating]) -> dict[str, Any]:
    """A player as ``me`` shows him (over the socket and ``GET /api/me``)."""
    return {"id": player.id, "name": player.name, "password": player.password is not None,
            "account": player.password is not None, "created_at": player.created_at,
            "ratings": {g: r.as_dict() for g, r in ratings.items()}}


def utc_day(now: int) -> str:
    """The UTC day of a time (ms): ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", time.gmtime(now / 1000))


class Accounts:
    """See the module docstring. ``store`` None: no players (every connection anonymous)."""

    def __init__(self, store: PlayerStore | None, clock: Callable[[], int],
                 reply: Callable[[Any, Message], None],
                 tag: Callable[[str], str] | None = None) -> None:
        self.store = store
        self.clock = clock
        #: Sends a reply in order with the connection's other replies (Hub.reply_later).
        self.reply = reply
        if tag is None:  # a key of its own: what it stores matches nothing else's
            net = MasterKey(secrets.token_bytes(KEY_BYTES)).derive("net")
            tag = lambda address: net_tag(net, address)  # noqa: E731
        #: A network's tag (``core.keys.net_tag``): what the store keeps of an address.
        self.tag = tag
        #: New guests per address: a flood guard (see NEW_PLAYERS_RATE).
        self.new_players = AddressRates(NEW_PLAYERS_RATE, burst=NEW_PLAYERS_BURST)
        #: Guests who may become accounts per network per UTC day.
        self.accounts_per_day = ACCOUNTS_PER_ADDRESS_DAY
        self.hashing = PasswordPool()
        self._dummy_record: str | None = None

    # ------------------------------------------------------------- who it is
    async def connected(self, conn: Client, cookie: str | None) -> None:
        """A connection opened with this key (the cookie's value, if any): remember its hash,
        and the player it is, if it is one. A store that does not answer leaves it anonymous
        for now (the next command that needs a player asks again)."""
        if cookie is None or self.store is None or not well_formed_key(cookie):
            return
        conn.key = key_hash(cookie)
        try:
            player = await self.store.by_key(conn.key)
            if player is not None:
                conn.who = await self.who_of(player)
        except Exception:
            log.exception("cannot read the player of a connection")

    async def who_of(self, player: Player) -> Who:
        """The player with his shown ratings now."""
        assert self.store is not None
        ratings = await self.store.ratings(player.id)
        return Who(player.id, player.name,
                   tuple((g, r.shown, r.provisional) for g, r in ratings.items()),
                   account=player.password is not None)

    async def ensure(self, conn: Client, name: str | None = None) -> Who:
        """The player the connection is, created now if it has none yet (named ``name`` if
        given and free, else ``Guest-nnnnn``), with his ratings read again. RaceError:
        ``forbidden`` (no key: not a browser), ``name_taken``, ``name_reserved``,
        ``rate_limited`` (a flood of new players from this address), ``unavailable`` (the
        store)."""
        store = self._store()
        if conn.key is None:
            raise RaceError("forbidden", "only a browser that keeps the site's cookie can be a "
                            "player: open the page with cookies on")
        try:
            player = await store.by_key(conn.key)
            if player is None:
                player = await self._create(conn, name)
            conn.who = await self.who_of(player)
        except RaceError:
            raise
        except Exception as exc:
            log.exception("player store failed")
            raise RaceError("unavailable", "the server cannot reach its players right now: try "
                            "again") from exc
        return conn.who

    async def _create(self, conn: Client, name: str | None) -> Player:
        store = self._store()
        if name is not None:
            _not_reserved(name)
        wait = self.new_players.wait(client_key(conn.address))
        if wait:
            raise Throttled("too many new players from your network: wait a moment", wait)
        assert conn.key is not None
        for attempt in range(8):
            # The server's own guest names are reserved for it: only it hands them out.
            wanted = name if name is not None and attempt == 0 else guest_name()
            player = Player(new_player_id(), wanted, self.clock())
            if await store.create(player, conn.key):
                return player
            if name is not None:
                raise RaceError("name_taken", f"the name {name!r} is taken: choose another")
        raise RaceError("unavailable", "no free guest name: try again")

    def _store(self) -> PlayerStore:
        if self.store is None:
            raise RaceError("unavailable", "this server keeps no players")
        return self.store

    # -------------------------------------------------------------- commands
    async def handle(self, conn: Client, cmd: commands.PlayerCmd) -> None:
        """Run one player command and reply (in order with the connection's other replies).
        A refusal that a later try would pass (``rate_limited``) says when: ``retry_after``
        (seconds)."""
        try:
            msg = await self._run(conn, cmd)
        except RaceError as exc:
            msg = codec.error(exc.code, exc.message, cmd.rid, **exc.fields)
            if isinstance(exc, Throttled):
                msg["retry_after"] = exc.retry_after
        except Exception:
            log.exception("player command failed")
            msg = codec.error("unavailable", "the server cannot reach its players right now: "
                              "try again", cmd.rid)
        self.reply(conn, msg)

    async def _run(self, conn: Client, cmd: commands.PlayerCmd) -> Message:
        if cmd.action == "me":
            return await self.me(conn, cmd.rid)
        if cmd.action == "set_name":
            assert cmd.name is not None
            return await self.set_name(conn, cmd.name, cmd.rid)
        if cmd.action == "set_password":
            assert cmd.password is not None
            return await self.set_password(conn, cmd.password, cmd.old, cmd.rid)
        assert cmd.name is not None and cmd.password is not None
        return await self.sign_in(conn, cmd.name, cmd.password, cmd.rid)

    async def me(self, conn: Client, rid: Any = None) -> Message:
        """Who the connection is: ``player`` (null until it is one; with ``account``: has he
        a password) and ``anonymous``."""
        player = None
        if conn.key is not None and self.store is not None:
            found = await self.store.by_key(conn.key)
            if found is not None:
                conn.who = await self.who_of(found)
                player = player_view(found, await self.store.ratings(found.id))
        msg: Message = {"type": "me", "player": player, "anonymous": conn.key is None}
        if rid is not None:
            msg["rid"] = rid
        return msg

    async def set_name(self, conn: Client, name: str, rid: Any = None) -> Message:
        who = await self.ensure(conn, name)
        if who.name != name:
            _not_reserved(name)
            if not await self._store().rename(who.id, name):
                raise RaceError("name_taken", f"the name {name!r} is taken: choose another")
        return await self.me(conn, rid)

    def _dummy(self) -> str:
        """A password record no password matches (checked when the name is unknown)."""
        if self._dummy_record is None:
            self._dummy_record = hash_password(new_key(), password_salt())
        return self._dummy_record

    async def set_password(self, conn: Client, password: str, old: str | None,
                           rid: Any = None) -> Message:
        """Set (``old`` None) or change the player's password. A guest's first one makes him
        an account: at most ``ACCOUNTS_PER_ADDRESS_DAY`` from one network each UTC day."""
        who = await self.ensure(conn)
        store = self._store()
        player = await store.by_id(who.id)
        assert player is not None
        address = client_key(conn.address)
        if player.password is not None:
            ok = old is not None and await self.hashing.run(
                address, lambda: check_password(old, player.password))
            if not ok:
                raise RaceError("forbidden", "the old password is wrong")
        record = await self.hashing.run(address, lambda: hash_password(password, password_salt()))
        now = self.clock()
        tag = self.tag(address)
        if player.password is None and not await store.take_account(
                tag, utc_day(now), self.accounts_per_day):
            raise Throttled(f"{self.accounts_per_day} accounts were made from your network "
                            "today, as many as a day allows: try again tomorrow",
                            86_400 - (now // 1000) % 86_400)
        await store.set_password(who.id, record)
        await store.add_network(who.id, tag, now)
        return await self.me(conn, rid)

    async def sign_in(self, conn: Client, name: str, password: str, rid: Any = None
                      ) -> Message:
        """Check a name and password; a single-use ticket the page exchanges for a new key of
        that player (``GET /api/session``). Failures slow down the next tries, per name and
        per network (solrace.core.sign_in): too soon, :class:`Throttled`, and nothing is
        checked."""
        store = self._store()
        address = client_key(conn.address)
        tag = self.tag(address)
        keys = failure_keys(name_key(name), tag)
        now = self.clock()
        player = await store.by_name(name)
        # The same reads whether or not the name exists: the answer's time tells nothing.
        known = await store.known_network(player.id if player is not None else "", tag, now)
        wait = sign_in_wait(now, await store.failures(keys, now), known)
        if wait:
            raise Throttled(f"too many failed sign-ins: try again in {max(1, round(wait))} s",
                            wait)
        record = player.password if player is not None else None
        # One scrypt whether or not the name exists.
        ok = await self.hashing.run(address, lambda: check_password(
            password, record or self._dummy())) and record is not None
        now = self.clock()
        if not ok or player is None:
            await store.add_failure(keys, now)
            raise RaceError("forbidden", "wrong name or password")
        await store.clear_failures(keys[:1])
        await store.add_network(player.id, tag, now)
        ticket = new_key()
        await store.put_ticket(key_hash(ticket), player.id, now + TICKET_MS)
        msg: Message = {"type": "signed_in", "ticket": ticket, "name": player.name}
        if rid is not None:
            msg["rid"] = rid
        return msg

    # ---------------------------------------------------------- racers' names
    async def racer_name(self, name: str, who: Who | None) -> str:
        """The name a racer who is not racing as a player (anonymous, or a tournament's
        entrant) races under: ``name``, unless it is a player's name (his own aside) or a
        reserved one; then ``name`` with the guest mark. A store that does not answer gets
        the mark too: a name it cannot clear is not shown bare."""
        if who is not None and name_key(name) == name_key(who.name):
            return name
        if reserved(name):
            return guest_marked(name)
        if self.store is None:
            return name
        try:
            player = await self.store.by_name(name)
        except Exception:
            log.exception("cannot look a racer's name up")
            return guest_marked(name)
        return name if player is None else guest_marked(name)

    def close(self) -> None:
        self.hashing.close()

    # ------------------------------------------------------------------ HTTP
    async def redeem(self, ticket: str) -> str | None:
        """A ticket's new key for its player (stored, hashed), or None if the ticket is wrong,
        used or expired."""
        if self.store is None or not well_formed_key(ticket):
            return None
        pid = await self.store.take_ticket(key_hash(ticket), self.clock())
        if pid is None:
            return None
        key = new_key()
        await self.store.add_key(pid, key_hash(key), self.clock())
        return key

    async def forget(self, cookie: str | None) -> None:
        """Sign this browser out: its key is forgotten."""
        if self.store is not None and cookie is not None and well_formed_key(cookie):
            await self.store.drop_key(key_hash(cookie))

    async def of_cookie(self, cookie: str | None) -> Player | None:
        """The player of a page's cookie (for the pages' API), or None."""
        if self.store is None or cookie is None or not well_formed_key(cookie):
            return None
        return await self.store.by_key(key_hash(cookie))


def _not_reserved(name: str) -> None:
    if reserved(name):
        raise RaceError("name_reserved", f"the name {name!r} is kept for the site: choose "
                        "another")
