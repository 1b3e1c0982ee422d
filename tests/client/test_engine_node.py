"""The client engine's own self-test in Node (``client/engine/selftest.mjs``), no browser: the
engine's boards, legal-move counts along the perft lines and perft to depth 4 against the golden
files of ``seeds/golden``. A second opinion beside ``test_engine.py`` (the engine against solrules
in Chromium), and the check a change to the engine can run in a second.

``client/package.json`` declares the client's ``.js`` files ES modules, so any Node from 18 on
(Debian 12's ``nodejs``, which ``make test`` installs when ``node`` is missing) runs it as is.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.client.helpers import REPO, WAIT_MS


def test_the_engine_selftest_passes_in_node() -> None:
    node = shutil.which("node")
    if node is None:
        # `make test` installs the system packages first and sets this: there, a missing Node is
        # a failure, not a quiet skip.
        if os.environ.get("SOLRACE_REQUIRE_BROWSER"):
            pytest.fail("no node on PATH (apt-get install nodejs)")
        pytest.skip("no node on PATH (apt-get install nodejs)")
    done = subprocess.run([node, "client/engine/selftest.mjs"], cwd=REPO, capture_output=True,
                          text=True, timeout=WAIT_MS / 1000 * 6)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "ok", done.stdout
    assert "FAIL" not in done.stdout + done.stderr
