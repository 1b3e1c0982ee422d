"""Real processes for the multi-process tests: ``redis-server`` (alone, or three as a Redis
Cluster) started on free ports in a temporary directory, and ``solrace serve`` processes."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from .conftest import T

REDIS = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")
#: The master key's file of the ``solrace serve`` processes started here (one deployment: on a
#: Redis, every process needs the same; the first one makes it), one per test process.
KEY_FILE = Path(tempfile.gettempdir()) / f"solrace-tests-{os.getpid()}.key"
atexit.register(lambda: KEY_FILE.unlink(missing_ok=True))


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(cluster_bus: bool = False) -> int:
    """A free port on loopback, to be bound later by another process; with ``cluster_bus``, one
    whose +10000 (a cluster node's bus port) is free too.

    Picked below the kernel's ephemeral range: a port the kernel hands out (a server bound to
    port 0, a connection's own end) never comes from there, so none can take it meanwhile (one
    did: a test's Redis, started 1.5 s after the port was picked, found it taken)."""
    rng = random.Random()
    top = _ephemeral_start() - (10000 if cluster_bus else 0)
    while True:
        port = rng.randrange(min(12000, top - 2000), top)
        try:
            for p in (port, port + 10000) if cluster_bus else (port,):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue


def ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` with its append-only file on (``appendfsync everysec``, as
    compose.yaml ships it, or ``fsync="always"``), which can be shut down or killed and
    started again on the same port."""

    def __init__(self, where: Path, port: int | None = None, cluster: bool = False,
                 fsync: str = "everysec") -> None:
        if REDIS is None:
            pytest.fail("redis-server is missing (apt-get install redis-server)")
        self.dir = where
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port(cluster_bus=cluster)
        self.cluster = cluster
        self.fsync = fsync
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [REDIS or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--appendonly", "yes",
                "--appendfsync", self.fsync, "--protected-mode", "no"]
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", "2000"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + T * 2
        while not ping(self.port):
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on {self.port}")
            time.sleep(0.02)

    def shutdown(self) -> None:
        """``SHUTDOWN`` (the append-only file is flushed), then wait for the process."""
        if REDIS_CLI is not None:
            subprocess.run([REDIS_CLI, "-p", str(self.port), "shutdown"],
                           capture_output=True, timeout=T)
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(T)
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def make_cluster(where: Path, masters: int = 3) -> list[RedisServer]:
    """Three masters on loopback, joined with ``redis-cli --cluster create``."""
    nodes = [RedisServer(where / f"node{i}", cluster=True) for i in range(masters)]
    if REDIS_CLI is None:
        pytest.fail("redis-cli is missing")
    done = subprocess.run(
        [REDIS_CLI, "--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes],
         "--cluster-replicas", "0", "--cluster-yes"],
        capture_output=True, text=True, timeout=T * 4)
    assert done.returncode == 0, done.stdout + done.stderr
    deadline = time.monotonic() + T * 4
    while True:
        info = subprocess.run([REDIS_CLI, "-p", str(nodes[0].port), "cluster", "info"],
                              capture_output=True, text=True).stdout
        if "cluster_state:ok" in info:
            return nodes
        if time.monotonic() > deadline:
            raise RuntimeError(info)
        time.sleep(0.1)


class Solrace:
    """One ``solrace serve`` process on Redis."""

    def __init__(self, redis: str, *extra: str, port: int | None = None) -> None:
        self.redis = redis
        self.extra = extra
        self.port = port or free_port()
        self.proc: subprocess.Popen[str] | None = None

    async def start(self) -> Solrace:
        return await asyncio.to_thread(self.start_blocking)

    def start_blocking(self) -> Solrace:
        """Start it and wait until it serves (for code that runs no event loop)."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "solrace", "serve", "--port", str(self.port), *self.redis_args,
             "--countdown", "0.2", "--rate-limit", "0", "--http-rate", "0", "--pool", "0",
             "--builder-nice", "0",
             *self.extra],
            stdout=subprocess.PIPE, text=True,
            env={"SOLRACE_KEY_FILE": str(KEY_FILE), **os.environ})
        assert self.proc.stdout is not None
        # Never a read without a deadline: a server that does not start fails the test (with
        # what it said), it does not hold the suite up.
        ready, _, _ = select.select([self.proc.stdout], [], [], T * 6)
        if not ready:
            self.stop()
            pytest.fail(f"solrace serve on {self.port} did not start within {T * 6:.0f} s")
        line = self.proc.stdout.readline()
        assert "serving http://" in line, line
        return self

    @property
    def redis_args(self) -> list[str]:
        if self.redis.startswith("redis+cluster://"):
            return ["--redis-cluster", self.redis.replace("redis+cluster://", "redis://")]
        return ["--redis", self.redis]

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(T)

    def terminate(self) -> float:
        """SIGTERM; the seconds it took to stop."""
        assert self.proc is not None
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(T * 2)
        return time.monotonic() - t

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
