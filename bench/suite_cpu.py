"""Where the test suite's CPU goes: runs a command (by default the suite as ``make test`` runs
it) and adds up, by kind of process, the CPU seconds of every process that ran meanwhile.

Run from the repository root::

    .venv/bin/python bench/suite_cpu.py                   # the whole suite
    .venv/bin/python bench/suite_cpu.py -- -m "not browser"   # pytest arguments after --

Every process is read from ``/proc`` once a second (its user + system time, kept per process id
and start time), so a process that lived less than a second may be missed. Only the command's
own processes count (pytest and every process below it), so that other work on a shared
machine stays out of the figures; ``--machine`` counts every process instead (those that were
running before the command from their time at the start). Also reported: the wall
time, and the share of the machine's CPU time spent by processes at normal priority, at a
lowered one ("nice": the servers' solver workers) and idle (``/proc/stat``). On 2 cores a suite
whose normal-priority share is near 100 % is CPU-bound: only less work makes it faster.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import threading
import time

HZ = os.sysconf("SC_CLK_TCK")


def kind(pid: str) -> str | None:
    """A short name for what a process is."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if "chromium" in cmd:
        part = next((a[7:] for a in cmd.split() if a.startswith("--type=")), "browser")
        return f"chromium {part}"
    if "playwright/driver" in cmd:
        return "playwright driver (node)"
    if "solver.worker" in cmd or "multiprocessing.spawn" in cmd:
        return "solver workers (nice)"
    if "solrace" in cmd and " serve" in cmd:
        return "solrace serve (child processes)"
    if "execnet" in cmd or "exec(eval(sys.stdin" in cmd or "pytest" in cmd:
        return "pytest workers (tests and in-process servers)"
    if "redis-server" in cmd:
        return "redis-server"
    if "nginx" in cmd:
        return "nginx"
    return "other"


def stat_times() -> tuple[int, int, int]:
    """(normal priority, nice, idle) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    user, nice, system, idle, iowait, irq, softirq = v
    return user + system + irq + softirq, nice, idle + iowait


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="*", help="pytest arguments (after --)")
    parser.add_argument("--machine", action="store_true",
                        help="count every process of the machine, not only the command's")
    args = parser.parse_args()
    pytest_args = args.command or ["-n", "4", "--dist", "loadgroup", "--no-loadscope-reorder"]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args]
    # (pid, start time) -> its kind, its CPU seconds when first seen (0 if it started after us)
    # and its latest CPU seconds.
    names: dict[tuple[str, str], str | None] = {}
    base: dict[tuple[str, str], float] = {}
    last: dict[tuple[str, str], float] = {}
    ours: set[str] = set()  # process ids of the command's tree (a pid is not reused meanwhile)
    done = threading.Event()
    root = ""

    def sample(first: bool) -> None:
        seen: dict[str, tuple[str, list[str]]] = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            seen[pid] = (fields[1], fields)
        for pid, (_, fields) in seen.items():
            if not args.machine:
                chain, up = [], pid
                while up in seen and up not in ours and up != root:
                    chain.append(up)
                    up = seen[up][0]
                if up != root and up not in ours:
                    continue
                ours.update(chain)
            used = (int(fields[11]) + int(fields[12])) / HZ
            key = (pid, fields[19])  # a pid is reused: its start time tells processes apart
            if key not in names:
                names[key] = kind(pid)
                base[key] = used if first else 0.0
            last[key] = used

    def sampler() -> None:
        while not done.wait(1.0):
            sample(False)

    if args.machine:
        sample(True)
    before = stat_times()
    start = time.perf_counter()
    env = {**os.environ, "SOLRACE_REQUIRE_BROWSER": "1"}
    proc = subprocess.Popen(command, env=env)
    root = str(proc.pid)
    ours.add(root)
    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    status = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    thread.join()
    sample(False)
    after = stat_times()
    totals: dict[str, float] = collections.defaultdict(float)
    for key, name in names.items():
        if name is not None:
            totals[name] += last[key] - base[key]
    spent = [a - b for a, b in zip(after, before, strict=True)]
    share = [100 * s / (sum(spent) or 1) for s in spent]
    print(f"\nwall {wall:.1f} s; machine: normal priority {share[0]:.0f} %, "
          f"nice {share[1]:.0f} %, idle {share[2]:.0f} %")
    whole = sum(totals.values())
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        if seconds >= 0.5:
            print(f"{seconds:8.1f} s  {100 * seconds / whole:4.0f} %  {name}")
    print(f"{whole:8.1f} s  in all")
    return status


if __name__ == "__main__":
    sys.exit(main())
