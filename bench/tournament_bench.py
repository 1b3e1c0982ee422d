"""Tournament benchmark: a rounds tournament of 200 bot entrants on one server process.

    .venv/bin/python bench/tournament_bench.py            # --entrants 200 --race-size 8 --rounds 3

Every round splits the field into races of ``race_size`` on one deal (25 races of 8). The bots
take their seats, make a few moves, and resign, race by race; the last race of each round is
ended by the benchmark at a known instant. Measured: the time from that last race's end (the
benchmark sending its last resign) to each entrant's connection receiving the round's final
``standings`` (the one after the last race), p50/p99 over every entrant of every round (goal:
p99 within 100 ms); and the server's CPU per entrant per round (``/proc`` user+system time of
the server process over the rounds, divided by entrants x rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from solrace.tools.race_client import RaceClient
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).parent))
from race_bench import PROFILE, cpu_seconds, pct, start


class Bot:
    """One entrant on a bare connection (frames are scanned, decoded only when needed)."""

    def __init__(self, ws: ClientConnection, tid: str, token: str) -> None:
        self.ws = ws
        self.tid = tid
        self.token = token
        self.seat: dict[str, Any] | None = None
        self.state: dict[str, Any] | None = None
        self.standings = 0  # standings messages seen this round
        self.final_at = 0.0  # when the round's last standings came
        self.want = 0
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                frame = await self.ws.recv(decode=False)
                now = time.perf_counter()
                if b'"standings"' in frame and b'"type":"standings"' in frame:
                    self.standings += frame.count(b'"type":"standings"')
                    if self.want and self.standings >= self.want and not self.final_at:
                        self.final_at = now
                if b'"type":"round"' in frame or b'"type":"state"' in frame or (
                        b'"rid"' in frame and b'"type":"tournament"' not in frame):
                    obj = orjson.loads(frame)
                    for m in obj if isinstance(obj, list) else (obj,):
                        kind = m.get("type")
                        if kind == "round":
                            self.seat = m
                            self.inbox.put_nowait(m)
                        elif kind == "state":
                            self.state = m
                            self.inbox.put_nowait(m)
                        elif "rid" in m:
                            self.inbox.put_nowait(m)
        except Exception:
            return

    async def send(self, msg: dict[str, Any]) -> None:
        await self.ws.send(orjson.dumps(msg), text=True)

    async def wait(self, kind: str, timeout: float = 60) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                m = await self.inbox.get()
                if m.get("type") == kind:
                    return m


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="tournament_bench_") as tmp:
        proc, addr = start([sys.executable, *PROFILE, "-m", "solrace", "serve", "--port", "0",
                            "--db", f"{tmp}/t.db", "--rate-limit", "0", "--http-rate", "0",
                            "--countdown", "0", "--par-seconds", "0", "--pool", "0",
                            # every entrant connects from 127.0.0.1
                            "--entrants-per-address", "100000",
                            "--connections-per-address", "100000"])
        try:
            url = f"ws://{addr}/ws?batch=1"
            host = await RaceClient.connect(url)
            created = await host.request({
                "type": "tournament_create", "name": "Bench", "format": "rounds",
                "games": ["scotch"], "rounds": args.rounds, "race_size": args.race_size,
                "gap": 0, "grace": 60, "time_limit": 3600, "max_entrants": args.entrants})
            tid, htoken = created["tournament"], created["host_token"]
            bots: list[Bot] = []
            for i in range(args.entrants):
                client = await RaceClient.connect(url)
                reply = await client.request({"type": "tournament_join", "tournament": tid,
                                              "name": f"bot{i}", "bot": True})
                bots.append(Bot(await client.detach(), tid, reply["token"]))
            print(f"{args.entrants} entrants, races of {args.race_size}, {args.rounds} rounds, "
                  f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            latencies: list[float] = []
            cpu0 = cpu_seconds(proc.pid)
            for number in range(1, args.rounds + 1):
                for bot in bots:
                    bot.standings, bot.final_at, bot.want, bot.seat = 0, 0.0, 0, None
                    bot.inbox = asyncio.Queue()
                if number == 1:
                    await host.request({"type": "tournament_start", "tournament": tid,
                                        "token": htoken})
                else:
                    await host.request({"type": "tournament_next", "tournament": tid,
                                        "token": htoken})
                seats = await asyncio.gather(*(b.wait("round") for b in bots))
                races: dict[str, list[Bot]] = {}
                for bot, seat in zip(bots, seats, strict=True):
                    races.setdefault(seat["race"], []).append(bot)
                    await bot.send({"type": "join", "race": seat["race"], "token": seat["token"],
                                    "boards": False, "rid": 1})
                await asyncio.gather(*(b.wait("state") for b in bots))
                for bot in bots:
                    bot.want = len(races)
                order = list(races)
                for race in order[:-1]:  # every race but the last ends now
                    await asyncio.gather(*(play_and_resign(b, race) for b in races[race]))
                # Let the earlier races' standings arrive before the measured end.
                await asyncio.sleep(0.5)
                last = order[-1]
                for b in races[last][:-1]:
                    await play_and_resign(b, last)
                await asyncio.sleep(0.2)
                t0 = time.perf_counter()
                await races[last][-1].send({"type": "resign", "race": last, "rid": 9})
                async with asyncio.timeout(30):
                    while not all(b.final_at for b in bots):
                        await asyncio.sleep(0.005)
                round_lat = [b.final_at - t0 for b in bots]
                latencies += round_lat
                print(f"round {number}: {len(races)} races; last race's end -> everyone's "
                      f"standings: p50 {pct(round_lat, .5) * 1000:.1f} ms, "
                      f"p99 {pct(round_lat, .99) * 1000:.1f} ms, "
                      f"max {max(round_lat) * 1000:.1f} ms", flush=True)
            cpu = cpu_seconds(proc.pid) - cpu0
            print(f"\nover {args.rounds} rounds: p50 {pct(latencies, .5) * 1000:.1f} ms, "
                  f"p99 {pct(latencies, .99) * 1000:.1f} ms (goal <= 100 ms)")
            print(f"server CPU per entrant per round: "
                  f"{cpu / (args.entrants * args.rounds) * 1000:.2f} ms (all of it: joins, "
                  f"moves, resigns, standings)")
            await host.close()
            for b in bots:
                b.reader.cancel()
                await b.ws.close()
        finally:
            proc.terminate()
            proc.wait(10)


async def play_and_resign(bot: Bot, race: str) -> None:
    state = bot.state
    if state is not None and state.get("legal"):
        await bot.send({"type": "move", "race": race, "move": state["legal"][0],
                        "seq": state["seq"] + 1, "rid": 2})
        await bot.wait("state", 30)
    await bot.send({"type": "resign", "race": race, "rid": 3})


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--entrants", type=int, default=200)
    p.add_argument("--race-size", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(p.parse_args()))
