"""Which tests cost the machine the most CPU: a pytest plugin, and a report of what it recorded.

Run from the repository root (any pytest arguments; here the browser tests as ``make test``
runs them)::

    PYTHONPATH=bench .venv/bin/python -m pytest -p cpu_per_test -n 4 --dist loadgroup \\
        --no-loadscope-reorder tests/client
    .venv/bin/python bench/cpu_per_test.py            # the report

For each test, the plugin reads from ``/proc`` the CPU time (user + system, and that of reaped
children) of the pytest process that runs it and of every process below it — that worker's
Chromium and Playwright driver, servers it started — before and after the test's setup, call
and teardown, and appends a line to ``test-artifacts/cpu-per-test.tsv``: the test, its wall
seconds, then CPU seconds of Chromium, of the worker itself, and of its other processes. With
pytest-xdist every worker has its own browser, so a test is charged for its own worker's
processes only (a server shared by the session is charged to the tests of the worker that
started it). A process that exits takes its time with it unless its parent reaps it: a test
that closes a browser can show negative Chromium time; the report leaves such lines out.
"""

from __future__ import annotations

import collections
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HZ = os.sysconf("SC_CLK_TCK")
OUT = Path(__file__).resolve().parents[1] / "test-artifacts" / "cpu-per-test.tsv"


def tree_cpu() -> dict[str, float]:
    """CPU seconds of this process and of every process below it, by kind."""
    children: dict[int, list[tuple[int, int, str]]] = collections.defaultdict(list)
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        command = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        children[int(fields[1])].append(
            (int(name), sum(int(x) for x in fields[11:15]), command))
    me = os.getpid()
    with open(f"/proc/{me}/stat") as f:
        stat = f.read()
    own = sum(int(x) for x in stat[stat.rindex(")") + 2:].split()[11:13])
    total = {"chromium": 0, "self": own, "other": 0}
    stack = [me]
    while stack:
        for pid, cpu, command in children.get(stack.pop(), []):
            total["chromium" if "chrom" in command else "other"] += cpu
            stack.append(pid)
    return {k: v / HZ for k, v in total.items()}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    before, start = tree_cpu(), time.perf_counter()
    yield
    after, wall = tree_cpu(), time.perf_counter() - start
    d = {k: after[k] - before[k] for k in before}
    OUT.parent.mkdir(exist_ok=True)
    with OUT.open("a") as f:
        f.write(f"{item.nodeid}\t{wall:.2f}\t{d['chromium']:.2f}\t{d['self']:.2f}"
                f"\t{d['other']:.2f}\n")


def report(rows: list[list[str]], top: int = 15) -> None:
    kept = [r for r in rows if float(r[2]) >= 0]
    print(f"{len(rows)} tests recorded, {len(rows) - len(kept)} left out (a browser closed)")
    sums = [sum(float(r[i]) for r in kept) for i in (1, 2, 3, 4)]
    print("in all: wall {:.0f} s; CPU: Chromium {:.0f} s, workers {:.0f} s, other {:.0f} s"
          .format(*sums))
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in kept:
        entry = by_file[r[0].split("::")[0]]
        entry[0] += float(r[2])
        entry[1] += float(r[2]) + float(r[3]) + float(r[4])
        entry[2] += 1
    print("\nby file: Chromium CPU-s, all CPU-s, tests")
    for name, (chromium, every, count) in sorted(by_file.items(), key=lambda x: -x[1][1]):
        print(f"{chromium:8.1f} {every:8.1f} {count:4d}  {name}")
    print(f"\nthe {top} costliest tests: Chromium CPU-s, all CPU-s, wall s")
    for r in sorted(kept, key=lambda r: -(float(r[2]) + float(r[3]) + float(r[4])))[:top]:
        every = float(r[2]) + float(r[3]) + float(r[4])
        print(f"{float(r[2]):8.1f} {every:8.1f} {float(r[1]):8.1f}  {r[0]}")


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else OUT
    if not path.exists():
        print(f"nothing recorded at {path}: run pytest with -p cpu_per_test first", file=sys.stderr)
        return 1
    report([line.rstrip("\n").split("\t") for line in path.read_text().splitlines() if line])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
