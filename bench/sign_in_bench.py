"""How long a flood of sign-ins delays someone else's: the owner's own sign-in, from an address
of his own, behind 400 attempts from 40 addresses (issue 28).

    .venv/bin/python bench/sign_in_bench.py            # --addresses 40 --each 10

An embedded server in this process (its own SQLite file in a temporary directory, trusting
X-Forwarded-For for the addresses). The owner sets his password first. Then ``--addresses``
addresses open ``--each`` connections each and every connection sends one ``sign_in`` with a
name of nobody (a scrypt all the same: the answer's time must not tell that the name is
unknown) and a wrong password, all at once; a moment later (``--settle`` s, for the server to
read them all) the owner signs in from one more address. Printed: the seconds from his
``sign_in`` to his ``signed_in``, and how many of the flood's password checks were answered
meanwhile; then how long the whole flood took, and how many of it were refused at once.

It runs the server of whatever ``solrace`` is imported, so the code before a change can be
measured the same way (``PYTHONPATH=<old tree>/server:<old tree>/shared``).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from solrace.net.app import App
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient, ServerError


async def sign_in(client: RaceClient, name: str, password: str) -> dict[str, Any]:
    try:
        return await client.request({"type": "sign_in", "name": name, "password": password},
                                    timeout=600)
    except ServerError as exc:
        return exc.reply


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        storage = SQLiteStore(Path(tmp) / "race.db")
        client_dir = Path(tmp) / "client"
        client_dir.mkdir()
        (client_dir / "index.html").write_text("<!doctype html><title>bench</title>")
        app = App(storage, rate_limit=0, http_rate=0, client=client_dir, trust_proxy=True)
        async with app.serve("127.0.0.1", 0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            url = f"ws://127.0.0.1:{port}/ws"

            async def at(address: str, cookie: str | None = None) -> RaceClient:
                headers = {"X-Forwarded-For": address}
                if cookie is not None:
                    headers["Cookie"] = f"sr_player={cookie}"
                return await RaceClient.connect(url, additional_headers=headers)

            owner = await at("198.51.100.7", "a" * 43)
            await owner.request({"type": "set_name", "name": "Ann"})
            await owner.request({"type": "set_password", "password": "correct horse"})
            flood = [await at(f"203.0.113.{a}") for a in range(args.addresses)
                     for _ in range(args.each)]
            answers: list[str] = []

            async def guess(client: RaceClient, i: int) -> None:
                reply = await sign_in(client, f"nobody{i}", "wrong password")
                answers.append(reply.get("code", reply["type"]))

            start = time.monotonic()
            tasks = [asyncio.create_task(guess(c, i)) for i, c in enumerate(flood)]
            await asyncio.sleep(args.settle)
            checked = answers.count("forbidden")
            mine = await at("192.0.2.44")
            asked = time.monotonic()
            reply = await sign_in(mine, "Ann", "correct horse")
            took = time.monotonic() - asked
            meanwhile = answers.count("forbidden") - checked
            await asyncio.gather(*tasks)
            total = time.monotonic() - start
            print(f"owner's sign-in: {reply['type']} after {took:.2f} s; "
                  f"{meanwhile} of the flood's checks answered meanwhile")
            print(f"flood: {len(answers)} attempts from {args.addresses} addresses in "
                  f"{total:.2f} s: {answers.count('forbidden')} checked, "
                  f"{answers.count('rate_limited')} refused at once")
            for client in [owner, mine, *flood]:
                await client.close()
        app.close()
        storage.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=40)
    parser.add_argument("--each", type=int, default=10)
    parser.add_argument("--settle", type=float, default=0.3)
    asyncio.run(main(parser.parse_args()))
