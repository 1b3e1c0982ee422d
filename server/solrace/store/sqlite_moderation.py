"""Fair play in the SQLite file of the races
(:class:`~solrace.store.moderation_base.ModerationStore`): the same thread and connection as the
players (:class:`~solrace.store.sqlite_players.SQLitePlayers`), so that clearing a result and
applying its race's ratings, or closing an account and refunding its opponents, is one
transaction with the ratings it changes."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from solrace.core.fairplay import suspicion_of
from solrace.core.scoring import rate_held
from solrace.store.sqlite_players import RESULT_COLUMNS, SQLitePlayers, _result


class SQLiteModeration:
    """See the module docstring."""

    def __init__(self, players: SQLitePlayers) -> None:
        self.players = players

    async def set_role(self, pid: str, role: str | None) -> None:
        def work(db: sqlite3.Connection) -> None:
            if role is None:
                db.execute("DELETE FROM roles WHERE player = ?", (pid,))
            else:
                db.execute("INSERT OR REPLACE INTO roles VALUES (?,?)", (pid, role))

        await self.players._run(work, write=True)

    async def role(self, pid: str) -> str | None:
        row = await self.players._run(lambda db: db.execute(
            "SELECT role FROM roles WHERE player = ?", (pid,)).fetchone())
        return None if row is None else str(row[0])

    async def roles(self) -> list[tuple[str, str]]:
        rows = await self.players._run(lambda db: db.execute(
            "SELECT player, role FROM roles ORDER BY player").fetchall())
        return [(str(p), str(r)) for p, r in rows]

    async def flagged(self, limit: int) -> list[dict[str, Any]]:
        cols = ", ".join(f"r.{c}" for c in RESULT_COLUMNS)
        rows = await self.players._run(lambda db: db.execute(
            f"SELECT {cols}, p.name FROM results r JOIN players p ON p.id = r.player "
            "WHERE r.flagged = 1 AND r.cleared = 0 "
            "AND r.player NOT IN (SELECT player FROM closures) "
            "ORDER BY json_extract(r.signals, '$.suspicion') DESC, r.at DESC LIMIT ?",
            (limit,)).fetchall())
        out = []
        for row in rows:
            result = _result(row[:-1])
            result["player_name"] = row[-1]
            out.append(result)
        out.sort(key=lambda r: (-suspicion_of(r.get("signals")), -int(r["at"])))
        return out[:limit]

    async def clear(self, race: str, pid: str, by: str | None, now: int
                    ) -> dict[str, Any] | None:
        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            done = db.execute("UPDATE results SET cleared = 1 WHERE race = ? AND player = ? "
                              "AND flagged = 1 AND cleared = 0", (race, pid)).rowcount
            if not done:
                return None
            out: dict[str, Any] = {"race": race, "player": pid, "ratings": None}
            held = db.execute("SELECT game, counted FROM held WHERE race = ?",
                              (race,)).fetchone()
            waiting = db.execute(
                "SELECT 1 FROM results WHERE race = ? AND held = 1 AND flagged = 1 "
                "AND cleared = 0", (race,)).fetchone()
            if held is None or waiting:
                return out
            game, entries = str(held[0]), json.loads(held[1])
            keys = [str(e[0]) for e in entries]
            current = self.players._current(db, keys, game)
            new, moves = rate_held(entries, current)
            self.players._write_ratings(db, game, new)
            for key, rating in new.items():
                if key.startswith("bot:"):
                    continue
                old = current.get(key)
                db.execute(
                    "UPDATE results SET rated = 1, held = 0, rating_before = ?, "
                    "rating_after = ?, deviation = ? WHERE race = ? AND player = ?",
                    (1500 if old is None else old.shown, rating.shown, round(rating.sigma),
                     race, key))
            body = {"rated": True, "game": game, "changes": moves}
            db.execute("UPDATE scored SET body = ? WHERE race = ?", (json.dumps(body), race))
            db.execute("DELETE FROM held WHERE race = ?", (race,))
            out["ratings"] = body
            return out

        return await self.players._run(work, write=True)

    async def close(self, pid: str, by: str | None, reason: str, now: int) -> dict[str, Any]:
        def work(db: sqlite3.Connection) -> dict[str, Any]:
            fresh = db.execute("INSERT OR IGNORE INTO closures VALUES (?,?,?,?)",
                               (pid, now, by, reason)).rowcount == 1
            refunds = []
            for other, race, game, before, after in db.execute(
                    "SELECT o.player, o.race, o.game, o.rating_before, o.rating_after "
                    "FROM results c JOIN results o ON o.race = c.race "
                    "WHERE c.player = ? AND c.rated = 1 AND o.player != c.player "
                    "AND o.rated = 1 AND o.rating_after < o.rating_before "
                    "AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.race = o.race "
                    "AND f.player = o.player)", (pid,)).fetchall():
                points = int(before) - int(after)
                db.execute("UPDATE ratings SET mu = mu + ? WHERE player = ? AND game = ?",
                           (points, other, game))
                db.execute("INSERT INTO refunds VALUES (?,?,?,?)", (race, other, points, now))
                refunds.append({"race": race, "player": other, "game": game,
                                "points": points})
            dropped = []
            for (race,) in db.execute(
                    "SELECT h.race FROM held h JOIN results r ON r.race = h.race "
                    "WHERE r.player = ? AND r.held = 1", (pid,)).fetchall():
                db.execute("UPDATE results SET held = 0, casual = 'closed' WHERE race = ? "
                           "AND held = 1", (race,))
                body: dict[str, Any] = {"rated": False, "game": None, "changes": [],
                                        "casual": "closed"}
                row = db.execute("SELECT body FROM scored WHERE race = ?", (race,)).fetchone()
                if row is not None:
                    body = {**json.loads(row[0]), "rated": False, "changes": [],
                            "casual": "closed"}
                    body.pop("held", None)
                db.execute("UPDATE scored SET body = ? WHERE race = ?",
                           (json.dumps(body), race))
                db.execute("DELETE FROM held WHERE race = ?", (race,))
                dropped.append(race)
            return {"closed": fresh, "refunds": refunds, "dropped": dropped}

        return await self.players._run(work, write=True)

    async def closed(self, pids: list[str]) -> set[str]:
        if not pids:
            return set()
        marks = ",".join("?" * len(pids))
        rows = await self.players._run(lambda db: db.execute(
            f"SELECT player FROM closures WHERE player IN ({marks})", pids).fetchall())
        return {str(r[0]) for r in rows}

    async def closure(self, pid: str) -> dict[str, Any] | None:
        row = await self.players._run(lambda db: db.execute(
            "SELECT at, reason FROM closures WHERE player = ?", (pid,)).fetchone())
        return None if row is None else {"at": int(row[0]), "reason": str(row[1])}
