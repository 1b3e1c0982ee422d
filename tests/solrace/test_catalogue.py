"""`solrace seeds build` and the catalogue loader: format, resume, sequence, loading."""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path

import pytest
import solrules
from solrace.solver import catalogue
from solrace.solver.catalogue import (
    CatalogueEntry,
    ProgressBar,
    add_parser,
    build,
    load_catalogue,
    read_results,
    seed_sequence,
)

#: Small node budgets keep every build here to a fraction of a second per deal.
NODES = 3000


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_seed_sequence_is_fixed_and_documented() -> None:
    seq = seed_sequence()
    first = [next(seq) for _ in range(3)]
    rng = random.Random(catalogue.SEQUENCE_SEED)
    assert first == [rng.getrandbits(64) for _ in range(3)]
    assert all(0 <= s < 2**64 for s in first)
    start = seed_sequence(10)
    assert [next(start) for _ in range(3)] == [10, 11, 12]


def test_build_writes_one_object_per_seed(tmp_path: Path) -> None:
    out = tmp_path / "cat" / "scotch.jsonl"
    results = build("scotch", 4, out, nodes=NODES, start=617)
    assert [r["seed"] for r in results] == ["617", "618", "619", "620"]
    entries = lines(out)
    assert entries == results
    for i, e in enumerate(entries):
        assert e["i"] == i
        assert set(e) >= {"seed", "verdict", "length", "nodes", "seconds"}
        assert isinstance(e["seed"], str)
        if e["verdict"] == "won":
            moves = str(e["line"]).split()
            assert len(moves) == e["length"]
            g = solrules.new_game("scotch", int(str(e["seed"])))
            for text in moves:
                g.push_text(text)
            assert g.is_won()
        else:
            assert "line" not in e and e["length"] == 0
    assert any(e["verdict"] == "won" for e in entries)


def test_build_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "yukon.jsonl"
    build("yukon", 2, out, nodes=NODES, start=300000)
    # An interrupted run left a line cut short: it is ignored and the seed solved again.
    with out.open("a") as f:
        f.write('{"i": 2, "seed": "300002", "verd')
    solved: list[int] = []
    real = catalogue.solve_seed

    def spy(game: str, seed: int, nodes: int | None, seconds: float | None) -> dict[str, object]:
        solved.append(seed)
        return real(game, seed, nodes, seconds)

    monkeypatch.setattr(catalogue, "solve_seed", spy)
    results = build("yukon", 4, out, nodes=NODES, start=300000)
    assert solved == [300002, 300003]  # the first two were in the file already
    assert [r["seed"] for r in results] == ["300000", "300001", "300002", "300003"]
    assert [e["seed"] for e in lines(out)] == ["300000", "300001", "300002", "300003"]
    assert len(read_results(out)) == 4
    solved.clear()
    build("yukon", 4, out, nodes=NODES, start=300000)
    assert solved == []  # nothing left to do


def test_build_in_worker_processes(tmp_path: Path) -> None:
    out = tmp_path / "quadruple-canfield.jsonl"
    results = build("quadruple-canfield", 2, out, nodes=2000, jobs=2, start=100000)
    assert [r["seed"] for r in results] == ["100000", "100001"]
    assert [e["seed"] for e in lines(out)] == ["100000", "100001"]


def test_build_needs_a_budget(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build("scotch", 1, tmp_path / "x.jsonl")


def test_progress_bar_line() -> None:
    ticks = iter([0.0, 10.0, 10.0])
    out = io.StringIO()
    bar = ProgressBar(10, out, clock=lambda: next(ticks))
    bar.add("won")
    bar.add("lost")
    line = bar.line()
    assert "2/10" in line and "won 1 lost 1 unknown 0" in line
    assert "0.20/s" in line and "ETA 40s" in line


def test_loader_returns_won_deals_in_order(tmp_path: Path) -> None:
    path = tmp_path / "scotch.jsonl"
    rows = [{"i": 0, "seed": "5", "verdict": "won", "length": 2, "nodes": 1, "seconds": 0.0,
             "line": "t1>f1 t2>f1"},
            {"i": 1, "seed": "6", "verdict": "lost", "length": 0, "nodes": 1, "seconds": 0.0},
            {"i": 2, "seed": str(2**64 - 1), "verdict": "won", "length": 1, "nodes": 1,
             "seconds": 0.0, "line": "t3>f2"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    entries = load_catalogue("scotch", tmp_path)
    assert entries == [CatalogueEntry(5, ("t1>f1", "t2>f1")),
                       CatalogueEntry(2**64 - 1, ("t3>f2",))]
    assert len(entries[0]) == 2
    assert load_catalogue("yukon", tmp_path) == []
    with pytest.raises(ValueError):
        load_catalogue("klondike", tmp_path)


@pytest.mark.parametrize("game", solrules.GAMES)
def test_shipped_catalogues_load(game: str) -> None:
    entries = load_catalogue(game)
    assert len(entries) >= 1000
    assert len({e.seed for e in entries}) == len(entries)
    g = solrules.new_game(game, entries[0].seed)
    for text in entries[0].line:
        g.push_text(text)
    assert g.is_won()


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="solrace")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    out = tmp_path / "c.jsonl"
    args = parser.parse_args(["seeds", "build", "scotch", "--count", "2", "--budget-nodes",
                              str(NODES), "--jobs", "1", "--out", str(out), "--start", "1"])
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert "won" in captured.out and str(out) in captured.out
    assert "2/2" in captured.err  # the progress bar
    assert [e["seed"] for e in lines(out)] == ["1", "2"]
    with pytest.raises(SystemExit):
        parser.parse_args(["seeds", "build", "scotch", "--count", "0"])
