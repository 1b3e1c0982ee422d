"""``kill -9`` during a race, then restart on the same database: no acknowledged move is lost;
and a shutdown that cannot finish still ends, saying what it waited on."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from solrace.tools.race_client import RaceClient

from .conftest import T


async def start_server(db: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "solrace", "serve", "--port", "0", "--db", str(db),
         "--countdown", "0", "--rate-limit", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), T * 2)
    assert line.startswith("solrace serving http://"), line
    return proc, line.split("http://", 1)[1].strip().rstrip("/")


def get_json(url: str) -> Any:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=T) as resp:
        return json.loads(resp.read())


async def test_kill_9_loses_no_acknowledged_move(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    proc, addr = await start_server(db)
    acked: list[str] = []
    boards: list[Any] = []
    try:
        host = await RaceClient.connect(f"ws://{addr}/ws")
        created = await host.create("yukon", players=1, seed=2024)
        race = created["race"]
        racer = await RaceClient.connect(f"ws://{addr}/ws")
        token = (await racer.join(race, name="ann"))["token"]
        await host.start(race, created["host_token"])
        state = await racer.wait_state(race, T)

        async def play() -> None:
            nonlocal state
            while True:
                legal = state["legal"]
                if legal:
                    action, msg = legal[0], {"type": "move", "move": legal[0]}
                else:
                    action, msg = "undo", {"type": "undo"}
                state = await racer.request({**msg, "race": race, "seq": state["seq"] + 1})
                acked.append(action)
                boards.append(state["board"])
                if len(acked) == 40:
                    os.kill(proc.pid, signal.SIGKILL)  # while the next moves are in flight

        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(play(), T * 2)
        assert proc.wait(T) == -signal.SIGKILL
        assert len(acked) >= 40
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    proc, addr = await start_server(db)
    try:
        again = await RaceClient.connect(f"ws://{addr}/ws")
        assert (await again.join(race, token=token))["player"] == "p1"
        state = await again.wait_state(race, T)
        # Every acknowledged action is there; at most the one in flight was also recorded.
        assert state["seq"] in (len(acked), len(acked) + 1)
        if state["seq"] == len(acked):
            assert state["board"] == boards[-1]
        await again.resign(race)
        summary = await asyncio.to_thread(get_json, f"http://{addr}/api/races/{race}")
        assert summary["status"] == "finished"
        assert summary["players"][0]["moves"][: len(acked)] == acked
        await again.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(T) == 0, "SIGTERM shuts down cleanly"


async def test_a_stuck_shutdown_names_what_it_waits_on_then_exits(tmp_path: Path) -> None:
    """A shutdown step that never ends (here: cancelling the background tasks) does not keep
    the process: the stacks of the tasks still pending are logged (naming the stuck await),
    then every thread's stack, and the process exits with status 1."""
    prelude = (
        "import asyncio, solrace.tools.cli as cli, solrace.runtime.supervisor as s; "
        "cli.SHUTDOWN_TASKS_AFTER = 2.0; cli.SHUTDOWN_DEADLINE = 3.0\n"
        "async def never_done(self): await asyncio.Event().wait()\n"
        "s.Supervisor.close = never_done"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", f"{prelude}\nimport sys; sys.exit(cli.main())", "serve",
         "--port", "0", "--db", str(tmp_path / "races.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), T * 2)
        assert line.startswith("solrace serving http://"), line
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.to_thread(proc.communicate, None, T * 2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    assert proc.returncode == 1, err
    still = err.index("shutdown: still running after")
    assert "in never_done" in err[still:], err
    assert err.index("(most recent call first)", still) > still, err  # faulthandler


BUILDER_HOLDER = """
import asyncio, multiprocessing, sys
from solrace.runtime.builder import Builder
from solrace.store import sqlite_replays

async def main():
    builder = Builder()
    try:
        await builder.run(*sqlite_replays.job(sys.argv[1], "no-such-race", "p1", 0, False))
    except Exception:
        pass  # the worker is started either way
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def gone(pid: int) -> bool:
    """No such process, or only its zombie (its new parent has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def test_the_replay_builder_ends_with_a_killed_server(tmp_path: Path) -> None:
    """``kill -9`` of a server leaves no replay builder behind (its worker process would
    otherwise wait on its job queue forever)."""
    proc = subprocess.Popen([sys.executable, "-c", BUILDER_HOLDER, str(tmp_path / "races.db")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), T * 2)
        workers = [int(pid) for pid in line.split()]
        assert workers, "the builder's worker process started"
        assert not any(gone(pid) for pid in workers)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + T
    while not all(gone(pid) for pid in workers) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    left = [pid for pid in workers if not gone(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "the builder outlived its server"
