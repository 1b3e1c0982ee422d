"""Catalogues of certified-winnable deals: ``solrace seeds build|report``, :func:`load_catalogue`.

``solrace seeds build GAME --count N`` solves the first N seeds of the game's seed sequence (see
:func:`seed_sequence`) with :func:`solrules.solve` in ``--jobs`` worker processes and appends one
JSON object per line to ``--out`` (default ``seeds/catalogue/GAME.jsonl``, relative to the
current directory: run it from the repository root) as soon as each verdict is known::

    {"i": 0, "seed": "12345678901234567890", "verdict": "won", "length": 93, "nodes": 1204,
     "seconds": 0.08, "line": "t3>f1 t7>t2/4 ..."}

``i`` is the seed's place in the sequence, ``seed`` a decimal string (64-bit seeds do not fit a
JavaScript number), ``length`` the number of moves of ``line`` (won deals only: a winning line
from the deal, move texts separated by spaces, which :meth:`solrules.Game.push_text` replays).
Lost and unknown deals are kept too (without a line), so the file is also a record of the win
rate over that prefix of the sequence. A build that is stopped loses nothing: run it again and
it skips the seeds already in the file; when every seed is done, it rewrites the file in
sequence order, so the same build gives the same file (with a node budget; a time budget
depends on the machine).

For Yukon and Quadruple Canfield the solver knows every card ("thoughtful" solitaire): a won
deal is winnable by perfect play, the only kind of promise a catalogue can make.

The server calls :func:`load_catalogue` to draw a secret winnable deal: it reads the packaged
copy (``solrace/seeds/`` inside an installed package) or the repository's ``seeds/catalogue/``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TextIO

import solrules

#: Seed of the generator of every game's seed sequence (see :func:`seed_sequence`).
SEQUENCE_SEED = 2026


def seed_sequence(start: int | None = None) -> Iterator[int]:
    """The seeds a build solves, in order.

    Without ``start``: 64-bit seeds drawn by ``random.Random(2026).getrandbits(64)``, the same
    sequence for every game (Python guarantees the Mersenne Twister's output for an integer
    seed). With ``start``: ``start``, ``start + 1``, ... (below 2**64).
    """
    if start is not None:
        yield from range(start, 2**64)
        return
    rng = random.Random(SEQUENCE_SEED)
    while True:
        yield rng.getrandbits(64)


@dataclass(frozen=True)
class CatalogueEntry:
    """One certified-winnable deal: its seed and a winning line (move texts)."""

    seed: int
    line: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.line)


def catalogue_dir() -> Path:
    """Where the shipped catalogues are: the installed package data if present, else the
    repository's ``seeds/catalogue/``."""
    packaged = Path(__file__).parents[1] / "seeds"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "seeds" / "catalogue"


def read_results(path: Path) -> list[dict[str, Any]]:
    """Every result in a catalogue file (won, lost and unknown), in file order.

    A last line cut short by an interrupted build is ignored.
    """
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for text in f:
            text = text.strip()
            if not text:
                continue
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError:
                continue
    return out


@cache
def _load(path: Path, mtime: float) -> tuple[CatalogueEntry, ...]:
    return tuple(CatalogueEntry(int(r["seed"]), tuple(r["line"].split()))
                 for r in read_results(path) if r.get("verdict") == "won")


def load_catalogue(game: str, directory: Path | None = None) -> list[CatalogueEntry]:
    """The won deals of ``game``'s catalogue (empty if there is none), in sequence order.

    Read once per file version (cached while the file is unchanged).
    """
    solrules.game_class(game)  # ValueError for an unknown game
    path = (directory or catalogue_dir()) / f"{game}.jsonl"
    if not path.exists():
        return []
    return list(_load(path, path.stat().st_mtime))


# -- building ---------------------------------------------------------------------------------

def solve_seed(game: str, seed: int, nodes: int | None, seconds: float | None) -> dict[str, Any]:
    """Solve one deal; the result as a catalogue object (without its place ``i``)."""
    result = solrules.solve(solrules.new_game(game, seed),
                            solrules.Budget(nodes=nodes, seconds=seconds),
                            clock=time.perf_counter)
    entry: dict[str, Any] = {"seed": str(seed), "verdict": result.verdict,
                             "length": len(result.line), "nodes": result.nodes,
                             "seconds": round(result.seconds or 0.0, 3)}
    if result.verdict == "won":
        entry["line"] = " ".join(result.line)
    return entry


def _work(task: tuple[str, int, int, int | None, float | None]) -> dict[str, Any]:
    game, index, seed, nodes, seconds = task
    return {"i": index, **solve_seed(game, seed, nodes, seconds)}


class ProgressBar:
    """``[#####.....] 120/1000 won 80 lost 30 unknown 10  3.1/s  ETA 4m44s`` on one line."""

    def __init__(self, total: int, out: TextIO, clock: Any = time.monotonic) -> None:
        self.total = total
        self.out = out
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.counts = {"won": 0, "lost": 0, "unknown": 0}
        self.last = -1.0

    def add(self, verdict: str, *, fresh: bool = True) -> None:
        self.counts[verdict] = self.counts.get(verdict, 0) + 1
        if fresh:
            self.done += 1
        else:
            self.total -= 1  # counted, but not part of this run's rate and ETA

    def line(self) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        rate = self.done / elapsed
        left = self.total - self.done
        eta = f"{_duration(left / rate)}" if rate > 0 else "?"
        width = 24
        filled = width * self.done // self.total if self.total else width
        c = self.counts
        return (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                f"won {c['won']} lost {c['lost']} unknown {c['unknown']}  "
                f"{rate:.2f}/s  ETA {eta}")

    def show(self, force: bool = False) -> None:
        now = self.clock()
        if force or now - self.last >= 0.5:
            self.last = now
            self.out.write("\r" + self.line() + "\x1b[K")
            self.out.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def build(game: str, count: int, out: Path, *, nodes: int | None = None,
          seconds: float | None = None, jobs: int = 1, start: int | None = None,
          progress: TextIO | None = None, redo: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Solve the first ``count`` seeds of the sequence that ``out`` does not hold yet.

    Each result is appended to ``out`` as soon as it is known; when all ``count`` are in the
    file, it is rewritten in sequence order. Returns every result, in sequence order. ``redo``:
    verdicts (``"lost"``, ``"unknown"``) whose entries are solved again, as if not held (a
    newer solver; a won entry's line is a certificate and is kept).
    """
    solrules.game_class(game)
    if nodes is None and seconds is None:
        raise ValueError("give a node budget, a time budget, or both")
    seq = seed_sequence(start)
    seeds = [next(seq) for _ in range(count)]
    out.parent.mkdir(parents=True, exist_ok=True)
    known = {r["seed"]: r for r in read_results(out)}
    known = {k: r for k, r in known.items() if r["verdict"] not in redo}
    bar = ProgressBar(count, progress) if progress is not None else None
    tasks = []
    for i, seed in enumerate(seeds):
        if str(seed) in known:
            if bar is not None:
                bar.add(known[str(seed)]["verdict"], fresh=False)
        else:
            tasks.append((game, i, seed, nodes, seconds))
    if bar is not None:
        bar.show(force=True)
    with out.open("a", encoding="utf-8") as f:
        if out.stat().st_size and not _ends_with_newline(out):
            f.write("\n")  # an interrupted build left half a line
        for result in _run(tasks, jobs):
            f.write(json.dumps(result) + "\n")
            f.flush()
            known[result["seed"]] = result
            if bar is not None:
                bar.add(result["verdict"])
                bar.show()
    if bar is not None:
        bar.show(force=True)
        progress.write("\n")  # type: ignore[union-attr]
    order = {str(seed): i for i, seed in enumerate(seeds)}
    ours = sorted((r for r in known.values() if r["seed"] in order),
                  key=lambda r: order[r["seed"]])
    others = [r for r in read_results(out) if r["seed"] not in order]
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in ours + others:
            f.write(json.dumps({**r, "i": order.get(r["seed"], r.get("i"))}) + "\n")
    os.replace(tmp, out)
    return ours


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _context() -> Any:
    """Worker processes by fork where there is one: the parent may be ``python -m solrace``,
    whose ``__main__`` a spawned worker would run again."""
    import multiprocessing

    return multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")


def _run(tasks: Sequence[tuple[str, int, int, int | None, float | None]],
         jobs: int) -> Iterator[dict[str, Any]]:
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield _work(task)
        return
    with _context().Pool(jobs) as pool:
        yield from pool.imap_unordered(_work, tasks)


# -- win rates --------------------------------------------------------------------------------

def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95 % by default) for ``k`` successes in ``n`` trials."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return max(0.0, centre - half), min(1.0, centre + half)


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def report(game: str, results: Sequence[dict[str, Any]]) -> str:
    """Markdown: shares won / lost / unknown with Wilson intervals, solution lengths, effort."""
    n = len(results)
    out = [f"{solrules.TITLES[game]}: {n} deals"]
    out.append("")
    out.append("| verdict | deals | share | Wilson 95 % interval |")
    out.append("|---|---|---|---|")
    for verdict in ("won", "lost", "unknown"):
        k = sum(r["verdict"] == verdict for r in results)
        lo, hi = wilson(k, n)
        out.append(f"| {verdict} | {k} | {k / n:.2%} | {lo:.2%} – {hi:.2%} |")
    lengths = [r["length"] for r in results if r["verdict"] == "won"]
    if lengths:
        qs = [_quantile(lengths, q) for q in (0, 0.25, 0.5, 0.75, 1)]
        out.append("")
        out.append("Winning line length (moves): min {:.0f}, quartiles {:.0f} / {:.0f} / {:.0f}, "
                   "max {:.0f}.".format(*qs))
        out.append("")
        out.append("```")
        # Ten bins up to the 95th percentile, then one for the longest lines.
        p95 = _quantile(lengths, 0.95)
        width = max(1, -(-(int(p95) - int(qs[0]) + 1) // 10))
        edges = [int(qs[0]) + k * width for k in range(11)]
        counts = [sum(edges[k] <= x < edges[k + 1] for x in lengths) for k in range(10)]
        counts.append(sum(x >= edges[10] for x in lengths))
        labels = [f"{edges[k]}–{edges[k + 1] - 1}" for k in range(10)] + [f"≥ {edges[10]}"]
        top = max(counts)
        for label, count in zip(labels, counts, strict=True):
            bar = "#" * (max(1, round(40 * count / top)) if count else 0)
            out.append(f"{label:>11} {count:>5} {bar}")
        out.append("```")
    for verdict in ("won", "lost", "unknown"):
        sub = [r for r in results if r["verdict"] == verdict]
        if not sub:
            continue
        nodes = [r["nodes"] for r in sub]
        secs = [r["seconds"] for r in sub]
        out.append("")
        out.append(f"Effort, {verdict} ({len(sub)}): nodes median {_quantile(nodes, 0.5):,.0f}, "
                   f"p95 {_quantile(nodes, 0.95):,.0f}; seconds median "
                   f"{_quantile(secs, 0.5):.2f}, p95 {_quantile(secs, 0.95):.2f}.")
    return "\n".join(out)


# -- command line -----------------------------------------------------------------------------

def _seeds_build(args: argparse.Namespace) -> int:
    out = Path(args.out) if args.out else Path("seeds") / "catalogue" / f"{args.game}.jsonl"
    try:
        results = build(args.game, args.count, out, nodes=args.budget_nodes,
                        seconds=args.budget_seconds, jobs=args.jobs, start=args.start,
                        progress=sys.stderr, redo=args.redo.split(",") if args.redo else ())
    except KeyboardInterrupt:
        print(f"\ninterrupted: results so far are in {out}; run again to resume",
              file=sys.stderr)
        return 130
    won = sum(r["verdict"] == "won" for r in results)
    print(f"{args.game}: {won} won of {len(results)} in {out}")
    return 0


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a count is 1 or more")
    return value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``seeds build GAME --count N ...`` on an ``add_subparsers()`` object."""
    seeds: argparse.ArgumentParser = subparsers.add_parser(
        "seeds", help="catalogues of certified-winnable deals")
    actions = seeds.add_subparsers(dest="action", required=True)
    b = actions.add_parser("build", help="solve seeds and append the results to a catalogue",
                           description=__doc__.split("\n\n")[1] if __doc__ else None)
    b.add_argument("game", choices=solrules.GAMES)
    b.add_argument("--count", type=_count, required=True, help="seeds of the sequence to solve")
    b.add_argument("--budget-seconds", type=float, default=None,
                   help="time budget per deal (default 10 s when no node budget is given)")
    b.add_argument("--budget-nodes", type=int, default=None, help="node budget per deal")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per CPU)")
    b.add_argument("--out", default=None, help="file (default seeds/catalogue/GAME.jsonl)")
    b.add_argument("--start", type=int, default=None,
                   help="consecutive seeds from here instead of the random sequence")
    b.add_argument("--redo", default="", metavar="VERDICTS",
                   help="solve again the entries with these verdicts (e.g. lost,unknown)")
    b.add_argument("--log-level", default="WARNING")
    b.set_defaults(func=_seeds_build_default)
    r = actions.add_parser("report", help="win rates and solution lengths of a catalogue file")
    r.add_argument("game", choices=solrules.GAMES)
    r.add_argument("--file", default=None, help="file (default seeds/catalogue/GAME.jsonl)")
    r.add_argument("--count", type=_count, default=None, help="only the first N of the sequence")
    r.add_argument("--log-level", default="WARNING")
    r.set_defaults(func=_seeds_report)
    return seeds


def _seeds_report(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else Path("seeds") / "catalogue" / f"{args.game}.jsonl"
    results = sorted(read_results(path), key=lambda r: r.get("i", 0))
    if args.count is not None:
        results = [r for r in results if r.get("i", 0) < args.count]
    if not results:
        print(f"no results in {path}", file=sys.stderr)
        return 1
    print(report(args.game, results))
    return 0


def _seeds_build_default(args: argparse.Namespace) -> int:
    if args.budget_seconds is None and args.budget_nodes is None:
        args.budget_seconds = 10.0
    return _seeds_build(args)
