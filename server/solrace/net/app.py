"""The server, wired: store + bus + hub, WebSocket connections and HTTP routes on one port.

The parts (docs/architecture.md): :mod:`solrace.core.race` (a race, sans-I/O),
:mod:`solrace.core.shared_deal` and :mod:`solrace.core.views` (what is public, who sees which
card), :mod:`solrace.protocol.messages` (wire messages), :mod:`solrace.protocol.dispatch` (command →
effects, pure), :mod:`solrace.service.hub` (the races held here; commit, then emit), a
:class:`~solrace.store.base.Store` and a :class:`~solrace.bus.base.Bus`, and the I/O shell:
:mod:`solrace.net.connection`, :mod:`solrace.net.web`, :mod:`solrace.service.timers`. Only the
shell awaits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import solrules
from websockets.asyncio.server import Server, ServerConnection, serve

from solrace import settings
from solrace.bus.base import Bus
from solrace.bus.memory_bus import MemoryBus
from solrace.core.arena import Arena
from solrace.core.keys import KEY_BYTES, MasterKey, net_tag
from solrace.core.quotas import Caps
from solrace.core.race import Race
from solrace.core.tournament_parts import TOutcome
from solrace.core.units import Unit
from solrace.net import raw_frames
from solrace.net.answers import SecureConnection, player_cookie
from solrace.net.connection import Connection, Output
from solrace.net.web import Routes, client_dir
from solrace.protocol import codec, internal, messages
from solrace.runtime.supervisor import Supervisor, awaiting
from solrace.service import collector
from solrace.service.accounts import Accounts
from solrace.service.arena_schedule import ArenaSchedule
from solrace.service.challenges import Challenges
from solrace.service.closures import Closures
from solrace.service.daily import DailyDeals
from solrace.service.fairplay import FAIRPLAY_CLIENT, Referee
from solrace.service.front import Front
from solrace.service.house_bots import HouseBots
from solrace.service.hub import Hub
from solrace.service.matchmaker import LocalQueues, Matchmaker
from solrace.service.moderation import Moderation
from solrace.service.online import Online
from solrace.service.scoring import Scorer
from solrace.service.showcase import Showcase, visitor_id
from solrace.settings import (
    CLOSE_TIMEOUT,
    COUNTDOWN_S,
    HTTP_RATE,
    MATCHED_TIMEOUT_MS,
    MAX_FRAME_HARD,
    MAX_LOBBIES,
    MAX_RACES,
    OPEN_TIMEOUT,
    RATE_LIMIT,
    SHUTDOWN_GRACE,
    WRITE_LIMIT,
)
from solrace.solver.assist import Assist
from solrace.solver.deal_source import DealSource
from solrace.solver.jobs import Solver
from solrace.solver.pool import Pool
from solrace.store.base import Store
from solrace.store.player_base import PlayerStore

if TYPE_CHECKING:  # Redis is imported only when the server runs on it
    from solrace.cluster.processes import Cluster

log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


class App:
    """One server process: its hub, its connections and its HTTP routes."""

    def __init__(
        self,
        store: Store,
        bus: Bus | None = None,
        *,
        countdown: float = COUNTDOWN_S,
        rate_limit: float = RATE_LIMIT,
        max_races: int = MAX_RACES,
        client: Path | None = None,
        clock: Callable[[], int] = now_ms,
        masking: bool = True,
        max_lobbies: int = MAX_LOBBIES,
        max_connections: int = 1 << 30,
        allow_origins: tuple[str, ...] = (),
        trust_proxy: bool = False,
        http_rate: float = HTTP_RATE,
        solver: Solver | None = None,
        abandon_after: float | None = None,
        caps: Caps | None = None,
        pool: Pool | None = None,
        demo_catalogue: bool = False,
        deals: DealSource | None = None,
        supervisor: Supervisor | None = None,
        players: PlayerStore | None = None,
        tend_gc: bool = False,
        master_key: MasterKey | None = None,
        arenas: bool = False,
        builder_nice: int | None = None,
    ) -> None:
        self.store = store
        #: The deployment's secret (solrace.core.keys); a server given none makes one that
        #: lasts as long as the process (tests, a demo).
        self.master_key = master_key if master_key is not None else MasterKey(
            secrets.token_bytes(KEY_BYTES))
        #: Freeze what the process holds for the garbage collector (solrace.service.collector):
        #: for ``solrace serve``, not for a server inside another program (a test run).
        self.tend_gc = tend_gc
        self.bus: Bus = bus if bus is not None else MemoryBus()
        self.solver = solver
        #: Every background task of this process (solrace.runtime.supervisor).
        self.supervisor = supervisor if supervisor is not None else Supervisor()
        if caps is None:
            caps = Caps(races=max_races, lobbies=max_lobbies, connections=max_connections)
        #: The private pool of winnable deals (solrace.solver.pool); None: no winnable deals,
        #: but from the public catalogue with ``demo_catalogue``.
        self.pool = pool
        if deals is None:
            deals = DealSource(pool=pool, demo=demo_catalogue, games=solrules.GAMES)
        assist = Assist(solver, deals, self.bus.publish)
        self.hub = Hub(store, self.bus, clock, assist=assist, supervisor=self.supervisor,
                       countdown=countdown, masking=masking, caps=caps)
        self.hub.net_key = self.master_key.derive("net")
        if abandon_after is not None:
            self.hub.abandon_ms = int(abandon_after * 1000)
        self.output = Output()
        store.on_commit = self.output.uncork
        self.bus.before_crowd = self.output.express
        self.rate_limit = rate_limit
        self.connections = 0
        #: Open connections per client address (solrace.core.quotas: each address's share).
        self.by_address: dict[str, int] = {}
        self.routes = Routes(
            self.hub,
            client if client is not None else client_dir(),
            connections=lambda: self.connections,
            from_address=lambda address: self.by_address.get(address, 0),
            allow_origins=allow_origins,
            trust_proxy=trust_proxy,
            http_rate=http_rate,
            # Read when the app is made, not imported: a test sets it for the apps it makes.
            builder_nice=settings.BUILDER_NICE if builder_nice is None else builder_nice,
        )
        self.clients: set[Connection] = set()
        self.hub.on_health = self.service
        #: With several processes on Redis (``solrace.cluster.processes``); None in the
        #: embedded server.
        self.cluster: Cluster | None = None
        #: This process's connections by id (a ``paired`` for one of them may come from
        #: anywhere).
        self.by_id: dict[int, Connection] = {}
        # Players, one click to a race, the daily deal: with the store's players (the same
        # SQLite file, or the same Redis) unless given.
        if players is None:
            make = getattr(store, "players", None)
            players = make() if make is not None else None
        self.players = players
        net = self.master_key.derive("net")
        self.accounts = Accounts(players, clock, self.hub.reply_later,
                                 tag=lambda address: net_tag(net, address))
        self.house_bots = HouseBots(self.hub, solver)
        self.hub.house_bots = self.house_bots
        self.matchmaker = Matchmaker(self.hub, self.accounts, self.house_bots, LocalQueues(),
                                     self.deliver)
        self.hub.on_race_over = self.matchmaker.race_over
        moderation_store = getattr(store, "moderation", None)
        self.moderation_store = moderation_store() if moderation_store is not None else None
        self.daily = (DailyDeals(self.hub, players, self.accounts, self.matchmaker,
                                 self.moderation_store.closed
                                 if self.moderation_store is not None else None)
                      if players is not None else None)
        ms = self.moderation_store
        self.referee = (Referee(players, self._line if solver is not None else None, clock,
                                line_from=self._line_from if solver is not None else None,
                                closure=ms.closure if ms is not None else None)
                        if players is not None else None)
        self.scorer = (Scorer(players, self.hub.load, self.bus.publish, self.supervisor,
                              self.referee, clock, ms.closed if ms is not None else None)
                       if players is not None else None)
        self.hub.scorer = self.scorer
        # Rated pairing pauses after repeated walkouts, and ends with a closure.
        if self.referee is not None:
            self.matchmaker.rated_gate = self.referee.rated_gate
        self.moderation = (Moderation(self.moderation_store, players, clock,
                                      self.hub.reply_later, self.bus.publish, self.hub.get)
                           if players is not None and self.moderation_store is not None
                           else None)
        #: Closed accounts out of the tournament and arena tables run here.
        self.closures = (Closures(ms.closed, self._units_held, self._record_unit, clock,
                                  lambda: self.hub.store.healthy)
                         if ms is not None else None)
        if self.moderation is not None and self.closures is not None:
            self.moderation.on_closed = self.closures.close_here
        #: Which connections speak for which player (a challenge reaches all his pages).
        self.online = Online(self.hub.reply_later, self.supervisor)
        self.online.on_seated = self.matchmaker.seated
        self.challenges = (Challenges(self.hub, self.accounts, self.matchmaker, self.online)
                           if players is not None else None)
        self.front = Front(self.accounts, self.matchmaker, self.daily, self.moderation,
                           self.challenges, self.online)
        #: The house's arenas (``arenas``: keep its schedule) and the list the pages show.
        self.arena_schedule = ArenaSchedule(self.hub, enabled=arenas)
        self.routes.arenas_listed = self.arena_schedule.listed
        self.routes.front = self.front
        #: The home page's live figures (GET /api/live): players online, races running, the
        #: featured race.
        self.showcase = Showcase(self._races_run_here, self._visitors, self._public_tournament,
                                 clock)
        self.routes.showcase = self.showcase

    def _units_held(self) -> list[Unit]:
        return [*self.hub.organizer.tournaments.values(), *self.hub.arenas.values()]

    def _record_unit(self, unit: Unit, out: TOutcome) -> None:
        if isinstance(unit, Arena):
            self.hub.arena_director.record(unit, out)
        else:
            self.hub.organizer.record(unit, out)

    def _races_run_here(self) -> list[Race]:
        owns = self.hub.owns
        return [race for race_id, race in self.hub.races.items() if owns(race_id)]

    def _visitors(self) -> list[str]:
        # A tab opened before its browser became a player does not know him yet: it is the
        # player of its key if another tab of the same browser knows him.
        players = {c.key: c.who.id for c in self.clients if c.who is not None and c.key}
        return [visitor_id(c.id, c.key, c.who.id if c.who is not None
                           else players.get(c.key) if c.key else None)
                for c in self.clients]

    def _public_tournament(self, tid: str) -> bool:
        t = self.hub.tournaments.get(tid)
        return t is not None and t.settings.code is None

    async def _line(self, game: str, seed: int) -> tuple[list[str], int] | None:
        """The solver's winning line from a deal and its nodes (for the fair-play signals),
        or None."""
        assert self.solver is not None
        return await self.solver.line(game, seed)

    async def _line_from(self, game: str, seed: int, moves: list[str], key: str
                         ) -> list[str] | None:
        """The solver's winning line from the position after ``moves`` (a fair-play
        re-solve: :class:`~solrace.core.fairplay.Tracker`), or None. In the solver's queue of
        analyses, in one share for all of fair play and within it in turns by result (``key``),
        so re-solves never hold a hint back by more than one of them, nor an address's
        analysis by more than fair play's share."""
        assert self.solver is not None
        answer = await self.solver.position(game, seed, moves, settings.FAIRPLAY_RESOLVE_NODES,
                                            settings.FAIRPLAY_RESOLVE_SECONDS,
                                            client=FAIRPLAY_CLIENT, player=key)
        line = list(answer.get("line") or ()) if answer.get("verdict") == "won" else []
        return line or None

    def run_on_redis(self, cluster: Cluster) -> None:
        """This process joins several on Redis (see :mod:`solrace.cluster`): the store tells
        the cluster when a write shows that another process owns a unit, the bus hands it
        the messages of its inbox and the units' control messages and asks it who follows a
        race elsewhere, and the hub asks it which races it runs and publishes with each
        commit. The wiring is here, in one place, so that no part holds another."""
        self.cluster = cluster
        cluster.store.on_lost = cluster.lost
        cluster.bus.on_inbox = cluster.inbox
        cluster.bus.on_control = cluster.control
        cluster.bus.remote_followers = cluster.remote_followers
        cluster.bus.races = self.hub.get
        self.hub.owns = cluster.owns
        self.hub.publish_with_commit = cluster.publish_with_commit
        from solrace.cluster.queues import RedisQueues

        self.matchmaker.queues = RedisQueues(cluster.store.client, cluster.pid)
        self.matchmaker.process = cluster.pid
        from solrace.cluster.live import SharedFigures

        self.showcase.shared = SharedFigures(cluster.store.client, cluster.pid)

        from solrace.cluster.challenges import RedisBook
        from solrace.cluster.reach import RedisReach

        if self.challenges is not None:
            self.challenges.book = RedisBook(cluster.store.client)
        self.online.remote = RedisReach(cluster.store.client, cluster.pid, cluster.bus.send_to)
        online = self.online

        def inbox(msg: internal.Inbox) -> None:
            if isinstance(msg, internal.ToPlayer):
                online.delivered(msg.player, msg.payload, msg.seated)
            else:
                cluster.inbox(msg)

        cluster.bus.on_inbox = inbox

    async def start(self) -> None:
        """Before serving: join the service on Redis (if any), then take back the races."""
        if self.cluster is not None:
            await self.cluster.start()
        await self.hub.recover()
        if self.pool is not None:
            self.pool.start()
        if self.scorer is not None:
            self.scorer.start()
        self.arena_schedule.start()
        if self.closures is not None:
            self.supervisor.spawn(self.closures.run(), "closed accounts out of the tables")
        self.supervisor.spawn(self.matchmaker.passes(), "quick-race pairing passes")
        if self.cluster is not None:
            self.supervisor.spawn(self._recover_seekers(), "seekers of dead processes")
            self.supervisor.spawn(self.showcase.run(), "live figures")
        if self.tend_gc:
            self.supervisor.spawn(collector.tend(), "garbage collector")

    async def _recover_seekers(self) -> None:
        """With Redis: every few seconds, seekers a dead process took out of a queue go back
        to it (solrace.cluster.queues)."""
        from solrace.cluster.queues import RedisQueues

        queues = self.matchmaker.queues
        assert isinstance(queues, RedisQueues)
        while True:
            await asyncio.sleep(MATCHED_TIMEOUT_MS / 2000)
            try:
                await queues.recover(self.hub.clock())
            except Exception as exc:
                log.warning("cannot look for seekers to give back: %s", exc)

    def deliver(self, process: str, conn_id: int, msg: dict[str, Any]) -> None:
        """Send ``msg`` to connection ``conn_id`` of ``process`` (this one, or another on
        Redis), in order with that connection's replies when it is here."""
        if self.cluster is None or process == self.cluster.pid:
            conn = self.by_id.get(conn_id)
            if conn is not None:
                self.hub.reply_later(conn, msg)
            return
        self.cluster.bus.send_to(process, internal.Deliver(conn_id, codec.encode_json(msg)))

    async def stop(self) -> None:
        """Stop every part, in order. A part that takes more than a second is logged with its
        time: a process slow to go holds a rolling restart up, and this says which part did."""
        if self.scorer is not None:
            self.scorer.stop()
        self.arena_schedule.stop()
        self.house_bots.close()
        shared = self.showcase.shared
        if shared is not None:  # its figures go at once, not at their expiry
            with contextlib.suppress(Exception):
                await asyncio.wait_for(shared.leave(), 0.5)
        if self.challenges is not None:
            self.challenges.close()
        if self.cluster is not None:
            async with slow_step("letting the races go"):
                await self.cluster.stop()
        if self.pool is not None:
            async with slow_step("stopping the pool"):
                await self.pool.stop()
        if self.solver is not None:
            async with slow_step("stopping the solver"):
                await self.solver.stop()
        self.close()
        async with slow_step("cancelling background tasks"):
            await self.supervisor.close()

    # Shortcuts for tests and tools.
    @property
    def races(self) -> dict[str, Any]:
        return self.hub.races

    @property
    def max_races(self) -> int:
        return self.hub.max_races

    @max_races.setter
    def max_races(self, value: int) -> None:
        self.hub.max_races = value

    def close(self) -> None:
        self.routes.close()
        self.accounts.close()
        if self.pool is not None:
            self.pool.close()
        if self.solver is not None:
            self.solver.close()
        self.hub.close()

    def service(self, healthy: bool) -> None:
        """Tell every client whether the server can save moves (the pages show it)."""
        msg = messages.service(healthy)
        for client in self.clients:
            client.send(msg)

    async def handler(self, ws: ServerConnection) -> None:
        address = self.routes.address(ws, ws.request)
        router = self.cluster.route if self.cluster is not None else None
        conn = Connection(self.hub, self.output, ws, self.rate_limit, self.supervisor, address,
                          router, self.front)
        if ws.request is not None:
            await self.accounts.connected(conn, player_cookie(ws.request.headers))
        self.online.track(conn)
        self.by_id[conn.id] = conn
        self.connections += 1
        self.by_address[address] = self.by_address.get(address, 0) + 1
        self.clients.add(conn)
        if self.cluster is not None:
            self.cluster.joined(conn)
        if not self.store.healthy:
            conn.send(messages.service(False))
        try:
            await conn.run()
        finally:
            self.connections -= 1
            left = self.by_address[address] - 1
            if left:
                self.by_address[address] = left
            else:
                del self.by_address[address]
            self.clients.discard(conn)
            self.by_id.pop(conn.id, None)
            if self.cluster is not None:
                self.cluster.gone(conn)

    def serve(self, host: str, port: int) -> Any:
        """``websockets`` server context for this app (use ``async with``)."""
        return serve(
            self.handler,
            host,
            port,
            process_request=self.routes.process_request,
            compression=None,
            max_size=MAX_FRAME_HARD,  # beyond limits.MAX_FRAME: error; beyond this: close
            max_queue=16,
            write_limit=WRITE_LIMIT,
            close_timeout=CLOSE_TIMEOUT,
            # An HTTP answer is worked out inside the opening handshake (process_request):
            # a replay built in the builder's process must not be cut off by websockets'
            # default of 10 s on a loaded machine.
            open_timeout=OPEN_TIMEOUT,
            server_header="solrace",
            create_connection=SecureConnection,
        )


async def run_server(
    app: App, host: str, port: int, ready: Callable[[Server], None] | None = None
) -> None:
    """Serve until cancelled (the CLI cancels on SIGINT/SIGTERM), then close cleanly: stop
    accepting, close connections with 1001, commit what is queued, let go of the races this
    process runs (with Redis: another process takes them at once)."""
    await app.start()
    try:
        server: Server = await app.serve(host, port)
        try:
            if ready is not None:
                ready(server)
            await server.serve_forever()
        finally:
            async with slow_step("closing the connections"):
                await close_server(server, SHUTDOWN_GRACE)
    finally:
        await app.stop()


async def close_server(server: Server, grace: float) -> None:
    """Close ``server`` (its connections get 1001), waiting ``grace`` seconds at most for the
    connection handlers to end; those still running then are logged with their stacks and
    cancelled. A client that opened a TCP connection and sent nothing, or a handler waiting
    on something that never comes, must not hold a rolling restart up."""
    server.close()
    try:
        await asyncio.wait_for(asyncio.shield(server.wait_closed()), grace)
        return
    except TimeoutError:
        pass
    stuck = raw_frames.handler_tasks(server)
    for task in stuck:
        log.warning("shutdown: a connection handler still running after %.1f s, cancelled: %s",
                    grace, awaiting(task))
        task.cancel()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(server.wait_closed()), grace)


@contextlib.asynccontextmanager
async def slow_step(what: str) -> AsyncIterator[None]:
    """Log ``what`` with its time if it takes more than a second (for shutdown)."""
    start = time.monotonic()
    try:
        yield
    finally:
        took = time.monotonic() - start
        if took > 1.0:
            log.warning("shutdown: %s took %.1f s", what, took)
