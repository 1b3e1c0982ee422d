"""Settings for the whole suite: Hypothesis profiles, markers, and a report of the slowest.

Profiles (``HYPOTHESIS_PROFILE``): ``quick`` (the default, what ``make test`` runs: each
property test gets a fifth of its examples, at least five) and ``thorough`` (``make
test-all``: the full counts). A property test asks :func:`tests.profiles.examples` for its
count, so both profiles keep every test, only the number of cases changes.

Markers, set here: ``browser`` (a test that uses the ``browser`` fixture of tests/client:
Chromium; the client engine's Node self-test there is not one), ``cluster``
(several processes on a real Redis); ``slow`` is set by a test itself and left out of the
default run (``make test-all`` runs it). ``-m "not browser"`` and the like pick a part of the
suite for a quick loop.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("quick", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          print_blob=True)
settings.register_profile("thorough", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


#: The tests that take the longest, longest first (``file::test`` prefixes; a file name alone
#: ranks all its tests), from the suite's durations (docs/performance.md, "Test suite"): they
#: are handed out first, so that none starts last, after the other workers are done.
#:
#: How ``make test`` shares the tests out (``-n 5 --dist loadgroup``): one test at a time, in
#: the order set below, to whichever worker has fewer than three waiting. No test carries an
#: ``xdist_group`` mark, so every test is its own unit. (Earlier sessions marked whole files
#: as groups, but with pytest 9 the marks never reached pytest-xdist 3.8: it renames
#: ``item._nodeid``, which pytest 9 no longer reads. Test by test is also what balances best:
#: the wall time is that of the busiest worker.)
LONGEST = (
    "test_compose.py",  # 70-90 s waiting on Docker (skipped at once where there is none)
    "client/test_arena.py::test_an_arena_from_its_page_to_the_podium",
    "client/test_contrast.py::test_every_text_has_enough_contrast",
    "client/test_analysis.py::test_a_losing_move_is_marked_on_the_racers_replay",
    "client/test_arena.py",
    "client/test_fairplay.py",
    "client/test_analysis.py",
    "client/test_race.py",
    "client/test_tournament.py::test_tournament_from_home_page_to_standings",
    "client/test_live.py",
    "client/test_finish.py",
    "client/test_home.py::test_replay_by_race_time_with_moves_in_words",
    "client/test_solver_ui.py::test_hint_marks_a_legal_move_and_is_counted",
    "client/test_nginx.py",
    "client/test_play.py",
    "client/test_tournament.py",
    "client/test_together.py",
    "client/test_engine.py",
    "client/test_layout.py",
    "client/test_teach.py",
    "solrace/test_analysis.py::test_a_newcomers_analysis_completes",
    "solrace/test_cluster_play.py",
    "solrace/test_http.py::test_huge_replays_never_stall_the_server",
    "solrules/test_solver_yukon.py::test_twins_never_fire_on_a_catalogue_win_first_moves",
    "solrules/test_properties.py",
    "solrace/test_cluster",
    "solrules/test_oracle.py",
    "solrules/test_solver_scotch.py",
    "solrules/test_solver.py",
    "solrace/test_pool.py",
    "solrace/test_sealed_pool.py",
    "solrace/test_http.py",
    "solrace/test_accounts.py",
    "solrace/test_key_file.py",
    "solrace/test_daily_deal.py",
    "solrace/test_durability.py",
)


def _rank(nodeid: str) -> int:
    name = nodeid.removeprefix("tests/")
    for i, prefix in enumerate(LONGEST):
        if name.startswith(prefix):
            return i
    return len(LONGEST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath)
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        if path.endswith(("test_cluster.py", "test_cluster_play.py", "test_cluster_accounts.py",
                          "test_cluster_fairplay.py", "test_cluster_arenas.py",
                          "test_nginx.py")):
            item.add_marker(pytest.mark.cluster)
    # The browser tests first, then the others, each part longest first: a worker keeps its
    # Chromium (a fixture of the tests/client package) until it leaves that package. A stable
    # sort: within a rank, tests keep their order.
    # The compose test goes first of all: it mostly waits on Docker, beside the others.
    items.sort(key=lambda item: (not item.nodeid.startswith(("tests/client/",
                                                             "tests/test_compose.py")),
                                 _rank(item.nodeid)))
