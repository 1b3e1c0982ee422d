"""The leases' keeper: a thread that renews this process's leases and its ``alive`` key.

A lease lasts ``LEASE_MS`` (1.5 s) so that a dead process's races are taken over within two
seconds. Renewed by the event loop, a lease was lost whenever the loop fell 1.2 s behind — on a
machine running three times more work than it has cores, a busy process lost its races to the
other one, which then lost them back (bench/pairing_bench.py: writes fenced, visitors lost).
So the renewals run in a thread of their own, with their own connection to Redis, every
``RENEW_EVERY`` seconds, whatever the loop is doing — but only as long as the loop shows it is
alive (:meth:`Keeper.beat`, called by the loop every ``RENEW_EVERY`` seconds) within
``LOOP_GRACE`` seconds: a loop stuck for longer lets its leases lapse, as a dead process does.
A killed process renews nothing (the thread dies with it); a paused one (SIGSTOP) neither, and
when it wakes its commits are fenced (the lease's epoch changed).

The thread only touches Redis and reads a copy of the store's ``epochs``; what it learns (a
unit lost, Redis unreachable) goes back to the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import redis
from redis.exceptions import NoScriptError, RedisError

from solrace.runtime.redis_connect import is_cluster_url, key, proc_key
from solrace.settings import (
    ALIVE_MS,
    LEASE_MS,
    LOOP_GRACE,
    REDIS_CONNECT_TIMEOUT,
    REDIS_TIMEOUT,
    RENEW_EVERY,
)
from solrace.store.redis_scripts import RENEW

log = logging.getLogger(__name__)



class Keeper(threading.Thread):
    """Renews ``epochs`` (unit -> epoch, the store's, read as a copy) and the ``alive`` key of
    process ``pid`` on the Redis at ``url``. ``lost(unit, epoch)`` and ``failed(exc)`` are
    called in ``loop``."""

    def __init__(self, url: str, pid: str, epochs: dict[str, int],
                 loop: asyncio.AbstractEventLoop, lost: Callable[[str, int], None],
                 failed: Callable[[Exception], None]) -> None:
        super().__init__(name="lease keeper", daemon=True)
        self.url = url
        self.pid = pid
        self.epochs = epochs
        self.loop = loop
        self.on_lost = lost
        self.on_failed = failed
        self.stopping = threading.Event()
        self.last_beat = time.monotonic()
        self.renewals = 0

    def beat(self) -> None:
        """The loop is alive (called from the loop)."""
        self.last_beat = time.monotonic()

    def stop(self) -> None:
        self.stopping.set()

    def _client(self) -> Any:
        common: dict[str, Any] = {"socket_timeout": REDIS_TIMEOUT,
                                  "socket_connect_timeout": REDIS_CONNECT_TIMEOUT}
        if is_cluster_url(self.url):
            parts = urllib.parse.urlsplit(self.url)
            return redis.RedisCluster(host=parts.hostname or "127.0.0.1",
                                      port=parts.port or 6379, **common)
        return redis.Redis.from_url(self.url, **common)

    def run(self) -> None:
        client = self._client()
        cluster = isinstance(client, redis.RedisCluster)
        sha = ""
        try:
            while not self.stopping.wait(RENEW_EVERY):
                if time.monotonic() - self.last_beat > LOOP_GRACE:
                    continue  # the loop is stuck: let the leases lapse
                try:
                    if not sha:
                        sha = client.script_load(RENEW)
                    self._renew(client, cluster, sha)
                except NoScriptError:
                    sha = ""  # Redis restarted without its script cache: load it again
                except RedisError as exc:
                    self._call(self.on_failed, exc)
                except Exception:
                    log.exception("renewing leases failed")
        finally:
            client.close()

    def _renew(self, client: Any, cluster: bool, sha: str) -> None:
        epochs = self.epochs.copy()  # one C call: safe while the loop changes the dict
        units = list(epochs)
        alive = proc_key(self.pid, "alive")
        if cluster:
            results = [client.evalsha(sha, 1, key(u, "lease"), f"{self.pid}:{epochs[u]}",
                                      LEASE_MS) for u in units]
            client.set(alive, "1", px=ALIVE_MS)
        else:
            pipe = client.pipeline(transaction=False)
            for u in units:
                pipe.evalsha(sha, 1, key(u, "lease"), f"{self.pid}:{epochs[u]}", LEASE_MS)
            pipe.set(alive, "1", px=ALIVE_MS)
            results = pipe.execute(raise_on_error=False)
        for unit, result in zip(units, results, strict=False):
            if isinstance(result, NoScriptError):
                raise result
            if isinstance(result, Exception):
                raise result
            if result == 0:
                self._call(self.on_lost, unit, epochs[unit])
        self.renewals += 1

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # the loop is closed: the process is stopping
            self.stopping.set()
