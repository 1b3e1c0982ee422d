"""The browser's rules engine (``client/engine/``) against solrules, in Chromium.

The engine must work out from a racer's board exactly what the server's ``state`` says of it
(``board``, ``legal`` in order, ``safe``, ``progress``), play moves learning only the cards they
turn up, take moves back exactly, and refuse moves in the server's words. The page side is
``engine_check.js``; it stops at the first mismatch and says where. The checks:

- the golden files (``seeds/golden``, from the independent model): deals, perft lines, perft;
- random games played by solrules, with undos, and winning lines of the catalogue with detours,
  replayed step by step: at every step the engine is told only what a lean ``state`` would
  carry — the cards the racer had never seen that the move turned up — and everything the server
  would send is compared, as are refusals. One random game in four resyncs mid-way from a full
  board, as a client does after a gap; from then on it is told every card the move turned up;
- winning lines again, every card known, for ``safe`` (Quadruple Canfield's auto-moves come
  about once a game, at its end), and random end-of-game positions (``engine_positions.py``)
  with every legal move played and taken back;
- the comparison itself fails on a wrong expectation (so a green run means something).

``SOLRACE_ENGINE_GAMES`` (default 12) scales it all: random games and winning lines per game,
and 30 positions per unit; e.g. 100 for a thorough run.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import solrules
from solrace.core.race_parts import RaceError
from solrace.core.racer import Racer
from solrace.protocol.messages import safe_moves
from solrace.solver.catalogue import CatalogueEntry, load_catalogue

from tests.client.engine_positions import random_position
from tests.client.helpers import REPO, Pages

GAMES = ("scotch", "yukon", "quadruple-canfield")
ENGINE = "/static/engine/index.js"
CHECK = (Path(__file__).parent / "engine_check.js").read_text()
#: Random games per game, and a quarter as many winning lines from the catalogue.
GAMES_PER_GAME = int(os.environ.get("SOLRACE_ENGINE_GAMES", "12"))
#: Actions per random game: enough for play that leans homewards to get stuck or undo a lot.
STEPS = {"scotch": 120, "yukon": 160, "quadruple-canfield": 250}


def golden(game: str) -> dict[str, Any]:
    return json.loads((REPO / "seeds" / "golden" / f"{game}.json").read_text())


def server_refusal(game: solrules.Game, text: str) -> str:
    """The server's ``illegal_move`` message for ``text`` (solrace.core.racer)."""
    err = Racer.refused(SimpleNamespace(game=game), text)  # type: ignore[arg-type]
    assert isinstance(err, RaceError)
    return err.message


def places(game: solrules.Game, mask: int) -> list[dict[str, Any]]:
    """Where the physical cards of ``mask`` lie now: [{pile, index, card}]."""
    out: list[dict[str, Any]] = []
    if not mask:
        return out
    for pid, pile in zip(game.pile_ids, game._piles, strict=True):  # physical cards: private
        for i, c in enumerate(pile):
            if mask >> c & 1:
                out.append({"pile": pid, "index": i, "card": solrules.card_text(c)})
    return out


def sample_refusals(game: solrules.Game, rng: random.Random) -> dict[str, str | None]:
    """A few move texts and the server's answer to each here (None: legal)."""
    ids = game.pile_ids
    legal = list(game.legal_by_text())
    texts = []
    for _ in range(4):
        src, dst = rng.choice(ids), rng.choice(ids)
        n = rng.choice((1, 1, 2, 3, len(game.cards(src)) or 1))
        texts.append(f"{src}>{dst}" if n == 1 else f"{src}>{dst}/{n}")
    if legal:
        texts.append(rng.choice(legal))
    if rng.random() < 0.1:
        texts.append(rng.choice(["t1>t2/1", " t1>f1", "t1 > f1", "x", "t1>t2/0003", "t1>t2/02"]))
    return {t: None if t in legal else server_refusal(game, t) for t in texts}


class Recorder:
    """Plays a solrules game and writes down what the racer's client learns at each step: the
    action, the cards it turned up, and the new ``state`` (solrace.protocol.messages.state), the
    board as the piles that changed (QC boards are large; the page patches its copy)."""

    def __init__(self, name: str, seed: int, rng: random.Random, resync: int = -1) -> None:
        self.game = solrules.new_game(name, seed)
        self.rng = rng
        self.steps: list[dict[str, Any]] = []
        self.piles = self.game.board()["piles"]
        self.case = {"game": name, "seed": seed, "start": self.state(), "steps": self.steps,
                     "resync": resync}

    def state(self) -> dict[str, Any]:
        game = self.game
        legal = list(game.legal_by_text())
        foundation, total = game.progress()
        return {"board": game.board(), "legal": legal, "safe": safe_moves(game, legal),
                "progress": {"foundation": foundation, "total": total}}

    def act(self, action: str) -> None:
        game = self.game
        refusals = sample_refusals(game, self.rng)
        seen, up = game.seen, game.face_up()
        if action == "undo":
            game.pop()
        else:
            game.push_text(action)
        state = self.state()
        piles = state.pop("board")["piles"]
        state["piles"] = {new["pile"]: new["cards"]
                          for old, new in zip(self.piles, piles, strict=True)
                          if old is not new and old["cards"] != new["cards"]}
        self.piles = piles
        self.steps.append({"action": action, "refusals": refusals,
                           "seen": places(game, game.seen & ~seen),
                           "flipped": places(game, game.face_up() & ~up), **state})


def random_game(name: str, seed: int) -> dict[str, Any]:
    """A game played at random by solrules, leaning homewards, with undos; one in four resyncs
    from its board at a random step."""
    rng = random.Random(f"engine-{name}-{seed}")
    rec = Recorder(name, seed, rng, rng.randrange(STEPS[name]) if seed % 4 == 3 else -1)
    for _ in range(STEPS[name]):
        legal = list(rec.game.legal_by_text())
        home = [m for m in legal if ">f" in m]
        roll = rng.random()
        if rec.game.move_stack and (not legal or roll < 0.12):
            rec.act("undo")
        elif not legal:
            break
        else:
            rec.act(rng.choice(home) if home and roll < 0.5 else rng.choice(legal))
    return rec.case


def won_game(name: str, entry: CatalogueEntry) -> dict[str, Any]:
    """A winning line of the catalogue, to the last card home (where random play seldom goes:
    Quadruple Canfield's auto-moves come only there), with detours taken back."""
    rng = random.Random(f"engine-won-{name}-{entry.seed}")
    rec = Recorder(name, entry.seed, rng)
    for move in entry.line:
        roll = rng.random()
        if roll < 0.08:
            rec.act(rng.choice(list(rec.game.legal_by_text())))
            rec.act("undo")
        elif roll < 0.12 and rec.game.move_stack:
            last = rec.game.move_stack[-1].text()
            rec.act("undo")
            rec.act(last)
        rec.act(move)
    assert rec.game.is_won()
    return rec.case


def check(page: Any, cases: list[dict[str, Any]]) -> dict[str, Any]:
    # One JSON text: Playwright's own serialization of a large nested argument is slow.
    return page.evaluate(CHECK, {"url": ENGINE, "cases": json.dumps(cases)})


@pytest.fixture(scope="module")
def engine_page(browser: Any, server: str) -> Iterator[Any]:
    """One page for the module (the engine is loaded once); any JavaScript error fails it. Under
    the page's Content-Security-Policy: the engine must need no eval."""
    pages = Pages(browser, server)
    try:
        yield pages.open("/", csp=True)
        assert pages.errors == [], "JavaScript errors in the browser"
    finally:
        pages.close()


def test_golden_deals_lines_and_perft(engine_page: Any) -> None:
    cases = []
    for name in GAMES:
        record = golden(name)
        deals = []
        for seed, deal in record["deals"].items():
            g = solrules.new_game(name, int(seed))
            deals.append({"golden": deal, "board": g.board(), "legal": list(g.legal_by_text())})
        for key in ("perft", "perft_depth"):
            # The deal of the line comes from solrules (the golden files hold some deals only);
            # solrules' own tests pin it to the model.
            record[key]["position"] = solrules.new_game(name, record[key]["seed"]).position()
        cases.append({"game": name, "deals": deals, "perft": record["perft"],
                      "perft_depth": record["perft_depth"]})
    result = check(engine_page, cases)
    assert result["mismatch"] is None, json.dumps(result["mismatch"], indent=1)
    assert result["counted"] == {
        c["game"]: len(c["deals"]) + len(c["perft"]["counts"]) + len(c["perft_depth"]["nodes"])
        for c in cases}


@pytest.mark.parametrize("name", GAMES)
def test_random_games_step_by_step(engine_page: Any, name: str) -> None:
    won = load_catalogue(name, REPO / "seeds" / "catalogue")[:max(1, GAMES_PER_GAME // 4)]
    cases = [random_game(name, seed) for seed in range(GAMES_PER_GAME)]
    cases += [won_game(name, entry) for entry in won]
    result = check(engine_page, cases)
    assert result["mismatch"] is None, json.dumps(result["mismatch"], indent=1)
    steps = sum(len(c["steps"]) + 1 for c in cases)
    assert result["compared"] == steps
    stats = result["stats"]
    # The games go through what matters: undos, foundation moves, auto-moves, cards to reveal.
    assert stats["undos"] > 0 and stats["safe"] > 0 and stats["refusals"] > steps
    if name != "scotch":
        assert stats["revealed"] > 0 and stats["lateReveals"] > 0 and stats["resyncs"] > 0


@pytest.mark.parametrize("name", GAMES)
def test_auto_moves_along_winning_lines(engine_page: Any, name: str) -> None:
    """Quadruple Canfield's auto-moves are rare (about one per won game, near its end): many
    winning lines, replayed from the deal with every card known, compare ``legal`` and
    ``safe`` at each position."""
    lines = load_catalogue(name, REPO / "seeds" / "catalogue")[:GAMES_PER_GAME]
    cases = []
    for entry in lines:
        g = solrules.new_game(name, entry.seed)
        case: dict[str, Any] = {"game": name, "seed": entry.seed, "position": g.position(),
                                "line": entry.line, "legal": [], "safe": []}
        for move in entry.line:
            legal = list(g.legal_by_text())
            case["legal"].append(" ".join(legal))
            case["safe"].append(safe_moves(g, legal))
            g.push_text(move)
        cases.append(case)
    result = check(engine_page, cases)
    assert result["mismatch"] is None, json.dumps(result["mismatch"], indent=1)
    assert result["compared"] == sum(len(c["line"]) for c in cases)
    assert result["stats"]["safe"] >= len(cases)


@pytest.mark.parametrize("name", GAMES)
def test_random_positions(engine_page: Any, name: str) -> None:
    """Positions near the end of a game (engine_positions.py): legal, safe and refusals; and in
    a third of them every legal move played and taken back (position texts compared)."""
    rng = random.Random(f"engine-positions-{name}")
    cases = []
    for i in range(30 * GAMES_PER_GAME):
        text = random_position(name, rng)
        g = solrules.parse_position(text)
        legal = list(g.legal_by_text())
        case: dict[str, Any] = {"game": name, "text": text, "legal": legal,
                                "safe": safe_moves(g, legal), "refusals": sample_refusals(g, rng)}
        if i % 3 == 0:
            case["after"] = []
            for move in legal:
                g.push_text(move)
                case["after"].append(g.position())
                g.pop()
        cases.append(case)
    result = check(engine_page, cases)
    assert result["mismatch"] is None, json.dumps(result["mismatch"], indent=1)
    assert result["compared"] == len(cases)
    assert result["stats"]["safe"] >= len(cases) // 10


def test_a_wrong_expectation_is_reported(engine_page: Any) -> None:
    case = random_game("yukon", 5)
    step = case["steps"][7]
    step["legal"] = [*step["legal"], "t7>t1/9"]
    result = check(engine_page, [case])
    mismatch = result["mismatch"]
    assert mismatch is not None and mismatch["step"] == 8 and mismatch["what"] == "legal"
    assert mismatch["seed"] == 5 and mismatch["game"] == "yukon"
