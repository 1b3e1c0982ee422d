"""The master key's file (solrace.tools.key_file) and ``solrace serve``'s use of it: made at the
first start beside the database (0600), read again at the next, never replaced when it cannot be
read; several processes making it at once agree; the server seals its pool under it (a pool
sealed under the file's key is dealt, the same pool under another file's key is not); on Redis
a server refuses to start without a named key file."""

from __future__ import annotations

import os
import re
import select
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from solrace.core.keys import KEY_BYTES, MasterKey
from solrace.solver.pool import Pool
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.key_file import KeyFileError, default_for, load_or_create, read
from solrace.tools.race_client import RaceClient, ServerError

from .conftest import T
from .test_sealed_pool import won_deals

GAME = "quadruple-canfield"


def same(a: MasterKey, b: MasterKey) -> bool:
    return a.derive("pool") == b.derive("pool")


def test_the_key_file_is_made_once_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "master.key"
    key, made = load_or_create(path)
    assert made and stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert len(text) == 2 * KEY_BYTES + 1 and bytes.fromhex(text.strip())
    again, made = load_or_create(path)
    assert not made and same(key, again) and path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["master.key"]  # no temporary file left
    # 32 raw bytes are a key too (head -c 32 /dev/urandom).
    raw = tmp_path / "raw.key"
    raw.write_bytes(bytes(range(32)))
    assert same(read(raw), MasterKey(bytes(range(32))))


@pytest.mark.parametrize("content", [b"", b"\n", b"0123", b"zz" * 32, b"a" * 63, bytes(31),
                                     bytes(33), b"ab" * 32 + b"00"])
def test_a_key_file_that_cannot_be_read_is_never_replaced(tmp_path: Path,
                                                          content: bytes) -> None:
    path = tmp_path / "master.key"
    path.write_bytes(content)
    with pytest.raises(KeyFileError, match="not a master key's file"):
        load_or_create(path)
    assert path.read_bytes() == content


def test_processes_making_the_key_at_once_agree(tmp_path: Path) -> None:
    path = tmp_path / "master.key"
    start = threading.Barrier(8)
    keys: list[tuple[MasterKey, bool]] = []

    def make() -> None:
        start.wait()
        keys.append(load_or_create(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(made for _, made in keys) == 1
    assert all(same(key, keys[0][0]) for key, _ in keys)
    assert same(read(path), keys[0][0])
    assert [p.name for p in tmp_path.iterdir()] == ["master.key"]


class Served:
    """A server's WebSocket URL, and what it logged once it stopped."""

    url = ""
    log = ""


@contextmanager
def serve(*args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``solrace serve`` on a free port (no solver), for the block."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "solrace", "serve", "--port", "0", "--countdown", "0.05",
         "--rate-limit", "0", "--http-rate", "0", "--par-seconds", "0", "--hint-seconds", "0",
         "--pool", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env if env is not None else {k: v for k, v in os.environ.items()
                                         if k != "SOLRACE_KEY_FILE"})
    assert proc.stdout is not None and proc.stderr is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], T * 6)
        line = proc.stdout.readline() if ready else ""
        assert "serving http://" in line, line + proc.stderr.read()
        served = Served()
        served.url = "ws://" + line.split("http://", 1)[1].strip().rstrip("/") + "/ws"
        yield served
    finally:
        proc.terminate()
        proc.wait(T * 2)
    served.log = proc.stderr.read()


async def winnable_race(url: str) -> str:
    """A winnable race's id, or the error's code."""
    client = await RaceClient.connect(url)
    try:
        return str((await client.create(GAME, winnable=True))["race"])
    except ServerError as exc:
        return f"error: {exc.code}"
    finally:
        await client.close()


async def test_serve_keeps_its_key_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "races.db"
    with serve("--db", str(db)) as first:
        pass
    assert "made a new master key" in first.log
    path = default_for(db)
    assert path == tmp_path / "races.db.key" and stat.S_IMODE(path.stat().st_mode) == 0o600
    key = read(path)
    # A pool sealed under that key, the server down: the next start deals from it.
    store = SQLiteStore(db)
    await Pool(store, [GAME], size=0, key=key).put(GAME, won_deals(GAME, 2))
    store.close()
    with serve("--db", str(db)) as second:
        assert not (await winnable_race(second.url)).startswith("error")
    assert same(read(path), key) and "master key" not in second.log  # the same file, kept
    # The same database under another key's file deals nothing of it (its entries are
    # dropped), and says so.
    store = SQLiteStore(db)
    await Pool(store, [GAME], size=0, key=key).put(GAME, won_deals(GAME, 1))
    store.close()
    with serve("--db", str(db), "--key-file", str(tmp_path / "other.key")) as other:
        assert await winnable_race(other.url) == "error: unavailable"
    assert not same(read(tmp_path / "other.key"), key)
    assert "for a database that had none here" in other.log
    # One entry at least: the second server may not have dealt both of the first two (it
    # claims deals ahead as it likes), so the count says when it was reached, not whether.
    dropped = re.search(r"(\d+) entries that do not open dropped", other.log)
    assert dropped is not None and int(dropped.group(1)) >= 1, other.log
    # SOLRACE_KEY_FILE names it too.
    store = SQLiteStore(db)
    await Pool(store, [GAME], size=0, key=key).put(GAME, won_deals(GAME, 1))
    store.close()
    with serve("--db", str(db), env={**os.environ, "SOLRACE_KEY_FILE": str(path)}) as named:
        assert not (await winnable_race(named.url)).startswith("error")


def run_serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "solrace", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=T * 4, env=env)


def test_on_redis_a_server_refuses_to_start_without_a_key_file(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SOLRACE_KEY_FILE", "SOLRACE_REDIS")}
    # No Redis listens there: the key is asked for before anything is reached.
    done = run_serve("--redis", "redis://127.0.0.1:9/0", env=env)
    assert done.returncode == 2 and "--key-file" in done.stderr, done.stderr
    assert "cannot reach Redis" not in done.stderr
    done = run_serve(env={**env, "SOLRACE_REDIS": "redis://127.0.0.1:9/0"})
    assert done.returncode == 2 and "--key-file" in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())


def test_a_bad_key_file_stops_the_server(tmp_path: Path) -> None:
    path = tmp_path / "races.db.key"
    path.write_text("not a key\n")
    env = {k: v for k, v in os.environ.items() if k != "SOLRACE_KEY_FILE"}
    done = run_serve("--db", str(tmp_path / "races.db"), env=env)
    assert done.returncode == 2 and "not a master key's file" in done.stderr, done.stderr
    assert path.read_text() == "not a key\n" and not (tmp_path / "races.db").exists()
