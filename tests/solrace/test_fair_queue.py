"""The solver's waiting room (solrace.solver.fair_queue), as pure bookkeeping: who goes next
when hints, par and the positions of analyses from many addresses and players wait, with
what each job cost told after it ran."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
from solrace.settings import ANALYSIS_TURN
from solrace.solver import fair_queue
from solrace.solver.fair_queue import FairQueue, Lines


@dataclass
class Analysis:
    """An analysis as the analyst drives it: one position waiting at a time, the next asked
    as soon as the last is answered; ``costs``: each position's seconds in the worker."""

    client: str
    player: str
    costs: list[float]
    name: str = ""
    served: list[int] = field(default_factory=list)  # the job numbers of its positions

    def next_job(self) -> tuple[str, float] | None:
        i = len(self.served)
        return (self.name or self.client, self.costs[i]) if i < len(self.costs) else None


def run(queue: FairQueue[tuple[str, float]], analyses: list[Analysis],
        arrive: dict[int, list[Analysis]] | None = None, until: Analysis | None = None,
        jobs: int = 10_000) -> list[str]:
    """Feed ``queue`` as the solver does: pop, charge what the job cost, let its analysis ask
    its next position. ``arrive``: analyses that start just before job n. The names served, in
    order, until ``until`` is done (or ``jobs`` jobs)."""
    by_name = {a.name or a.client: a for a in analyses}
    for a in analyses:
        job = a.next_job()
        assert job is not None
        queue.add_analysis(job, a.client, a.player)
    order: list[str] = []
    for n in range(jobs):
        for a in (arrive or {}).get(n, []):
            by_name[a.name or a.client] = a
            job = a.next_job()
            assert job is not None
            queue.add_analysis(job, a.client, a.player)
        popped = queue.pop()
        if popped is None:
            break
        name, cost = popped
        queue.charge(cost)
        order.append(name)
        a = by_name[name]
        a.served.append(n)
        job = a.next_job()
        if job is not None:
            queue.add_analysis(job, a.client, a.player)
        if until is not None and len(until.served) == len(until.costs):
            break
    return order


def test_a_newcomers_cheap_analysis_goes_between_expensive_ones() -> None:
    """Four addresses, two long analyses each whose positions take the whole budget (3 s);
    a fifth address asks for an analysis of six cheap positions: it waits for at most one
    position of each other address (those whose turn in this round has not come yet), then
    its positions go one after the other: each other address has had more of the worker."""
    queue: FairQueue[tuple[str, float]] = FairQueue()
    heavy = [Analysis(f"10.0.0.{i}", "", [3.0] * 40, name=f"10.0.0.{i}/{k}")
             for i in range(1, 5) for k in range(2)]
    newcomer = Analysis("192.0.2.7", "", [0.05] * 6)
    order = run(queue, heavy, arrive={17: [newcomer]}, until=newcomer)
    others = Counter(name.split("/")[0] for name in order[17:] if name != "192.0.2.7")
    assert max(others.values()) == 1 and len(order) - 17 == 6 + sum(others.values()) <= 6 + 4
    assert newcomer.served == list(range(newcomer.served[0], newcomer.served[0] + 6))
    # (First come, first served, as the old queue did, he waited for all eight each time.)


def test_positions_costing_the_same_take_turns_by_address() -> None:
    queue: FairQueue[tuple[str, float]] = FairQueue()
    heavy = [Analysis(f"10.0.0.{i}", "", [1.0] * 40, name=f"10.0.0.{i}/{k}")
             for i in range(1, 5) for k in range(2)]
    newcomer = Analysis("192.0.2.7", "", [1.0] * 6)
    order = run(queue, heavy, arrive={17: [newcomer]}, until=newcomer)
    assert newcomer.served[0] - 17 <= 4
    # Round robin: between two of his positions, one of each other address.
    for a, b in zip(newcomer.served, newcomer.served[1:], strict=False):
        between = Counter(name.split("/")[0] for name in order[a + 1:b])
        assert set(between.values()) == {1} and len(between) == 4


def test_an_address_gets_one_share_however_many_analyses_it_has() -> None:
    queue: FairQueue[tuple[str, float]] = FairQueue()
    many = [Analysis("10.0.0.1", "", [1.0] * 100, name=f"many{k}") for k in range(8)]
    one = Analysis("10.0.0.2", "", [1.0] * 100, name="one")
    order = run(queue, [*many, one], jobs=40)
    assert order.count("one") == 20  # half of the worker, not a ninth


def test_shares_are_of_time_not_of_turns() -> None:
    """An address whose positions cost three times as much gets a third as many."""
    queue: FairQueue[tuple[str, float]] = FairQueue()
    slow = Analysis("10.0.0.1", "", [3.0] * 100, name="slow")
    quick = Analysis("10.0.0.2", "", [1.0] * 100, name="quick")
    order = run(queue, [slow, quick], jobs=80)
    time = Counter({"slow": 3.0 * order.count("slow"), "quick": 1.0 * order.count("quick")})
    assert abs(time["slow"] - time["quick"]) <= 3.0
    assert order.count("quick") == 3 * order.count("slow")


def test_players_behind_one_address_take_turns_within_its_share() -> None:
    """A club behind one address: Ann has three analyses going, Bob one; another address
    has one. The club gets half the worker, and Bob half of the club's."""
    queue: FairQueue[tuple[str, float]] = FairQueue()
    club = [Analysis("10.0.0.1", "ann", [1.0] * 100, name=f"ann{k}") for k in range(3)]
    bob = Analysis("10.0.0.1", "bob", [1.0] * 100, name="bob")
    other = Analysis("10.0.0.2", "", [1.0] * 100, name="other")
    order = run(queue, [*club, bob, other], jobs=40)
    assert order.count("other") == 20 and order.count("bob") == 10
    assert sum(order.count(f"ann{k}") for k in range(3)) == 10


def test_a_line_that_stopped_for_a_moment_does_not_jump_ahead() -> None:
    """An analysis asks its next position only once the last is answered: its line is empty
    for a moment after each turn. It must keep its share, not start again level with the
    line served last (which would give a slow line turns as if each were free)."""
    lines = Lines()
    lines.wake("slow")
    lines.wake("quick")
    order = []
    for _ in range(8):
        line = lines.take()
        order.append(line)
        lines.done(4.0 if line == "slow" else 1.0, more=line == "quick")
        if line == "slow":
            lines.wake("slow")  # comes back at once, with its share spent
    assert order == ["slow", "quick", "quick", "quick", "quick", "slow", "quick", "quick"]


def test_hints_go_first_but_an_analysis_gets_a_turn_every_few_jobs() -> None:
    queue: FairQueue[str] = FairQueue()
    for i in range(30):
        queue.add_hint(f"10.1.0.{i}", f"hint{i}", player="r1")
    queue.add_par("par")
    queue.add_analysis("pos1", "10.2.0.1", "")
    queue.add_analysis("pos2", "10.2.0.2", "")
    order = [queue.pop() for _ in range(12)]
    turn = ANALYSIS_TURN
    assert order[turn] == "pos1" and order[2 * turn + 1] == "pos2"
    assert all(str(job).startswith("hint") for i, job in enumerate(order)
               if i not in (turn, 2 * turn + 1))
    # With no analysis waiting, hints and par go on as before.
    rest = []
    while (job := queue.pop()) is not None:
        rest.append(job)
    assert rest[-1] == "par" and len(rest) == 30 - 10 + 1


def test_hints_take_turns_by_address_then_by_racer() -> None:
    queue: FairQueue[str] = FairQueue()
    for n in range(3):
        queue.add_hint("club", f"ann{n}", player="race1/p1")
    queue.add_hint("club", "bob0", player="race2/p1")
    queue.add_hint("other", "other0", player="race3/p2")
    queue.add_hint("other", "other1", player="race3/p2")
    order = []
    while (job := queue.pop()) is not None:
        order.append(job)
    assert order == ["ann0", "other0", "bob0", "other1", "ann1", "ann2"]
    assert queue.clients() == 0


def test_what_is_remembered_of_lines_gone_idle_is_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A smaller bound than the server's (4096): the same pruning, without the test spending
    # 15 CPU-seconds on three times 4096 lines.
    monkeypatch.setattr(fair_queue, "MAX_IDLE_LINES", 256)
    bound = fair_queue.MAX_IDLE_LINES
    queue: FairQueue[str] = FairQueue()
    queue.add_analysis("long", "10.0.0.1", "")
    for i in range(3 * bound):
        # Addresses coming once each, with a turn more expensive than the long line's.
        queue.add_analysis(f"once{i}", f"10.9.{i // 256}.{i % 256}", f"pl{i}")
        job = queue.pop()
        queue.charge(5.0)
        if job == "long":
            queue.add_analysis("long", "10.0.0.1", "")
    lines = queue.analyses
    assert len(lines.clients.finish) <= bound
    assert len(lines.players) <= 2 * (len(lines.per_client) + len(lines.clients.finish)) + 16
