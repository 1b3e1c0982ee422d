"""A CPU burner: one busy process per core (or ``--procs N``) at normal priority, until killed
or ``--seconds`` pass. ``make test-under-load`` runs the suite beside it: no test may depend on
an idle machine (issue 17)."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import time


def spin(until: float, parent: int) -> None:
    """Busy until ``until``, or until ``parent`` is gone (this process is then adopted)."""
    x = 0
    while time.monotonic() < until and os.getppid() == parent:
        for _ in range(100_000):
            x = (x * 31 + 7) % 1_000_003


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seconds", type=float, default=3600.0)
    args = parser.parse_args()
    until = time.monotonic() + args.seconds
    procs = [multiprocessing.Process(target=spin, args=(until, os.getpid()), daemon=True)
             for _ in range(args.procs)]
    for p in procs:
        p.start()

    def stop(*_: object) -> None:  # killed: take the spinners with it
        for p in procs:
            p.terminate()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    # Whoever started it (make test-under-load's shell, whose trap kills it) may itself be
    # killed at once (SIGKILL, a timeout): then nobody would stop it, and it would keep a
    # shared machine's cores busy for the rest of the hour. Each process ends with its parent.
    parent = os.getppid()
    while any(p.is_alive() for p in procs):
        if os.getppid() != parent:
            stop()
        procs[0].join(0.5)


if __name__ == "__main__":
    main()
