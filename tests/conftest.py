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


#: Files whose tests are long enough to be shared out one by one among the xdist workers
#: (``make test`` runs ``--dist loadgroup``); any other file is meant to be one unit of work, run
#: whole on one worker. The suite's wall time is that of its busiest worker: a 70-second file
#: run whole after other work sets it. Caveat (found 2026-12-02, docs/performance.md): with
#: pytest-xdist 3.8 the groups are not kept together, so in practice every test is handed out
#: on its own, in the order set below.
SPLIT = (
    "solrace/test_cluster.py", "client/test_contrast.py", "client/test_analysis.py",
    "client/test_race.py", "client/test_tournament.py", "client/test_layout.py",
    "client/test_teach.py", "client/test_finish.py", "client/test_play.py",
    "solrules/test_properties.py", "solrules/test_oracle.py", "solrace/test_http.py",
)
#: Files (and single tests, ``file::name``) that take the longest, longest first: their units
#: are handed out first, so that no long unit starts last, after the other workers are done.
LONGEST = (
    "client/test_contrast.py::test_every_text_has_enough_contrast",
    "client/test_analysis.py::test_a_losing_move_is_marked_on_the_racers_replay",
    "solrace/test_cluster.py", "client/test_race.py", "client/test_finish.py",
    "client/test_analysis.py", "client/test_tournament.py", "solrules/test_properties.py",
    "client/test_play.py", "client/test_layout.py", "client/test_teach.py",
    "solrules/test_oracle.py", "solrace/test_http.py",
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
        file = item.nodeid.split("::", 1)[0]
        unit = item.nodeid if file.removeprefix("tests/") in SPLIT else file
        item.add_marker(pytest.mark.xdist_group(unit))
    # The browser tests first, then the others, each part longest first: a worker keeps its
    # Chromium (a fixture of the tests/client package) until it leaves that package. A stable
    # sort: within a file, tests keep their order (module fixtures are set up once).
    items.sort(key=lambda item: (not item.nodeid.startswith("tests/client/"),
                                 _rank(item.nodeid)))
