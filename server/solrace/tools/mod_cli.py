"""``solrace mod``: who moderates. ``solrace mod add NAME`` gives an account (a name with a
password: a guest's or an unknown name is refused, exit status 1) the moderator role,
``solrace mod remove NAME`` takes it, ``solrace mod list`` lists them — on the SQLite file
(``--db``) or the Redis (``--redis``) a server uses. The store is written directly: no client
can make itself a moderator, and the role works at once, on every process."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from solrace.service.moderation import MODERATOR


def add_parser(sub: Any) -> None:
    m = sub.add_parser("mod", help="give or take the moderator role (fair play)")
    m.add_argument("action", choices=["add", "remove", "list"])
    m.add_argument("name", nargs="?", help="the player's name (add, remove)")
    m.add_argument("--db", default="./solrace.db", help="the server's SQLite file")
    m.add_argument("--redis", default="", metavar="URL",
                   help="the server's Redis (or SOLRACE_REDIS); --db is not used")
    m.add_argument("--log-level", default="WARNING")
    m.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action != "list" and not args.name:
        print(f"solrace mod {args.action}: give the player's name", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    redis_url = args.redis or os.environ.get("SOLRACE_REDIS", "")
    closing: list[Any] = []
    if redis_url:
        from solrace.runtime.redis_connect import connect
        from solrace.store.redis_moderation import RedisModeration
        from solrace.store.redis_players import RedisPlayers

        client = connect(redis_url)
        players: Any = RedisPlayers(client)
        store: Any = RedisModeration(client)
        closing.append(client.aclose)
    else:
        from solrace.store.sqlite_store import SQLiteStore

        races = SQLiteStore(args.db)
        players = races.players()
        store = races.moderation()
        closing.append(races.close)
    try:
        if args.action == "list":
            for pid, role in await store.roles():
                player = await players.by_id(pid)
                print(f"{player.name if player else '?'}\t{pid}\t{role}")
            return 0
        player = await players.by_name(args.name)
        if player is None:
            print(f"solrace mod: no player named {args.name!r}", file=sys.stderr)
            return 1
        if args.action == "add" and player.password is None:
            # A guest's name is held by a browser key alone: whoever has that browser, or
            # takes the name once it lapses, would moderate. Only an account may.
            print(f"solrace mod: {player.name!r} is a guest, not an account: a moderator "
                  "needs a name with a password (he sets one on his page first)",
                  file=sys.stderr)
            return 1
        await store.set_role(player.id, MODERATOR if args.action == "add" else None)
        print(f"{player.name} ({player.id}): "
              f"{'moderator' if args.action == 'add' else 'no role'}")
        return 0
    finally:
        for close in closing:
            done = close()
            if asyncio.iscoroutine(done):
                await done
