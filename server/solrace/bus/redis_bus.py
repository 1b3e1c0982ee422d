"""The :class:`~solrace.bus.base.Bus` across processes, over Redis sharded pub/sub.

Locally it is the in-memory bus: a connection of this process subscribes to a race and gets its
events synchronously. Besides, what this process publishes for a race goes to the race's unit
channel in Redis (batched: one pipeline per loop turn, one message per unit holding that turn's
events, msgpack), and this process subscribes to the unit channel of every race one of its
connections follows, to hand other processes' events to them.

Events keep their JSON encoding on the way (the ``j`` bytes), so a receiving process sends them
to JSON clients without encoding them again. A board view goes out once per distinct view that a
remote follower may have (``views.BoardViews``, as the owning process knows its remote
followers), and the receiving process picks the one for each of its connections; a connection
the owner does not know gets the view for outsiders, which shows the least.

Redis pub/sub drops what is sent while a subscriber's link is down. So numbered events are also
appended to the unit's capped stream, and when a link comes back the bus reads the events it
missed from there (by ``v``, per race) and hands them on; events already seen are dropped.
Links are re-established with backoff; an outage never blocks publishing (messages for Redis
are dropped then; clients resynchronise from a snapshot).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from solrace.bus.base import Deliver, Subscription
from solrace.bus.memory_bus import MemoryBus
from solrace.bus.redis_listen import Listener
from solrace.core.views import for_audience
from solrace.protocol import internal
from solrace.protocol.board_views import BoardViews
from solrace.protocol.event import Event, Publishable, Viewer
from solrace.runtime.redis_connect import RedisClient, key, node_client, proc_key, unit_of
from solrace.runtime.supervisor import Supervisor
from solrace.settings import LINK_BACKOFF, REDIS_CONNECT_TIMEOUT, STREAM_LEN

log = logging.getLogger(__name__)

#: Seconds a subscription change, a send or a catch-up may take before it is given up.
JOB_TIMEOUT = 10.0



class RemoteBoardViews:
    """Board views published by another process: one encoded view per viewer key it knew."""

    __slots__ = ("audience", "default", "events", "keys", "player")

    to: str | None = None

    def __init__(self, player: str, audience: str, keys: dict[str, int],
                 default: int | None, payloads: list[bytes]) -> None:
        self.player = player
        self.audience = audience
        self.keys = keys
        self.default = default
        self.events = [Event.from_json(p) for p in payloads]

    def pick(self, viewer: Viewer, race: str) -> Event | None:
        if not for_audience(viewer, race, self.audience, self.player):
            return None
        unit = unit_of(race)
        for other, player in viewer.players.items():
            if unit_of(other) == unit:
                index = self.keys.get(f"{other}/{player}")
                if index is not None:
                    return self.events[index]
        return None if self.default is None else self.events[self.default]


def viewer_key(viewer: Viewer, race: Any) -> str:
    """The key under which a viewer's board view is published: his seat in the race's deal
    (``race/player``), or "" for anyone else."""
    from solrace.core.views import seat_of

    seat = seat_of(viewer, race)
    if seat is None:
        return ""
    for other in race.deal.races:
        if other.racers.get(seat.player) is seat:
            return f"{other.race}/{seat.player}"
    return ""


class _Link:
    """One subscriber connection (to the node that serves some channels), with its reader:
    a :class:`~solrace.bus.redis_listen.Listener`, which hands messages on from the
    transport's callback, or redis-py's ``PubSub`` (over TLS, or ``raw`` false)."""

    def __init__(self, bus: RedisBus, client: Redis, raw: bool = True) -> None:
        self.bus = bus
        self.client = client
        self.raw = raw
        self.channels: set[str] = set()
        self.pubsub: Any = None
        self.task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()
        self.confirmed: dict[str, asyncio.Event] = {}

    def start(self) -> None:
        self.task = self.bus.supervisor.spawn(self._run(), "Redis subscription link")

    async def subscribe(self, channel: str) -> None:
        """Subscribe, and return once Redis confirmed it (what is published after that
        reaches this process), or after a second if the link is down (it subscribes when it
        comes back)."""
        confirmed = self.confirmed.setdefault(channel, asyncio.Event())
        if channel in self.channels and confirmed.is_set():
            return
        self.channels.add(channel)
        if self.pubsub is not None and self.ready.is_set():
            with contextlib.suppress(RedisError, OSError):
                await self.pubsub.ssubscribe(channel)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(confirmed.wait(), 1.0)

    async def unsubscribe(self, channel: str) -> None:
        self.channels.discard(channel)
        self.confirmed.pop(channel, None)
        if self.pubsub is not None and self.ready.is_set():
            with contextlib.suppress(RedisError, OSError):
                await self.pubsub.sunsubscribe(channel)

    def _confirm(self, channel: str) -> None:
        waiter = self.confirmed.get(channel)
        if waiter is not None:
            waiter.set()

    async def _open(self) -> Listener | None:
        if not self.raw:
            return None
        listener = await Listener.open(self.client, self.bus.received, self._confirm,
                                       REDIS_CONNECT_TIMEOUT)
        if listener is None:
            self.raw = False  # TLS: redis-py's
        return listener

    async def _run(self) -> None:
        attempt = 0
        first = True
        while True:
            try:
                listener = await self._open()
                self.pubsub = listener if listener is not None else self.client.pubsub()
                for confirmed in self.confirmed.values():
                    confirmed.clear()
                if self.channels:
                    await self.pubsub.ssubscribe(*self.channels)
                    if listener is not None:
                        # Confirmed before the catch-up reads the streams: nothing published
                        # in between is missed.
                        waits = [c.wait() for c in self.confirmed.values()]
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(asyncio.gather(*waits), 1.0)
                else:
                    await self.pubsub.ping()
                self.ready.set()
                if not first:
                    log.warning("Redis subscription link is back: catching up")
                    self.bus.link_back(set(self.channels))
                first = False
                attempt = 0
                if listener is not None:
                    await listener.closed
                    raise RedisError("Redis closed the subscription link")
                while True:
                    msg = await self.pubsub.get_message(timeout=None)
                    if msg is None:
                        continue
                    kind = msg.get("type")
                    if kind in ("smessage", "message"):
                        self.bus.received(msg["channel"].decode(), msg["data"])
                    elif kind == "ssubscribe":
                        self._confirm(msg["channel"].decode())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.ready.clear()
                delay = LINK_BACKOFF[min(attempt, len(LINK_BACKOFF) - 1)]
                attempt += 1
                if attempt <= 3 or attempt % 20 == 0:
                    log.warning("Redis subscription link lost (%s): again in %.2f s", exc, delay)
                with contextlib.suppress(Exception):
                    await self.pubsub.aclose()
                await asyncio.sleep(delay)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()


class RedisBus:
    """See the module docstring. ``remote_followers(race)`` names the connections of other
    processes that follow a race this process owns (for their board views); ``on_inbox`` gets
    what other processes send to this one."""

    def __init__(self, client: RedisClient, pid: str, supervisor: Supervisor | None = None) -> None:
        self.client = client
        self.pid = pid
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        self.local = MemoryBus()
        self.remote_followers: Callable[[str], Sequence[Viewer]] = lambda race: []
        self.races: Callable[[str], Any] = lambda race: None
        self.on_inbox: Callable[[internal.Inbox], None] = lambda msg: None
        self.on_control: Callable[[internal.Owner], None] = lambda msg: None
        self._links: dict[str, _Link] = {}  # node address -> link
        self._channel_link: dict[str, _Link] = {}
        self._followers: dict[str, int] = {}  # unit -> local subscriptions
        self._last_v: dict[str, int] = {}  # race -> last numbered event handed on
        self._out: dict[str, list[Any]] = {}  # channel -> envelopes of this turn
        self._inbox_out: dict[str, list[Any]] = {}
        self._flushing = False

    async def start(self) -> None:
        """Subscribe to this process's inbox."""
        await self._subscribe(proc_key(self.pid, "in"))

    def _link_for(self, channel: str) -> _Link:
        client = node_client(self.client, channel)
        kwargs = client.connection_pool.connection_kwargs
        address = f"{kwargs.get('host')}:{kwargs.get('port')}"
        link = self._links.get(address)
        if link is None:
            link = self._links[address] = _Link(self, client)
            link.start()
        return link

    async def _subscribe(self, channel: str) -> None:
        link = self._channel_link.get(channel)
        if link is None:
            link = self._channel_link[channel] = self._link_for(channel)
        await link.subscribe(channel)

    def _spawn(self, coro: Any, name: str = "Redis bus job") -> None:
        self.supervisor.spawn(coro, name, timeout=JOB_TIMEOUT)

    # --------------------------------------------------------------- Bus API
    @property
    def before_crowd(self) -> Callable[[], None] | None:
        return self.local.before_crowd

    @before_crowd.setter
    def before_crowd(self, hook: Callable[[], None] | None) -> None:
        self.local.before_crowd = hook

    def followed_units(self) -> set[str]:
        """The units some connection of this process follows (the janitor looks after them)."""
        return set(self._followers)

    def subscribe(self, race: str, deliver: Deliver) -> Subscription:
        unit = unit_of(race)
        count = self._followers.get(unit, 0)
        self._followers[unit] = count + 1
        if count == 0:
            self._spawn(self._subscribe(key(unit, "ev")))
        inner = self.local.subscribe(race, deliver)
        return _RemoteSubscription(self, unit, inner)

    async def ready_for(self, race: str) -> None:
        """Return once events of ``race``'s unit published from now on reach this process."""
        await self._subscribe(key(unit_of(race), "ev"))

    def _unfollow(self, unit: str) -> None:
        count = self._followers.get(unit, 0) - 1
        if count > 0:
            self._followers[unit] = count
            return
        self._followers.pop(unit, None)
        channel = key(unit, "ev")
        link = self._channel_link.pop(channel, None)
        if link is not None:
            self._spawn(link.unsubscribe(channel))

    def publish(self, race: str, event: Publishable, remote: bool = True) -> None:
        """Deliver to this process's subscribers at once, and (``remote``) queue for the
        others."""
        self.local.publish(race, event)
        if type(event) is Event and event.to is None:
            v = event.data.get("v")
            if v is not None and v > self._last_v.get(race, 0):
                self._last_v[race] = v
        if remote:
            envelope = self._envelope(race, event)
            if envelope is not None:
                self._queue(key(unit_of(race), "ev"), envelope, self._out)

    def payload(self, race: str, events: Sequence[Publishable]) -> bytes:
        """The message that carries ``events`` of ``race`` to the other processes (the store
        publishes it in the script that writes them)."""
        envelopes = [self._envelope(race, event) for event in events]
        packed: bytes = msgpack.packb([e for e in envelopes if e is not None])
        return packed

    def _envelope(self, race: str, event: Publishable) -> internal.Wire | None:
        """``event`` as it goes to the other processes following its unit, or None."""
        envelope = self._typed_envelope(race, event)
        return None if envelope is None else internal.write_envelope(envelope, self.pid)

    def _typed_envelope(self, race: str, event: Publishable) -> internal.Envelope | None:
        if isinstance(event, BoardViews):
            followers = self.remote_followers(race)
            if not followers:
                return None
            room = self.races(race)
            payloads: list[bytes] = []
            index: dict[int, int] = {}
            keys: dict[str, int] = {}
            default = None
            outsiders = False
            for viewer in followers:
                if not viewer.players:
                    # Racing nowhere: every such spectator gets the same view, the default.
                    if outsiders:
                        continue
                    outsiders = True
                picked = event.pick(viewer, race)
                if picked is None:
                    continue
                at = index.get(id(picked))
                if at is None:
                    at = index[id(picked)] = len(payloads)
                    payloads.append(picked.encoded(False))
                k = viewer_key(viewer, room) if room is not None else ""
                if k:
                    keys[k] = at
                else:
                    default = at
            if not payloads:
                return None
            return internal.BoardEnvelope(race, self.pid, event.player, event.audience, keys,
                                          default, payloads)
        if isinstance(event, Event):
            v = event.data.get("v") if event.to is None else None
            return internal.EventEnvelope(race, self.pid, v, event.to, event.encoded(False))
        return None

    def send_to(self, pid: str, msg: internal.Inbox) -> None:
        """Queue a message for process ``pid``'s inbox."""
        self._queue(proc_key(pid, "in"), internal.write(msg), self._inbox_out)

    def _queue(self, channel: str, envelope: Any, out: dict[str, list[Any]]) -> None:
        out.setdefault(channel, []).append(envelope)
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        out, self._out = self._out, {}
        inbox, self._inbox_out = self._inbox_out, {}
        if out or inbox:
            self._spawn(self._send(out, inbox))

    async def _send(self, out: dict[str, list[Any]], inbox: dict[str, list[Any]]) -> None:
        try:
            if isinstance(self.client, RedisCluster):
                calls: list[Any] = []
                for channel, envelopes in out.items():
                    payload = msgpack.packb(envelopes)
                    if any(internal.numbered(e) for e in envelopes):
                        calls.append(self.client.xadd(channel + "s", {"m": payload},
                                                      maxlen=STREAM_LEN, approximate=True))
                    calls.append(self.client.spublish(channel, payload))
                for channel, messages in inbox.items():
                    calls.append(self.client.spublish(channel, msgpack.packb(messages)))
                await asyncio.gather(*calls, return_exceptions=True)
            else:
                async with self.client.pipeline(transaction=False) as pipe:
                    for channel, envelopes in out.items():
                        payload = msgpack.packb(envelopes)
                        if any(internal.numbered(e) for e in envelopes):
                            pipe.xadd(channel + "s", {"m": payload}, maxlen=STREAM_LEN,
                                      approximate=True)
                        pipe.spublish(channel, payload)
                    for channel, messages in inbox.items():
                        pipe.spublish(channel, msgpack.packb(messages))
                    await pipe.execute(raise_on_error=False)
        except Exception as exc:  # pub/sub is best effort: followers catch up or resync
            log.warning("Redis publish failed: %s", exc)

    # -------------------------------------------------------------- receiving
    def received(self, channel: str, data: bytes) -> None:
        try:
            messages = msgpack.unpackb(data, raw=False)
        except Exception:
            log.warning("undecodable message on %s", channel)
            return
        if channel.endswith(":in"):
            for wire in messages:
                msg = internal.read(wire)
                if msg is None:
                    log.warning("unknown inbox message %r", wire.get("k"))
                    continue
                try:
                    self.on_inbox(msg)
                except Exception:
                    log.exception("inbox message failed")
            return
        for envelope in messages:
            self._hand_on(envelope)

    def publish_control(self, unit: str, msg: internal.Owner) -> None:
        """A message for the processes that follow ``unit`` (not for clients)."""
        self._queue(key(unit, "ev"), internal.write_envelope(msg, self.pid), self._out)

    def _hand_on(self, wire: internal.Wire) -> None:
        if internal.sender_of(wire) == self.pid:
            return  # delivered here when it was published
        envelope = internal.read_envelope(wire)
        if envelope is None:
            return
        if isinstance(envelope, internal.Owner):
            self.on_control(envelope)
            return
        race = envelope.race
        if isinstance(envelope, internal.EventEnvelope):
            v = envelope.v
            if v is not None and envelope.to is None:  # a numbered event for everyone
                if v <= self._last_v.get(race, 0):
                    return  # seen already (caught up from the stream, say)
                self._last_v[race] = v
            self.local.publish(race, Event.from_json(envelope.payload, envelope.to))
        else:
            self.local.publish(race, RemoteBoardViews(
                envelope.player, envelope.audience, envelope.keys, envelope.default,
                envelope.payloads))

    def link_back(self, channels: set[str]) -> None:
        """A subscriber link came back: read what was missed from the units' streams."""
        for channel in channels:
            if not channel.endswith(":in"):
                self._spawn(self._catch_up(channel))

    async def _catch_up(self, channel: str) -> None:
        try:
            entries = await self.client.xrange(channel + "s", "-", "+")
        except RedisError as exc:
            log.warning("catching up %s failed: %s", channel, exc)
            return
        for _, fields in entries or ():
            if not fields:
                continue
            for envelope in msgpack.unpackb(fields[b"m"], raw=False):
                if internal.numbered(envelope):
                    self._hand_on(envelope)

    def forget(self, race: str) -> None:
        self._last_v.pop(race, None)

    async def close(self) -> None:
        await self.local.close()
        for link in self._links.values():
            await link.close()


class _RemoteSubscription:
    __slots__ = ("bus", "inner", "unit")

    def __init__(self, bus: RedisBus, unit: str, inner: Subscription) -> None:
        self.bus = bus
        self.unit = unit
        self.inner: Subscription | None = inner

    def address(self, to: str | None) -> None:
        if self.inner is not None:
            self.inner.address(to)

    def cancel(self) -> None:
        if self.inner is not None:
            self.inner.cancel()
            self.inner = None
            self.bus._unfollow(self.unit)
