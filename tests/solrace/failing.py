"""A real SQLite store that fails on demand: while ``failing`` is set, every commit and every
probe write fails as a full disk would (``sqlite3.OperationalError``), and nothing of them is
written; clear it and the next probe goes through. ``fail_if`` fails one chosen commit. For the
tests of what the server does when its store cannot write (the tmpfs of tests/disk.py is the
real full disk, where root may mount one)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from solrace.store.sqlite_journal import Batch
from solrace.store.sqlite_store import SQLiteStore


class FailingStore(SQLiteStore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failing = False
        #: Fails the commit of the first batch it says yes to, once (then it is cleared).
        self.fail_if: Callable[[Batch], bool] | None = None

    def _write(self, batch: Batch) -> None:
        if self.failing:
            raise sqlite3.OperationalError("database or disk is full (on demand)")
        if self.fail_if is not None and self.fail_if(batch):
            self.fail_if = None
            raise sqlite3.OperationalError("disk I/O error (on demand, once)")
        super()._write(batch)

    async def probe(self) -> bool:
        if self.failing:
            self._healthy = False
            return False
        return await super().probe()

    def fail_next_write(self, server: Any) -> None:
        """Fail from now on, and make the store find out (as it would at its next write)."""
        self.failing = True
        self._healthy = False
        server.app.hub.watch.failed(set(), sqlite3.OperationalError("disk full"))
