"""compose.yaml end to end, as an operator runs it (issue 30, item 5): the images built (the
server's from the Dockerfile), ``docker compose up``, a race played through nginx by real
clients on the published port, one solrace container killed and then the other (the racers go
on through the process left, and a crashed process comes back by itself), ``down`` and ``up``
again with the race still there, and the checkout left as it was: nothing of it mounted but
deploy/nginx.conf read-only, no ``build/`` or ``*.egg-info`` written into it.

Needs a Docker daemon and Docker Compose (``docker compose``, or Compose v1's
``docker-compose``: Debian's docker.io and docker-compose packages). When no daemon answers
and this runs as root with ``dockerd`` installed, the test starts one for itself and stops it
after. The base images come from scripts/docker-base-images.sh: pulled, or with no registry
reachable stand-ins built from Debian once per machine (about 3 minutes; cached in the daemon).
Skipped, with the reason, when any of this cannot be had; the check costs nothing then.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient, ServerError
from websockets.exceptions import WebSocketException

from tests.solrace.servers import free_port

REPO = Path(__file__).resolve().parents[1]
#: Every wait below is a multiple of this (seconds); each waits on a condition, never idles.
T = 5.0
#: Building the images and starting the stack may take minutes on a loaded machine the first
#: time (the stand-in base images alone take about 3): this test's own limit.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(1500)]
#: What a connection through a process that died raises.
LOST = (OSError, ConnectionError, WebSocketException, TimeoutError)


def run(cmd: list[str], timeout: float = 600, env: dict[str, str] | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def daemon_answers() -> bool:
    try:
        return run(["docker", "info"], timeout=30, check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def compose_command() -> list[str] | None:
    """``docker compose`` (v2) when the CLI has it, else Compose v1's ``docker-compose``."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        if run(["docker", "compose", "version"], timeout=30, check=False).returncode == 0:
            return ["docker", "compose"]
    found = shutil.which("docker-compose")
    return [found] if found else None


@pytest.fixture(scope="module")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """The compose command, with a daemon answering and the three base images in it."""
    if shutil.which("docker") is None:
        pytest.skip("no Docker: the docker command is not installed")
    compose = compose_command()
    if compose is None:
        pytest.skip("no Docker Compose: neither `docker compose` nor `docker-compose`")
    started: subprocess.Popen[bytes] | None = None
    if not daemon_answers():
        dockerd = shutil.which("dockerd")
        if dockerd is None or os.geteuid() != 0 or os.environ.get("DOCKER_HOST"):
            pytest.skip("no Docker daemon answers (and none can be started here: that needs "
                        "root and dockerd)")
        log = tmp_path_factory.mktemp("dockerd") / "dockerd.log"
        with log.open("wb") as out:
            started = subprocess.Popen([dockerd], stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 12 * T
        while not daemon_answers():
            if started.poll() is not None or time.monotonic() > deadline:
                started.terminate()
                started.wait(6 * T)
                pytest.skip(f"dockerd did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    try:
        base = run(["bash", str(REPO / "scripts" / "docker-base-images.sh")], timeout=1200,
                   check=False)
        if base.returncode == 3:
            pytest.skip(f"no base images: {base.stderr.strip()}")
        assert base.returncode == 0, f"docker-base-images.sh failed:\n{base.stderr[-3000:]}"
        yield compose
    finally:
        if started is not None:
            started.terminate()
            started.wait(12 * T)


@dataclass
class Stack:
    """One compose project of the repo's compose.yaml, its nginx on ``port``."""

    compose: list[str]
    project: str
    port: int
    env: dict[str, str] = field(default_factory=dict)

    def __call__(self, *args: str, timeout: float = 600) -> str:
        cmd = [*self.compose, "-f", str(REPO / "compose.yaml"), "-p", self.project, *args]
        return run(cmd, timeout=timeout, env=self.env).stdout

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def containers(self, service: str | None = None) -> list[str]:
        """The project's containers (of ``service``), by name, in order."""
        cmd = ["docker", "ps", "-a", "--format", "{{.Names}}",
               "--filter", f"label=com.docker.compose.project={self.project}"]
        if service:
            cmd += ["--filter", f"label=com.docker.compose.service={service}"]
        return sorted(run(cmd).stdout.split())

    def wait_healthy(self) -> None:
        """Until both solrace containers are healthy and nginx answers on the port."""
        deadline = time.monotonic() + 36 * T
        while True:
            names = self.containers("solrace")
            states = [inspect(n)["State"] for n in names]
            if (len(names) == 2 and all(s.get("Health", {}).get("Status") == "healthy"
                                        for s in states) and http_ok(f"{self.http}/healthz")):
                return
            assert time.monotonic() < deadline, f"the stack is not healthy: {states}"
            time.sleep(0.25)


def inspect(name: str) -> dict[str, Any]:
    result: list[dict[str, Any]] = json.loads(run(["docker", "inspect", name]).stdout)
    return result[0]


def http_ok(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=T) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def http_json(url: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=T) as resp:
        return json.loads(resp.read())


def checkout_outputs() -> dict[str, float]:
    """What a package build leaves in a checkout (``build/``, ``dist/``, ``*.egg-info``), with
    the time each last changed (a development install keeps its own ``*.egg-info``)."""
    found = [REPO / "build", REPO / "dist", *REPO.glob("*.egg-info")]
    return {p.name: p.stat().st_mtime for p in found if p.exists()}


@pytest.fixture
def stack(docker: list[str]) -> Iterator[Stack]:
    port = free_port()
    env = {**os.environ, "SOLRACE_PORT": str(port)}
    made = Stack(docker, f"solracetest{os.getpid()}", port, env)
    before = checkout_outputs()
    try:
        made("build", timeout=1200)
        made("up", "-d")
        made.wait_healthy()
        yield made
    finally:
        with contextlib.suppress(Exception):
            made("down", "-v", "--remove-orphans", timeout=300)
        # Former builds of the server's image, untagged by this one: not left to pile up.
        run(["docker", "image", "prune", "-f", "--filter", "label=org.solrace.image=server"],
            check=False)
    assert checkout_outputs() == before, "the build wrote into the checkout"


@dataclass
class Racer:
    """A racer of ``race`` on a connection through nginx, joined again with his token when
    the connection is lost; ``acked``: every action the service acknowledged, in order."""

    stack: Stack
    race: str
    name: str
    client: RaceClient | None = None
    token: str = ""
    acked: list[str] = field(default_factory=list)

    async def join(self) -> None:
        self.client = await RaceClient.connect(self.stack.ws)
        reply = await self.client.join(self.race, name=self.name)
        self.token = reply["token"]

    async def rejoin(self) -> None:
        """A new connection (nginx picks a live process) and the racer taken back; tried
        until the service takes him (a race whose owner died waits for its lease to lapse)."""
        if self.client is not None:
            await self.client.close()
        async with asyncio.timeout(12 * T):
            while True:
                try:
                    self.client = await RaceClient.connect(self.stack.ws)
                    await self.client.join(self.race, token=self.token)
                    await self.client.wait_state(self.race, 2 * T)
                    return
                except (*LOST, ServerError):
                    await asyncio.sleep(0.2)

    async def ensure(self) -> None:
        """Still connected to a live process (a ping answered), else joined again."""
        assert self.client is not None
        try:
            await self.client.ping()
        except LOST:
            await self.rejoin()

    async def act(self, rng: random.Random, count: int) -> None:
        """``count`` moves (an undo when none is legal), each sent again with the same seq
        while the service is unavailable or after a lost connection."""
        for _ in range(count):
            assert self.client is not None
            state = self.client.states[self.race]
            seq = state["seq"] + 1
            msg: dict[str, Any] = ({"type": "move", "move": rng.choice(state["legal"])}
                                   if state["legal"] else {"type": "undo"})
            async with asyncio.timeout(12 * T):
                while True:
                    assert self.client is not None
                    try:
                        await self.client.request({**msg, "race": self.race, "seq": seq},
                                                  timeout=2 * T)
                        break
                    except ServerError as exc:
                        if exc.code != "unavailable":
                            raise
                        await asyncio.sleep(0.1)
                    except LOST:
                        await self.rejoin()
                        assert self.client is not None
                        if self.client.states[self.race]["seq"] == seq:
                            break  # it was played before the connection went
            self.acked.append(msg.get("move", "undo"))
        assert self.client is not None
        assert self.client.states[self.race]["seq"] == len(self.acked)


async def wait_back(name: str, restarts: int) -> None:
    """Until container ``name`` has been restarted ``restarts`` times and is healthy."""
    async with asyncio.timeout(36 * T):
        while True:
            state = await asyncio.to_thread(inspect, name)
            if (state["RestartCount"] >= restarts
                    and state["State"].get("Health", {}).get("Status") == "healthy"):
                return
            await asyncio.sleep(0.25)


def crash(name: str) -> bool:
    """Kill the container's server process from outside as a crash would (SIGKILL): Docker's
    restart policy brings it back. Where the process is not visible from here (a remote
    daemon), ``docker kill`` (Docker then leaves it down). True when restarted by Docker."""
    pid = inspect(name)["State"]["Pid"]
    if pid and os.geteuid() == 0 and Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)
        return True
    run(["docker", "kill", name])
    return False


async def test_the_compose_stack_serves_survives_a_crash_and_a_restart(stack: Stack) -> None:
    # The image: the installed package serves the client, as an unprivileged user, and
    # nothing of the checkout is mounted but nginx's configuration, read-only.
    solraces = stack.containers("solrace")
    assert len(solraces) == 2
    for name in stack.containers():
        for mount in inspect(name)["Mounts"]:
            if mount["Type"] == "bind":
                assert mount["Source"] == str(REPO / "deploy" / "nginx.conf"), mount
                assert not mount["RW"], mount
    for name in solraces:
        assert run(["docker", "exec", name, "id", "-u"]).stdout.strip() != "0"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{stack.http}/", timeout=T) as resp:
        assert resp.status == 200 and b'type="module"' in resp.read()

    # A race through nginx: two connections, round robin, one per process.
    host = await RaceClient.connect(stack.ws)
    created = await host.create("scotch", players=2, seed=77, time_limit=900)
    race = created["race"]
    ann, bob = Racer(stack, race, "ann"), Racer(stack, race, "bob")
    await ann.join()
    await bob.join()
    await host.start(race, created["host_token"])
    await host.close()
    for racer in (ann, bob):
        assert racer.client is not None
        await racer.client.wait_state(race, 2 * T)
    rng = random.Random(30)
    for racer in (ann, bob):
        await racer.act(rng, 4)

    # One process killed (`docker kill`: it stays down): the racers go on through the other.
    first, second = solraces
    run(["docker", "kill", first])
    for racer in (ann, bob):
        await racer.ensure()
        await racer.act(rng, 3)
    run(["docker", "start", first])
    await wait_back(first, 0)
    # The other one crashes (killed from outside): Docker starts it again from its image.
    restarts = inspect(second)["RestartCount"]
    by_docker = await asyncio.to_thread(crash, second)
    for racer in (ann, bob):
        await racer.ensure()
        await racer.act(rng, 3)
    if not by_docker:
        run(["docker", "start", second])
    await wait_back(second, restarts + 1 if by_docker else 0)

    # `down` and `up`: the race is still there, each racer takes his seat back.
    for racer in (ann, bob):
        assert racer.client is not None
        await racer.client.close()
    stack("down", timeout=300)
    stack("up", "-d")
    stack.wait_healthy()
    for racer in (ann, bob):
        await racer.rejoin()
        assert racer.client is not None
        assert racer.client.states[race]["seq"] == len(racer.acked), "every move kept"
        await racer.act(rng, 2)
    for racer in (ann, bob):
        assert racer.client is not None
        await racer.client.resign(race)
    summary = await asyncio.to_thread(http_json, f"{stack.http}/api/races/{race}")
    assert summary["status"] == "finished"
    assert [p["moves"] for p in summary["players"]] == [ann.acked, bob.acked]
    for racer in (ann, bob):
        assert racer.client is not None
        await racer.client.close()
