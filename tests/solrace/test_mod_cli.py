"""``solrace mod`` (solrace.tools.mod_cli) on a SQLite file, as an operator runs it: the role goes
to an account only — a guest's name or an unknown one is refused with a message and a non-zero
exit status, and gets no role."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from solrace.core.identity import Player
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.cli import main


def players(db: Path) -> None:
    """An account (``Ann``, with a password) and a guest (``Gus``)."""

    async def make() -> None:
        store = SQLiteStore(db)
        try:
            players = store.players()
            assert await players.create(Player("plann0000000", "Ann", 1_000, "scrypt$x"), "ka")
            assert await players.create(Player("plgus0000000", "Gus", 1_000), "kg")
        finally:
            store.close()

    asyncio.run(make())


def roles(db: Path) -> list[tuple[str, str]]:
    async def read() -> list[tuple[str, str]]:
        store = SQLiteStore(db)
        try:
            return await store.moderation().roles()
        finally:
            store.close()

    return asyncio.run(read())


def test_mod_add_gives_the_role_to_an_account_only(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "race.db"
    players(db)
    assert main(["mod", "add", "Gus", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "'Gus' is a guest, not an account" in err and "password" in err
    assert main(["mod", "add", "Nobody", "--db", str(db)]) == 1
    assert "no player named 'Nobody'" in capsys.readouterr().err
    assert roles(db) == []
    assert main(["mod", "add", "Ann", "--db", str(db)]) == 0
    assert roles(db) == [("plann0000000", "moderator")]
    assert main(["mod", "remove", "Ann", "--db", str(db)]) == 0
    assert roles(db) == []
