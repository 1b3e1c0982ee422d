"""Lean states (``join`` with ``lean``): a client that knows the rules is told only what it could
not work out — seq, progress and the cards its action turned face up — and gets a full state
wherever it could have lost track (the start, a rejoin, a repeated seq). Checked against a
racer of the same deal who gets full states and plays the same actions."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from solrace.tools.race_client import RaceClient

from .conftest import Server, T

SEEDS = {"scotch": 617, "yukon": 5, "quadruple-canfield": 11}


def face_up(board: dict[str, Any]) -> Counter[str]:
    return Counter(c for pile in board["piles"] for c in pile["cards"] if c is not None)


def place(board: dict[str, Any], pile: str, index: int) -> str | None:
    cards: list[str | None] = next(p["cards"] for p in board["piles"] if p["pile"] == pile)
    return cards[index]


async def two_racers(server: Server, game: str) -> tuple[str, RaceClient, RaceClient]:
    host = await server.client()
    race = (await host.create(game, players=2, seed=str(SEEDS[game]), undo=True))["race"]
    lean, full = await server.client(), await server.client(binary=True)
    await lean.join(race, name="lena", lean=True)
    await full.join(race, name="fred")
    await lean.ready(race)
    await full.ready(race)
    await lean.wait_state(race, T)
    await full.wait_state(race, T)
    return race, lean, full


@pytest.mark.parametrize("game", sorted(SEEDS))
async def test_lean_replies_carry_what_a_full_board_shows(server: Server, game: str) -> None:
    race, lean, full = await two_racers(server, game)
    first = lean.states[race]
    assert "board" in first and "legal" in first and "lean" not in first  # the start: full
    rnd = random.Random(game)
    board = full.states[race]["board"]
    turned_some = 0
    for step in range(1, 61):
        legal = full.states[race]["legal"]
        if not legal:
            break
        if step % 7 == 0:
            thin, fat = await lean.undo(race), await full.undo(race)
        else:
            # Foundation moves and deals first, so that cards get turned up.
            keen = [m for m in legal if m.startswith(("s>", "r>")) or ">f" in m]
            move = rnd.choice(keen if keen and rnd.random() < 0.6 else legal)
            thin, fat = await lean.move(race, move), await full.move(race, move)
        assert thin["lean"] is True and thin["seq"] == fat["seq"] == step
        assert set(thin) == {"type", "race", "player", "seq", "rid", "lean", "progress",
                             "turned"}
        assert thin["progress"] == fat["progress"]
        after = fat["board"]
        texts = Counter(t["card"] for t in thin["turned"])
        assert texts == face_up(after) - face_up(board), step
        for t in thin["turned"]:
            assert place(after, t["pile"], t["index"]) == t["card"]
        turned_some += bool(thin["turned"])
        board = after
    if game != "scotch":  # every Scotch card is dealt face up
        assert turned_some > 0


async def test_a_repeated_seq_and_a_rejoin_get_full_states(server: Server) -> None:
    race, lean, _ = await two_racers(server, "yukon")
    move = lean.states[race]["legal"][0]
    thin = await lean.move(race, move)
    assert thin["lean"] is True and "board" not in thin
    again = await lean.move(race, move, seq=thin["seq"])  # the reply was lost: resent
    assert "lean" not in again and again["seq"] == thin["seq"] and again["legal"]
    # A new connection resuming the racer without asking for lean states gets full ones.
    other = await server.client()
    await other.join(race, token=lean.tokens[race])
    state = await other.wait_state(race, T)
    assert "board" in state
    reply = await other.move(race, state["legal"][0])
    assert "lean" not in reply and "board" in reply and "legal" in reply


async def test_a_lean_refusal_says_why(server: Server) -> None:
    race, lean, _ = await two_racers(server, "scotch")
    bad = next(f"t{i}>t{j}" for i in range(1, 19) for j in range(1, 19)
               if i != j and f"t{i}>t{j}" not in lean.states[race]["legal"])
    with pytest.raises(Exception) as info:
        await lean.move(race, bad)
    assert getattr(info.value, "code", None) == "illegal_move"
    assert "does not go on" in str(info.value) or "empty" in str(info.value)
