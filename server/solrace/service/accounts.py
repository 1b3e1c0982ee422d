"""Players: who a connection is, and the commands that change it (``me``, ``set_name``,
``set_password``, ``sign_in``), plus the two HTTP steps of a sign-in and a sign-out.

A connection arrives with the hash of its browser's key (the ``sr_player`` cookie, read at
the WebSocket handshake) and, if that key is a player's, that player (:class:`Who`). A key
the store has never seen becomes a player only when the connection does something that needs
one (:meth:`Accounts.ensure`): a visit costs the server nothing. What a client can make the
server do here is bounded per client address: players created per hour, password checks per
minute (each is a scrypt, ~50 ms of CPU, one at a time per process), failed sign-ins per name
and per address per hour.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
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
from solrace.core.quotas import client_key
from solrace.core.race_parts import RaceError
from solrace.protocol import codec
from solrace.service.entropy import guest_name, new_key, new_player_id, password_salt
from solrace.settings import (
    HTTP_CLIENTS,
    PASSWORD_CHECKS_PER_MINUTE,
    PLAYERS_PER_ADDRESS_HOUR,
    SIGN_IN_FAILURES_PER_HOUR,
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


class RecentCounts:
    """How many times each key did something within the last ``seconds`` (at most
    ``keys`` keys remembered: the oldest are forgotten first)."""

    def __init__(self, seconds: float, keys: int = HTTP_CLIENTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.keys = keys
        self.clock = clock
        self.times: OrderedDict[str, deque[float]] = OrderedDict()

    def count(self, key: str) -> int:
        times = self.times.get(key)
        if times is None:
            return 0
        cutoff = self.clock() - self.seconds
        while times and times[0] < cutoff:
            times.popleft()
        return len(times)

    def add(self, key: str) -> None:
        times = self.times.setdefault(key, deque())
        times.append(self.clock())
        self.times.move_to_end(key)
        while len(self.times) > self.keys:
            self.times.popitem(last=False)


class Accounts:
    """See the module docstring. ``store`` None: no players (every connection anonymous)."""

    def __init__(self, store: PlayerStore | None, clock: Callable[[], int],
                 reply: Callable[[Any, Message], None]) -> None:
        self.store = store
        self.clock = clock
        #: Sends a reply in order with the connection's other replies (Hub.reply_later).
        self.reply = reply
        self.created = RecentCounts(3600)
        self.checks = RecentCounts(60)
        self.failures = RecentCounts(3600)
        self._scrypt = asyncio.Semaphore(1)
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
        ``forbidden`` (no key: not a browser), ``name_taken``, ``rate_limited`` (this address
        created too many players this hour), ``unavailable`` (the store)."""
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
        address = client_key(conn.address)
        if self.created.count(address) >= PLAYERS_PER_ADDRESS_HOUR:
            raise RaceError("rate_limited", "too many new players from your network this hour")
        assert conn.key is not None
        for attempt in range(8):
            wanted = name if name is not None and attempt == 0 else guest_name()
            player = Player(new_player_id(), wanted, self.clock())
            if await store.create(player, conn.key):
                self.created.add(address)
                return player
            if name is not None:
                raise RaceError("name_taken", f"the name {name!r} is taken: choose another")
        raise RaceError("unavailable", "no free guest name: try again")

    def _store(self) -> PlayerStore:
        if self.store is None:
            raise RaceError("unavailable", "this server keeps no players")
        return self.store

    # -------------------------------------------------------------- commands
    async def handle(self, conn: Client, cmd: codec.PlayerCmd) -> None:
        """Run one player command and reply (in order with the connection's other replies)."""
        try:
            msg = await self._run(conn, cmd)
        except RaceError as exc:
            msg = codec.error(exc.code, exc.message, cmd.rid, **exc.fields)
        except Exception:
            log.exception("player command failed")
            msg = codec.error("unavailable", "the server cannot reach its players right now: "
                              "try again", cmd.rid)
        self.reply(conn, msg)

    async def _run(self, conn: Client, cmd: codec.PlayerCmd) -> Message:
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
        """Who the connection is: ``player`` (null until it is one) and ``anonymous``."""
        player = None
        if conn.key is not None and self.store is not None:
            found = await self.store.by_key(conn.key)
            if found is not None:
                conn.who = await self.who_of(found)
                ratings = await self.store.ratings(found.id)
                player = {"id": found.id, "name": found.name,
                          "password": found.password is not None,
                          "created_at": found.created_at,
                          "ratings": {g: r.as_dict() for g, r in ratings.items()}}
        msg: Message = {"type": "me", "player": player, "anonymous": conn.key is None}
        if rid is not None:
            msg["rid"] = rid
        return msg

    async def set_name(self, conn: Client, name: str, rid: Any = None) -> Message:
        who = await self.ensure(conn, name)
        if who.name != name and not await self._store().rename(who.id, name):
                raise RaceError("name_taken", f"the name {name!r} is taken: choose another")
        return await self.me(conn, rid)

    async def _scrypt_job(self, conn: Client, job: Callable[[], Any]) -> Any:
        address = client_key(conn.address)
        if self.checks.count(address) >= PASSWORD_CHECKS_PER_MINUTE:
            raise RaceError("rate_limited", "too many password attempts: wait a minute")
        self.checks.add(address)
        async with self._scrypt:  # one at a time: 16 MiB and ~50 ms of CPU each
            return await asyncio.to_thread(job)

    def _dummy(self) -> str:
        """A password record no password matches (checked when the name is unknown)."""
        if self._dummy_record is None:
            self._dummy_record = hash_password(new_key(), password_salt())
        return self._dummy_record

    async def set_password(self, conn: Client, password: str, old: str | None,
                           rid: Any = None) -> Message:
        who = await self.ensure(conn)
        store = self._store()
        player = await store.by_id(who.id)
        assert player is not None
        if player.password is not None:
            ok = old is not None and await self._scrypt_job(
                conn, lambda: check_password(old, player.password))
            if not ok:
                raise RaceError("forbidden", "the old password is wrong")
        record = await self._scrypt_job(conn, lambda: hash_password(password, password_salt()))
        await store.set_password(who.id, record)
        return await self.me(conn, rid)

    async def sign_in(self, conn: Client, name: str, password: str, rid: Any = None
                      ) -> Message:
        """Check a name and password; a single-use ticket the page exchanges for a new key of
        that player (``GET /api/session``)."""
        store = self._store()
        address = client_key(conn.address)
        folded = "name:" + name_key(name)
        if max(self.failures.count(folded), self.failures.count(address)) \
                >= SIGN_IN_FAILURES_PER_HOUR:
            raise RaceError("rate_limited", "too many failed sign-ins: try again in an hour")
        player = await store.by_name(name)
        record = player.password if player is not None else None
        # One scrypt whether or not the name exists: the answer's time tells nothing.
        ok = await self._scrypt_job(conn, lambda: check_password(
            password, record or self._dummy())) and record is not None
        if not ok or player is None:
            self.failures.add(folded)
            self.failures.add(address)
            raise RaceError("forbidden", "wrong name or password")
        ticket = new_key()
        await store.put_ticket(key_hash(ticket), player.id, self.clock() + TICKET_MS)
        msg: Message = {"type": "signed_in", "ticket": ticket, "name": player.name}
        if rid is not None:
            msg["rid"] = rid
        return msg

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
