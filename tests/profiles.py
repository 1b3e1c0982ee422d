"""How many examples a property test runs under the Hypothesis profile in force (see
tests/conftest.py): all of them with ``thorough``, a fifth (at least five) with ``quick``."""

from __future__ import annotations

import os


def thorough() -> bool:
    return os.environ.get("HYPOTHESIS_PROFILE", "quick") == "thorough"


def examples(full: int) -> int:
    """The number of examples for a property test whose full count is ``full``."""
    return full if thorough() else max(min(full, 5), full // 5)
