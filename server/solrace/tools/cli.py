"""Command line: ``solrace serve`` (the race server), ``solrace bot`` (a bot racer),
``solrace seeds`` (catalogues of winnable deals) and ``solrace mod`` (moderators:
:mod:`solrace.tools.mod_cli`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import faulthandler
import logging
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from websockets.asyncio.server import Server

from solrace.settings import (
    ABANDON_MS,
    BUILDER_NICE,
    CONNECTIONS_PER_ADDRESS,
    COUNTDOWN_S,
    ENTRANTS_PER_ADDRESS,
    FD_RESERVE,
    FINISHED_TTL_DAYS,
    HINT_SECONDS,
    HTTP_RATE,
    MAX_LOBBIES,
    MAX_RACES,
    MAX_TOURNAMENTS,
    PAR_SECONDS,
    POOL_NODES,
    POOL_SECONDS,
    POOL_SIZE,
    RACES_PER_ADDRESS,
    RATE_LIMIT,
    SHUTDOWN_DEADLINE,
    SHUTDOWN_TASKS_AFTER,
    SOLVER_NICE,
    TOURNAMENTS_PER_ADDRESS,
)
from solrace.tools import mod_cli

if TYPE_CHECKING:
    from solrace.core.keys import MasterKey


def _serve(args: argparse.Namespace) -> int:
    import solrules

    from solrace.core.quotas import Caps
    from solrace.net.app import App, run_server
    from solrace.net.web import client_dir
    from solrace.runtime.supervisor import Supervisor, awaiting
    from solrace.store.sqlite_store import SQLiteStore
    from solrace.tools.key_file import KeyFileError

    nofile = raise_fd_limit()
    max_connections = args.max_connections or max(16, nofile - FD_RESERVE)
    redis_url = args.redis_cluster or args.redis or os.environ.get("SOLRACE_REDIS", "")
    if args.redis_cluster and not redis_url.startswith("redis+cluster://"):
        redis_url = "redis+cluster://" + redis_url.split("://", 1)[-1]
    try:
        master_key = _master_key(args, redis_url)
    except KeyFileError as exc:
        print(f"solrace: {exc}", file=sys.stderr, flush=True)
        return 2
    # One supervisor for every background task of the process (solrace.runtime.supervisor).
    supervisor = Supervisor()
    storage: Any
    bus: Any = None
    if redis_url:
        # Imported only here: the embedded server never loads redis.
        from solrace.bus.redis_bus import RedisBus
        from solrace.cluster.processes import new_pid
        from solrace.runtime.redis_connect import connect
        from solrace.store.redis_store import RedisStore

        pid = new_pid()
        client = connect(redis_url)
        storage = RedisStore(client, pid, finished_ttl_ms=int(args.finished_ttl * 86400_000),
                             writer=connect(redis_url, retries=0), supervisor=supervisor,
                             keeper=connect(redis_url, retries=0))
        bus = RedisBus(client, pid, supervisor=supervisor)
    else:
        storage = SQLiteStore(args.db)
    solver = None
    from solrace.solver.jobs import Solver

    if args.hint_seconds > 0 or args.par_seconds > 0:
        solver = Solver(hint_seconds=args.hint_seconds, par_seconds=args.par_seconds,
                        nice=args.solver_nice, supervisor=supervisor)
    from solrace.solver.pool import Pool

    refill = None
    if args.pool > 0 and not args.demo_catalogue:
        # Its own solver process, at the lowest priority: nobody waits for a refill.
        refill = Solver(hint_seconds=0, par_seconds=args.pool_seconds, par_nodes=POOL_NODES,
                        nice=args.pool_nice, supervisor=supervisor)
    pool = None if args.demo_catalogue else Pool(storage, solrules.GAMES, refill, args.pool,
                                                 supervisor=supervisor, key=master_key)
    caps = Caps(races=args.max_races, races_per_address=args.races_per_address,
                lobbies=args.max_lobbies, tournaments=args.max_tournaments,
                tournaments_per_address=args.tournaments_per_address,
                entrants_per_address=args.entrants_per_address,
                connections=max_connections,
                connections_per_address=args.connections_per_address)
    app = App(
        storage,
        bus,
        countdown=args.countdown,
        rate_limit=args.rate_limit,
        client=Path(args.client_dir) if args.client_dir else client_dir(),
        masking=not args.bench_unmasked,
        caps=caps,
        allow_origins=tuple(args.allow_origin),
        trust_proxy=args.trust_proxy,
        http_rate=args.http_rate,
        solver=solver,
        abandon_after=args.abandon_after,
        pool=pool,
        demo_catalogue=args.demo_catalogue,
        supervisor=supervisor,
        tend_gc=True,
        master_key=master_key,
        arenas=args.arenas == "on",
        builder_nice=args.builder_nice,
    )
    if redis_url:
        from solrace.cluster.processes import Cluster

        app.run_on_redis(Cluster(app.hub, storage, bus, pid, app.supervisor,
                                 redis_url=redis_url))

    def ready(server: Server) -> None:
        host, port = next(iter(server.sockets)).getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"solrace serving http://{shown}:{port}/", flush=True)

    gc_times = _gc_timing() if os.environ.get("SOLRACE_GC_STATS") else None

    async def main() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()

        def stop() -> None:
            # A shutdown still running this long prints every thread's stack and exits at once
            # (once; nothing if the process is gone by then). It was seen, rarely, with the
            # event loop stuck and no step of the shutdown logging itself: whatever that is, a
            # process slow to go holds a rolling restart up, and every write it acknowledged
            # is durable (what it had not is sent again by its clients, to the next owner).
            faulthandler.dump_traceback_later(SHUTDOWN_DEADLINE, exit=True)
            loop.call_later(SHUTDOWN_TASKS_AFTER, tasks_left)
            task.cancel()

        def tasks_left() -> None:
            # A shutdown stuck on an await that never completes leaves the loop idle, and the
            # threads' stacks at the deadline show only the loop: this names the await.
            for pending in asyncio.all_tasks(loop):
                logging.getLogger("solrace").warning(
                    "shutdown: still running after %.1f s: %s", SHUTDOWN_TASKS_AFTER,
                    awaiting(pending))

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        with contextlib.suppress(asyncio.CancelledError):
            await run_server(app, args.host, args.port, ready)

    try:
        loop = _uvloop() if args.uvloop is not False else None
        if args.uvloop and loop is None:
            print("solrace: --uvloop: uvloop is not installed", file=sys.stderr, flush=True)
            return 2
        if loop is not None:
            loop(main())
        else:
            asyncio.run(main())
    except Exception as exc:
        if not redis_url or not _is_redis_error(exc):
            raise
        shown = redis_url.split("@")[-1]
        print(f"solrace: cannot reach Redis at {shown}: {exc}", file=sys.stderr, flush=True)
        return 2
    finally:
        storage.close()
        if gc_times is not None:
            print("solrace gc: " + ", ".join(
                f"generation {g}: {n} collections, {ms:.0f} ms (longest {top:.1f} ms), "
                f"{freed} objects freed" for g, (n, ms, top, freed) in enumerate(gc_times)),
                file=sys.stderr, flush=True)
    print("solrace stopped", flush=True)
    return 0


def _master_key(args: argparse.Namespace, redis_url: str) -> MasterKey:
    """The deployment's master key, read from its file (made if missing: see
    :mod:`solrace.tools.key_file`). On Redis the file must be named: every process must seal
    and tag with one key, and a key each would split them silently (each dropping the
    others' pool, the same network tagged apart)."""
    from solrace.tools.key_file import KeyFileError, default_for, load_or_create

    named = args.key_file or os.environ.get("SOLRACE_KEY_FILE", "")
    if not named and redis_url:
        raise KeyFileError(
            "on Redis every process needs the same master key: give its file with --key-file "
            "PATH (or SOLRACE_KEY_FILE), the same file for every process (made at the first "
            "start if missing; compose.yaml mounts one in every replica)")
    path = Path(named) if named else default_for(args.db)
    store_exists = not redis_url and Path(args.db).exists()
    key, made = load_or_create(path)
    if made and store_exists:
        logging.getLogger("solrace").warning(
            "made a new master key in %s for a database that had none here: the pool's deals "
            "sealed under another key are dropped and solved again, network tags start anew",
            path)
    elif made:
        logging.getLogger("solrace").warning(
            "made a new master key in %s%s: keep it out of the database's backups, or back it "
            "up apart", path, " (every process on this Redis must read this file)"
            if redis_url else "")
    return key


def _is_redis_error(exc: BaseException) -> bool:
    from redis.exceptions import RedisError

    return isinstance(exc, (RedisError, OSError))


def raise_fd_limit() -> int:
    """Raise the open-file limit to its hard limit (each connection is a file descriptor);
    the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


class RepeatFilter(logging.Filter):
    """Lets the same message through at most ``burst`` times per ``window`` seconds, then says
    once how many it held back: a failure that repeats (say, out of file descriptors) cannot
    flood the log."""

    def __init__(self, burst: int = 10, window: float = 60.0) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self.seen: dict[tuple[str, object], list[float]] = {}  # key -> [window start, count]

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        now = time.monotonic()
        entry = self.seen.get(key)
        if entry is None or now - entry[0] > self.window:
            held = 0 if entry is None else int(entry[1]) - self.burst
            self.seen[key] = [now, 1]
            if len(self.seen) > 1000:
                self.seen.clear()
            if held > 0:
                record.msg = f"{record.msg} (and {held} more like it held back)"
            return True
        entry[1] += 1
        return entry[1] <= self.burst


def _bot(args: argparse.Namespace) -> int:
    from solrace.tools.bot import play

    args.url = args.url or ["ws://127.0.0.1:8080/ws"]
    state = asyncio.run(
        play(
            args.url if len(args.url) > 1 else args.url[0],
            args.race,
            name=args.name,
            policy=args.policy,
            delay=1 / args.pace if args.pace else args.delay,
            max_moves=args.max_moves,
            token=args.token,
        )
    )
    print(f"{args.name}: {state['progress']['foundation']}/{state['progress']['total']} "
          f"after {state['seq']} actions", flush=True)
    return 0


def _gc_timing() -> list[list[float]]:
    """For benchmarks (``SOLRACE_GC_STATS=1``): per generation, the collector's runs, their
    total and their longest milliseconds, and the objects they freed, printed when the server
    stops."""
    import gc

    times: list[list[float]] = [[0, 0.0, 0.0, 0] for _ in range(3)]
    started = [0.0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
            return
        ms = (time.perf_counter() - started[0]) * 1000
        row = times[info["generation"]]
        row[0] += 1
        row[1] += ms
        row[2] = max(row[2], ms)
        row[3] += info["collected"]

    gc.callbacks.append(watch)
    return times


def _uvloop() -> Callable[[Coroutine[Any, Any, None]], None] | None:
    """uvloop's ``run``, or None where it is not installed (it is a dependency on Linux and
    macOS only)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.run


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="solrace", description="Race server for patience games")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the race server")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8080, help="0 picks a free port (printed)")
    s.add_argument("--db", default="./solrace.db", help="SQLite file (the embedded default)")
    s.add_argument("--key-file", default="", metavar="PATH",
                   help="the master key's file (or SOLRACE_KEY_FILE): 32 random bytes that seal "
                        "the pool's upcoming deals and tag networks, kept outside the store; "
                        "made at the first start if missing (0600). Default: beside the "
                        "database, DB.key; required with --redis (the same file for every "
                        "process)")
    s.add_argument("--redis", default="", metavar="URL",
                   help="join the service on this Redis, e.g. redis://127.0.0.1:6379/0 "
                        "(or SOLRACE_REDIS): races are stored there and shared by every "
                        "process; --db is not used")
    s.add_argument("--redis-cluster", default="", metavar="URL",
                   help="the same on a Redis Cluster: redis://HOST:PORT of any node "
                        "(or SOLRACE_REDIS=redis+cluster://HOST:PORT)")
    s.add_argument("--finished-ttl", type=float, default=FINISHED_TTL_DAYS, metavar="DAYS",
                   help="with Redis: finished races expire this long after their end")
    s.add_argument("--rate-limit", type=float, default=RATE_LIMIT, metavar="MSGS_PER_S",
                   help="messages per second per connection, bursts of twice that; 0: off")
    s.add_argument("--max-races", type=int, default=MAX_RACES, help="unfinished races at once")
    s.add_argument("--races-per-address", type=int, default=RACES_PER_ADDRESS,
                   help="unfinished races one client address may have created")
    s.add_argument("--max-lobbies", type=int, default=MAX_LOBBIES,
                   help="races not started yet per client address and per connection")
    s.add_argument("--max-tournaments", type=int, default=MAX_TOURNAMENTS,
                   help="unfinished tournaments at once")
    s.add_argument("--tournaments-per-address", type=int, default=TOURNAMENTS_PER_ADDRESS,
                   help="unfinished tournaments one client address may have created")
    s.add_argument("--entrants-per-address", type=int, default=ENTRANTS_PER_ADDRESS,
                   help="entrants of one tournament joined from one client address")
    s.add_argument("--connections-per-address", type=int, default=CONNECTIONS_PER_ADDRESS,
                   help="open WebSocket connections from one client address")
    s.add_argument("--max-connections", type=int, default=0,
                   help="open WebSocket connections at once; more get 503 "
                        "(default: the file-descriptor limit, raised to its hard limit, "
                        f"minus {FD_RESERVE})")
    s.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                   help="a page origin besides this server's own that may open a socket, "
                        "e.g. https://example.org (repeatable)")
    s.add_argument("--trust-proxy", action="store_true",
                   help="behind a reverse proxy: take client addresses from X-Forwarded-For")
    s.add_argument("--http-rate", type=float, default=HTTP_RATE, metavar="REQS_PER_S",
                   help="HTTP requests per second per client address, bursts of twice that; 0: off")
    s.add_argument("--hint-seconds", type=float, default=HINT_SECONDS, metavar="SECONDS",
                   help="the solver's time for one hint (races created with hints); 0: no hints")
    s.add_argument("--par-seconds", type=float, default=PAR_SECONDS, metavar="SECONDS",
                   help="the solver's time for the par of a revealed deal not in the "
                        "catalogue; 0: par of catalogued deals only")
    s.add_argument("--solver-nice", type=int, default=SOLVER_NICE, metavar="N",
                   help="niceness of the solver's process for hints, par and post-race "
                        "analyses (its answers have time budgets: a machine busy at a higher "
                        "priority leaves more positions unknown)")
    s.add_argument("--builder-nice", type=int, default=BUILDER_NICE, metavar="N",
                   help="niceness of the process that builds the replays of long races (a "
                        "machine busy at a higher priority makes big replays wait)")
    s.add_argument("--pool", type=int, default=POOL_SIZE, metavar="DEALS",
                   help="winnable deals kept solved and ready per game, in the store (shared "
                        "by every process on Redis), refilled in the background when below "
                        "half; 0: solve none here (deals already in the pool are still dealt)")
    s.add_argument("--pool-seconds", type=float, default=POOL_SECONDS, metavar="SECONDS",
                   help="the solver's time for one fresh deal of the pool")
    s.add_argument("--pool-nice", type=int, default=19, metavar="N",
                   help="niceness of the pool's solver process (its time is a wall-clock "
                        "budget: on a machine busy at a higher priority it keeps no deal)")
    s.add_argument("--demo-catalogue", action="store_true",
                   help="an offline demo: deal winnable races from the public catalogues "
                        "shipped with solrace instead of the private pool (anyone can look "
                        "those deals up; races say so)")
    s.add_argument("--countdown", type=float, default=COUNTDOWN_S, help="seconds before the start")
    s.add_argument("--arenas", choices=["on", "off"], default="on",
                   help="keep the house's schedule of arenas (an arena of each game every "
                        "hour, a longer one every day: solrace.service.arena_schedule)")
    s.add_argument("--abandon-after", type=float, default=None, metavar="SECONDS",
                   help="a running race every racer still racing has left ends this long "
                        f"after (default {ABANDON_MS // 1000})")
    s.add_argument("--client-dir", default=None, help="serve the browser client from here")
    s.add_argument("--uvloop", action=argparse.BooleanOptionalAction, default=None,
                   help="run on uvloop, a faster event loop (about 15%% less CPU per move; "
                        "default: where it is installed, as it is with solrace on Linux)")
    s.add_argument("--log-level", default="WARNING")
    # For bench/race_bench.py only: measures what the views rule costs by turning it off.
    s.add_argument("--bench-unmasked", action="store_true", help=argparse.SUPPRESS)
    s.set_defaults(func=_serve)
    mod_cli.add_parser(sub)
    b = sub.add_parser("bot", help="join a race and play it")
    b.add_argument("--url", action="append", default=None,
                   help="server address (repeat it: the bot moves to the next one if a "
                        "server goes away); default ws://127.0.0.1:8080/ws")
    b.add_argument("--race", required=True)
    b.add_argument("--name", default="bot")
    b.add_argument("--token", default=None, help="resume this racer instead of joining anew")
    b.add_argument("--policy", choices=["random", "greedy", "solver"], default="greedy",
                   help="random: any legal move; greedy: cards home first; solver: plays a "
                        "winning line found from what it has seen, planning again when a "
                        "card turned up is not the one it guessed")
    b.add_argument("--pace", type=float, default=0.0, metavar="MOVES_PER_S",
                   help="moves per second (sets --delay to 1/PACE): a bot of chosen speed")
    b.add_argument("--delay", type=float, default=0.2, help="seconds between moves")
    b.add_argument("--max-moves", type=int, default=2000)
    b.add_argument("--log-level", default="WARNING")
    b.set_defaults(func=_bot)
    from solrace.solver.catalogue import add_parser as add_seeds  # ``solrace seeds build|report``

    add_seeds(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # The process id: several processes on one Redis (or one machine) write interleaved logs.
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(RepeatFilter())
    result: int = args.func(args)
    return result
