"""`solrules deal|play|solve` as a user runs it: the command line's own ``main`` in this
process (its input, output and exit code), and once through ``python -m solrules``."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import traceback
from collections import Counter
from dataclasses import dataclass

import pytest
import solrules
from solrules.cli import main

from tests.solrules.helpers import piles

TIMEOUT = 30


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def run(*args: str, stdin: str = "") -> Ran:
    """``solrules ARGS`` with ``stdin`` as its input: its exit code and what it printed (an
    exception that escapes is printed as a traceback, as the interpreter would)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse, and sys.exit
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = old_stdin
    return Ran(code, out.getvalue(), err.getvalue())


def no_traceback(proc: Ran) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr


def test_python_dash_m_runs_the_same_command_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "solrules", "deal", "scotch", "617", "--json"],
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == solrules.new_game("scotch", 617).board()


@pytest.mark.parametrize("game", solrules.GAMES)
def test_deal_json_is_the_board(game: str) -> None:
    proc = run("deal", game, "617", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == solrules.new_game(game, 617).board()


@pytest.mark.parametrize("game", solrules.GAMES)
def test_deal_json_reveal(game: str) -> None:
    proc = run("deal", game, "617", "--json", "--reveal")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == solrules.new_game(game, 617).board(reveal=True)


def test_deal_text_shows_every_face_up_card_and_no_face_down_one() -> None:
    proc = run("deal", "yukon", str(2**64 - 1))
    assert proc.returncode == 0, proc.stderr
    assert "Yukon" in proc.stdout
    g = solrules.new_game("yukon", 2**64 - 1)
    tokens = proc.stdout.replace(":", " ").split()
    shown, full = piles(g), piles(g, reveal=True)
    for pid, cards in full.items():
        for card, seen in zip(cards, shown[pid], strict=True):
            assert (str(card) in tokens) == (seen is not None), card


CARD = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][CSHD](?![A-Za-z0-9])")


@pytest.mark.parametrize("game", solrules.GAMES)
def test_deal_text_reveal_shows_every_card(game: str) -> None:
    """`--reveal`: "show face-down cards too" -- the reserve and stock included."""
    proc = run("deal", game, "2", "--reveal")
    assert proc.returncode == 0, proc.stderr
    full = piles(solrules.new_game(game, 2), reveal=True)
    assert Counter(CARD.findall(proc.stdout)) == Counter(str(c) for cs in full.values()
                                                         for c in cs)


def test_play_hides_face_down_cards() -> None:
    proc = run("play", "yukon", "2", stdin="quit\n")
    g = solrules.new_game("yukon", 2)
    shown = [c for cs in piles(g).values() for c in cs if c is not None]
    assert Counter(CARD.findall(proc.stdout)) == Counter(shown)


def test_deal_text_scotch_lists_all_cards() -> None:
    proc = run("deal", "scotch", "1")
    assert proc.returncode == 0, proc.stderr
    tokens = proc.stdout.split()
    for cards in piles(solrules.new_game("scotch", 1)).values():
        assert all(str(c) in tokens for c in cards)


@pytest.mark.parametrize(
    "args",
    [("deal", "klondike", "1"), ("deal", "scotch", "-5"), ("deal", "scotch", "abc"),
     ("deal", "scotch", str(2**64)), ("deal", "scotch"), (), ("shuffle", "scotch", "1"),
     ("play", "yukon", "1.5")],
)
def test_bad_arguments_give_a_message_not_a_traceback(args: tuple[str, ...]) -> None:
    proc = run(*args)
    assert proc.returncode != 0
    no_traceback(proc)
    assert proc.stderr.strip()


def test_play_moves_undo_legal_quit() -> None:
    g = solrules.new_game("scotch", 1)
    first = g.legal_moves()[0].text()
    g.push_text(first)
    after = {m.text() for m in g.legal_moves()}
    proc = run("play", "scotch", "1", stdin=f"{first}\nlegal\nundo\nquit\n")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    out = proc.stdout
    legal_line = next(line for line in out.splitlines() if set(line.split()) >= after)
    assert set(legal_line.replace("move>", " ").split()) == after
    assert "1 moves" in out or "1 move" in out
    assert out.count(" 0 moves") == 2 and out.count(" 1 moves") == 1  # the undo took it back


@pytest.mark.parametrize(
    "line",
    ["foo", "t1>t2/2", "t1>zz", "", "t1>t2/99999999999999999999", "t1>t2é", "x" * 10000,
     "\x00", "undo", "t1>f1/0", "   ", "legal extra", "w>s"],
)
def test_play_bad_input_is_a_message_never_a_traceback(line: str) -> None:
    proc = run("play", "scotch", "1", stdin=f"{line}\nt16>t2\nquit\n")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    assert "1 moves" in proc.stdout or "1 move" in proc.stdout  # still playing afterwards


def test_play_refusal_says_why() -> None:
    proc = run("play", "scotch", "1", stdin="t1>t2/2\nquit\n")
    g = solrules.new_game("scotch", 1)
    reason = g.refusal(solrules.Move.from_text("t1>t2/2"))
    assert reason and reason in proc.stdout + proc.stderr


def test_play_ends_cleanly_on_end_of_input() -> None:
    proc = run("play", "quadruple-canfield", "5", stdin="s>w\n")
    assert proc.returncode == 0
    no_traceback(proc)


# -- solve ----------------------------------------------------------------------------------------

def replay(game: str, seed: int, line: list[str]) -> bool:
    g = solrules.new_game(game, seed)
    for text in line:
        g.push_text(text)
    return g.is_won()


def test_solve_prints_verdict_line_and_statistics() -> None:
    proc = run("solve", "scotch", "12", "--budget-nodes", "20000")
    assert proc.returncode == 0, proc.stderr
    no_traceback(proc)
    head, line, stats = proc.stdout.strip().splitlines()
    assert head.startswith("Scotch Patience 12: won in ")
    assert f"won in {len(line.split())} moves" in head
    assert replay("scotch", 12, line.split())
    assert "positions searched" in stats and " s" in stats


def test_solve_json() -> None:
    proc = run("solve", "yukon", "13", "--budget-nodes", "20000", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["game"], out["seed"], out["verdict"]) == ("yukon", "13", "won")
    assert isinstance(out["nodes"], int) and isinstance(out["max_depth"], int)
    assert isinstance(out["seconds"], float)
    assert replay("yukon", 13, out["line"])


def test_solve_says_thoughtful_and_unknown() -> None:
    proc = run("solve", "quadruple-canfield", "1", "--budget-nodes", "5")
    assert proc.returncode == 0, proc.stderr
    assert "unknown" in proc.stdout and "budget" in proc.stdout
    proc = run("solve", "yukon", "13", "--budget-nodes", "20000")
    assert "thoughtful" in proc.stdout


def test_solve_progress_line_on_stderr() -> None:
    proc = run("solve", "yukon", "16603661972629786250", "--budget-nodes", "3000",
               "--progress-every", "0")
    assert proc.returncode == 0, proc.stderr
    assert "searching: " in proc.stderr and " nodes, depth " in proc.stderr
    # Rewritten in place with "\r" (which text mode reads as a line end), then blanked.
    assert proc.stderr.count("searching: ") >= 2
    assert proc.stderr.splitlines()[-1].strip() == ""
    assert "searching" not in proc.stdout


@pytest.mark.parametrize(
    "args",
    [("solve", "klondike", "1"), ("solve", "scotch"), ("solve", "scotch", "1", "--budget-nodes",
     "0"), ("solve", "scotch", "1", "--budget-seconds", "-1"), ("solve", "scotch", "x")],
)
def test_solve_bad_arguments(args: tuple[str, ...]) -> None:
    proc = run(*args)
    assert proc.returncode != 0
    no_traceback(proc)
    assert proc.stderr.strip()
