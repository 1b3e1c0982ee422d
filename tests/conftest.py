"""Settings for the whole suite: Hypothesis profiles, markers, and a report of the slowest.

Profiles (``HYPOTHESIS_PROFILE``): ``quick`` (the default, what ``make test`` runs: each
property test gets a fifth of its examples, at least five) and ``thorough`` (``make
test-all``: the full counts). A property test asks :func:`tests.profiles.examples` for its
count, so both profiles keep every test, only the number of cases changes.

Markers, set here from where a test lives: ``browser`` (tests/client: Chromium), ``cluster``
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath)
        if f"{os.sep}tests{os.sep}client{os.sep}" in path:
            item.add_marker(pytest.mark.browser)
        if path.endswith(("test_cluster.py", "test_cluster_play.py", "test_nginx.py")):
            item.add_marker(pytest.mark.cluster)
