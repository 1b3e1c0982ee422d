"""Connecting to Redis (a single server or a Redis Cluster), and the names of the keys.

Every key of one *unit* — a race on its own (later: a tournament with its races) — shares the
hash tag ``{unit}``, so that each script touches one slot and the same code runs on a Redis
Cluster, with units spread over its nodes.

Keys of unit ``U``::

    sr:{U}:lease          "pid:epoch" of the process that owns the unit (expires unless renewed)
    sr:{U}:epoch          counter: +1 each time the unit changes hands (fences older owners)
    sr:{U}:r:RACE         hash: the race's settings, seed, salt, finished_at
    sr:{U}:log:RACE       list: the race's accepted actions, msgpack [at, kind, player, data]
    sr:{U}:ev             sharded pub/sub channel: the unit's events, to every process
    sr:{U}:evs            stream (capped): the same events, to catch up after a lost link
    sr:{p:PID}:in         sharded channel: process PID's inbox (forwarded commands, replies)
    sr:{p:PID}:alive      set while process PID runs (expires if it dies)
    sr:units              set of unfinished units (the janitor's list; not atomic with the rest)
    sr:pool:GAME          list: solved winnable deals nobody has been dealt yet, msgpack
                          [seed, par moves] (taken with LPOP: once, by one process)
    sr:{pl}:toscore       set of races a player joined, not scored yet (the sweep's list)

Players and fair play (their keys: :mod:`solrace.store.redis_player_data`) share one hash
tag, ``{pl}``: scoring a race, clearing a result or closing an account updates several players
in one script. Pairing queues (:mod:`solrace.service.matchmaker`) are
``sr:{q}:…``, open challenges (:mod:`solrace.cluster.challenges`) ``sr:{ch}:…``, and each
player's processes (:mod:`solrace.cluster.reach`) ``sr:online:PLAYER``.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from solrace.core.units import unit_of as unit_of  # its home is the core; here for the Redis layers
from solrace.settings import MAX_REDIS_CONNECTIONS, REDIS_CONNECT_TIMEOUT, REDIS_TIMEOUT

RedisClient = Redis | RedisCluster


def key(unit: str, name: str) -> str:
    return f"sr:{{{unit}}}:{name}"


def proc_key(pid: str, name: str) -> str:
    return f"sr:{{p:{pid}}}:{name}"


UNITS = "sr:units"
TO_SCORE = "sr:{pl}:toscore"


def pool_key(game: str) -> str:
    return f"sr:pool:{game}"


def is_cluster_url(url: str) -> bool:
    return url.startswith("redis+cluster://")


def connect(url: str, retries: int = 2, connections: int = MAX_REDIS_CONNECTIONS) -> RedisClient:
    """A client for ``url``: ``redis://HOST:PORT/DB`` (one server) or
    ``redis+cluster://HOST:PORT`` (a Redis Cluster, any node as the entry point), with timeouts
    and a bounded retry policy: ``retries`` times on a lost connection or a timeout.

    The commits of the store go through a client with ``retries=0``: a command that timed out
    may still run once Redis answers again, so sending it again would do it twice (the store
    makes its commits idempotent as well, and decides itself what to do after a failure).
    ``connections``: at most this many at once (see below)."""
    common: dict[str, Any] = {
        "socket_timeout": REDIS_TIMEOUT,
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), retries),
    }
    # redis-py's pool fails a command with "Too many connections" once its connections are all
    # in use. A burst reached 100 (visitors seeking a race at once), then 1,024 (the 500
    # entrants of an arena's dead owner reconnecting at once to the survivor: bench/arena_bench.py):
    # past the bound, a command now waits for a connection (REDIS_TIMEOUT at most).
    if is_cluster_url(url):
        parts = urllib.parse.urlsplit(url)
        return RedisCluster(host=parts.hostname or "127.0.0.1", port=parts.port or 6379,
                            max_connections=connections, **common)
    pool = BlockingConnectionPool.from_url(url, max_connections=connections,
                                           timeout=REDIS_TIMEOUT, **common)
    return Redis(connection_pool=pool)


def node_client(client: RedisClient, channel: str) -> Redis:
    """A plain connection to the node that serves ``channel``'s slot (for sharded pub/sub),
    or the server itself."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(channel)
        if node is None:
            raise ConnectionError(f"no cluster node serves {channel}")
        return Redis(host=node.host, port=int(node.port),
                     socket_connect_timeout=REDIS_CONNECT_TIMEOUT)
    # A subscriber waits for messages as long as it takes: no socket timeout.
    given = client.connection_pool.connection_kwargs
    wanted = ("host", "port", "db", "username", "password", "path")
    return Redis(socket_connect_timeout=REDIS_CONNECT_TIMEOUT,
                 **{k: given[k] for k in wanted if given.get(k) is not None})
