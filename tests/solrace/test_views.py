"""The views rule: nobody is shown a card of the shared deal he may not see.

A racer sees on another racer's board only the physical cards his own board has shown him; anyone
else (spectators, a racer's own spectator page, the HTTP API) only the cards every racer still
racing has had face up; once the race is over, everything. Checked on the sans-I/O parts
(:mod:`solrace.core.views`), and over random races on a real server, message by message.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import solrules
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from solrace.core.race import Race
from solrace.core.race_parts import Options
from solrace.core.views import RACERS, SPECTATORS, mask
from solrace.net.app import App
from solrace.protocol import messages
from solrace.protocol.board_views import BoardViews
from solrace.store.sqlite_store import SQLiteStore
from solrace.tools.race_client import RaceClient, ServerError

from tests.profiles import examples, thorough

from .conftest import T

T0 = 1_000_000
CARD = re.compile(r"\b[A2-9TJQK][CSHD]\b")


def started(game: str, seed: int, racers: int) -> Race:
    race = Race("r", game, seed, "salt", Options(racers, 600, True), T0, "host", 0)
    for i in range(racers):
        race.join(f"racer{i}", f"token{i}", T0)
    race.start("host", T0)
    race.tick(T0)
    return race


def flip_move(game: solrules.Game) -> str | None:
    """A Yukon move that turns a face-down card up, if there is one."""
    for move in game.legal_moves():
        src = move.src
        if src.startswith("t"):
            down = game.face_down(src)
            if down and len(game.cards(src)) - move.count == down:
                return move.text()
    return None


class Viewer:
    def __init__(self, players: dict[str, str] | None = None) -> None:
        self.players = players or {}
        self.follows = {"r": True}


def test_a_card_one_racer_turns_up_stays_hidden_from_the_others() -> None:
    for seed in range(1, 200):
        race = started("yukon", seed, 3)
        game = race.racers["p1"].game
        move = flip_move(game)
        if move is not None:
            break
    else:
        raise AssertionError("no deal with a flip at once")
    before = game.seen
    race.move("p1", move, 1, T0 + 1)
    turned = game.seen & ~before
    assert bin(turned).count("1") == 1
    p1, p2 = race.racers["p1"], race.racers["p2"]
    # p2 and any outsider: a back where p1 sees the card; p1 himself: the card.
    assert not mask(race.deal, p2) & turned and not race.deal.common() & turned
    views = BoardViews(race, "p1", RACERS)
    to_p2 = views.pick(Viewer({"r": "p2"}), "r")
    to_p3 = views.pick(Viewer({"r": "p3"}), "r")
    assert to_p2 is not None and to_p2 is to_p3  # one view, encoded once, for both
    assert views.pick(Viewer({"r": "p1"}), "r") is None  # his own comes with his state
    assert views.pick(Viewer(), "r") is None  # outsiders get the spectators' views
    shown = to_p2.data["board"]
    assert shown != p1.game.board() and shown == p1.game.board(mask=p2.game.seen)
    outsider = BoardViews(race, "p1", SPECTATORS).pick(Viewer(), "r")
    assert outsider is not None and outsider.data["board"] == shown
    snap = messages.snapshot(race, None, None, T0)
    assert snap["players"][0]["board"] == shown
    mine = messages.snapshot(race, "p1", p1, T0)
    assert mine["players"][0]["board"] == p1.game.board()
    # p2 turns up the same card (same column of the same deal): p2 may see it now, outsiders
    # not until p3 has it too; once p3 resigns he no longer counts.
    race.move("p2", move, 1, T0 + 2)
    assert mask(race.deal, p2) is not None and mask(race.deal, p2) & turned  # type: ignore[operator]
    race.deal.changed()
    assert not race.deal.common() & turned  # type: ignore[operator]
    race.resign("p3", T0 + 3)
    race.deal.changed()
    assert race.deal.common() & turned  # type: ignore[operator]
    resigned = mask(race.deal, race.racers["p3"])
    assert resigned is not None and resigned & turned  # he sees what outsiders see
    race.resign("p1", T0 + 4)
    race.resign("p2", T0 + 5)
    assert race.revealed and mask(race.deal, None) is None


def test_scotch_is_open_nothing_is_masked() -> None:
    race = started("scotch", 7, 2)
    move = race.racers["p1"].game.legal_moves()[0].text()
    race.move("p1", move, 1, T0)
    assert messages.snapshot(race, None, None, T0)["players"][0]["board"] == (
        race.racers["p1"].game.board())


# --------------------------------------------------------------- random races, real server
class Referee:
    """Replays every racer's moves on its own copy of the deal and says, for any board or
    text a connection received, whether it showed a card that connection may not see."""

    def __init__(self, game: str, seed: int, players: list[str]) -> None:
        self.games = {p: solrules.new_game(game, seed) for p in players}
        self.done: set[str] = set()
        self.over = False
        # Per racer, every position it went through: (pile ids -> card ids, face-down counts).
        self.history: dict[str, list[list[list[int]]]] = {p: [self._piles(p)] for p in players}
        self.boards = {p: [g.board()] for p, g in self.games.items()}  # after each action

    def _piles(self, player: str) -> list[list[int]]:
        return [list(pile) for pile in self.games[player]._piles]

    def play(self, player: str, move: str) -> None:
        self.games[player].push_text(move)
        self.history[player].append(self._piles(player))
        self.boards[player].append(self.games[player].board())

    def allowed(self, viewer: str | None) -> int | None:
        """The cards ``viewer`` (a racer, or None for anyone else) may be shown now on
        another racer's board."""
        if self.over:
            return None
        racing = [g.seen for p, g in self.games.items() if p not in self.done]
        common = None
        for seen in racing:
            common = seen if common is None else common & seen
        if viewer is None:
            return common
        own = self.games[viewer].seen
        if viewer not in self.done:
            return own
        return None if common is None else own | common

    def check_board(self, owner: str, board: dict[str, Any], viewer: str | None,
                    where: str) -> None:
        game = self.games[owner]
        if viewer == owner:
            assert board == game.board(), f"{where}: a racer's own board is his state's"
            return
        allowed = self.allowed(viewer)
        piles = [p["cards"] for p in board["piles"]]
        for past in reversed(self.history[owner]):
            if [len(p) for p in past] == [len(p) for p in piles] and all(
                text is None or solrules.card_text(card) == text
                for pile, shown in zip(past, piles, strict=True)
                for card, text in zip(pile, shown, strict=True)
            ):
                for pile, shown in zip(past, piles, strict=True):
                    for card, text in zip(pile, shown, strict=True):
                        if text is not None and allowed is not None:
                            assert allowed >> card & 1, (
                                f"{where}: {text} of {owner} shown to {viewer or 'an outsider'}")
                return
        raise AssertionError(f"{where}: a board of {owner} that it never had")

    def check_text(self, text: str, viewer: str | None, where: str) -> None:
        """Card texts named in a message (an error, say) must be face up on the viewer's own
        board, or allowed to him."""
        for name in CARD.findall(text):
            if viewer is not None and name in {
                c for p in self.games[viewer].board()["piles"] for c in p["cards"] if c
            }:
                continue
            allowed = self.allowed(viewer)
            assert allowed is None or any(
                allowed >> card & 1 for card in range(52 * self.games[
                    next(iter(self.games))].decks) if solrules.card_text(card) == name
            ), f"{where}: {name} named to {viewer or 'an outsider'}"

    def check(self, msg: dict[str, Any], viewer: str | None, where: str) -> None:
        kind = msg.get("type")
        if kind == "race_over":
            return
        if kind == "board":
            self.check_board(msg["player"], msg["board"], viewer, where)
        elif kind == "snapshot":
            assert "seed" not in msg and "salt" not in msg
            for entry in msg["players"]:
                if "board" in entry:
                    self.check_board(entry["player"], entry["board"], viewer, where)
        elif kind == "state":
            assert msg["player"] == viewer, f"{where}: someone else's state"
            assert msg["board"] == self.boards[viewer][msg["seq"]]
        else:
            self.check_text(json.dumps(msg), viewer, where)


def http_json(url: str) -> tuple[int, Any]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=T) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def random_race(tmp: Path, game: str, seed: int, rnd: random.Random) -> None:
    store = SQLiteStore(tmp / f"{game}-{seed}.db")
    app = App(store, countdown=0.01, rate_limit=0, client=tmp)
    async with app.serve("127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        url, base = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
        host = await RaceClient.connect(url)
        created = await host.create(game, players=3, seed=seed)
        race = created["race"]
        spectator = await RaceClient.connect(url)
        own_page = await RaceClient.connect(url)  # p1's spectator page of his own race
        racers = [await RaceClient.connect(url) for _ in range(3)]
        for i, client in enumerate(racers):
            await client.join(race, name=f"racer{i}")
        await spectator.watch(race)
        await own_page.watch(race)
        ref = Referee(game, seed, ["p1", "p2", "p3"])
        audience: list[tuple[RaceClient, str | None]] = [
            (spectator, None), (own_page, None), (host, None),
            (racers[0], "p1"), (racers[1], "p2"), (racers[2], "p3")]
        await host.start(race, created["host_token"])
        for client in racers:
            await client.wait_state(race, T)
        seen_msgs = 0

        def drain() -> None:
            nonlocal seen_msgs
            for client, viewer in audience:
                while not client.events.empty():
                    msg = client.events.get_nowait()
                    seen_msgs += 1
                    ref.check(msg, viewer, f"{viewer or 'outsider'} got {msg.get('type')}")

        resigner = rnd.choice(["p2", "p3"])
        steps = 90 if game != "quadruple-canfield" else 140
        for step in range(steps):
            active = [p for p in ("p1", "p2", "p3") if p not in ref.done]
            if not active:  # every racer finished or resigned (no legal move left)
                break
            player = rnd.choice(active)
            client = racers[int(player[1]) - 1]
            legal = client.states[race]["legal"]
            if not legal or (step == steps // 2 and player == resigner):
                await client.resign(race)
                ref.done.add(player)
                continue
            # A refused move: its message must not leak either. (Which texts are illegal
            # depends on the position: "t1>t2/9" is legal in Yukon when t1 holds nine
            # face-up cards that fit.)
            refused = next((t for t in ("t1>t2/9", "t2>t1/13", "f1>f2", "t3>t3")
                            if t not in legal), None)
            if refused is not None and rnd.random() < 0.05:
                with pytest.raises(ServerError) as info:
                    await client.move(race, refused)
                assert info.value.code in ("illegal_move", "bad_message")
                ref.check_text(str(info.value), player, "error")
            move = rnd.choice(legal)
            state = await client.move(race, move)
            ref.play(player, move)
            ref.check(state, player, "reply")
            if step % 15 == 0:
                await asyncio.sleep(0.3)  # let throttled board views go out
                status, summary = await asyncio.to_thread(http_json, f"{base}/api/races/{race}")
                assert status == 200 and "seed" not in summary
                for entry in summary["players"]:
                    assert "moves" not in entry
                    ref.check_board(entry["player"], entry["board"], None, "API")
                status, _ = await asyncio.to_thread(
                    http_json, f"{base}/api/races/{race}/replay/p1")
                assert status == 403
                for page in (spectator, own_page):  # snapshots, as outsiders see them
                    ref.check(await page.watch(race), None, "watch")
                again = racers[0]  # a racer resuming gets a snapshot as a racer
                await again.join(race, token=again.tokens[race])
            drain()
        await asyncio.sleep(0.3)
        drain()
        for player in ("p1", "p2", "p3"):
            if player not in ref.done:
                await racers[int(player[1]) - 1].resign(race)
        over = await spectator.next_event("race_over", timeout=T)
        ref.over = True
        assert over["seed"] == str(seed)
        drain()
        assert seen_msgs > 100
        status, summary = await asyncio.to_thread(http_json, f"{base}/api/races/{race}")
        assert summary["seed"] == str(seed)
        for entry in summary["players"]:  # after the end: every face-up card
            assert entry["board"] == ref.games[entry["player"]].board()
        status, replay = await asyncio.to_thread(http_json, f"{base}/api/races/{race}/replay/p2")
        assert status == 200 and replay["moves"] == summary["players"][1]["moves"]
        for client in [host, spectator, own_page, *racers]:
            await client.close()
    app.close()
    store.close()


def _property(game: str, full: int) -> Any:
    count = examples(full) if thorough() else max(1, full // 2)
    @settings(max_examples=count, deadline=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(seed=st.integers(32000, 2**64 - 1), rnd=st.randoms(use_true_random=False))
    def test(tmp_path: Path, seed: int, rnd: random.Random) -> None:
        asyncio.run(random_race(tmp_path, game, seed, rnd))

    return test


test_random_yukon_races_show_nobody_a_card_he_may_not_see = _property("yukon", 4)
test_random_quadruple_canfield_races_show_nobody_a_card_he_may_not_see = _property(
    "quadruple-canfield", 3)
test_random_scotch_races_show_nobody_a_card_he_may_not_see = _property("scotch", 2)
