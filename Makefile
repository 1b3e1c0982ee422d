# Two entry points for a new user: `make run` (start the server) and `make test` (the whole suite).
# Both create .venv and install what they need; `make test` also installs Chromium's headless
# shell, Node.js, Redis and nginx from Debian when they are missing (needs root or sudo).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: run test check test-all test-under-load lint typecheck pytest bench system clean

# Five workers on two cores: most tests wait on sockets, browsers and child processes. Tests
# are handed out one at a time, the browser tests first, longest first (tests/conftest.py); the
# slowest 15 are listed.
PYTEST_ARGS ?= -n 5 --dist loadgroup --no-loadscope-reorder --durations=15

# Debian splits venv out of Python: install python3-venv when creating the venv fails.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); bash scripts/system-deps.sh python3-venv && $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.stamp-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.stamp-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(VENV)/.stamp-run $@

run: $(VENV)/.stamp-run
	$(BIN)/solrace serve --host $(HOST) --port $(PORT)

system:
	bash scripts/system-deps.sh

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .
	$(BIN)/mypy shared/solrules server/solrace

pytest: $(VENV)/.stamp-dev
	SOLRACE_REQUIRE_BROWSER=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

test: system lint pytest

# The inner loop, under a minute on two cores: lint, types, the rules (the solver's searches
# are left to `make test`), the sans-I/O core's unit tests and the client engine's Node
# self-test. Nothing here starts a server, a browser or a Redis.
CHECK_TESTS := $(wildcard $(addprefix tests/solrules/test_,cli.py deal.py move.py perft.py \
	position.py properties.py quadruple_canfield.py sample.py scotch.py yukon.py) \
	$(addprefix tests/solrace/test_,arena.py bus.py catalogue.py codec.py connection.py \
	dispatch.py fair_queue.py fairplay.py hashing.py internal.py keys.py layout.py names.py \
	rating.py room.py tournament.py) \
	tests/test_layout.py tests/client/test_engine_node.py)

check: lint
	$(BIN)/python -m pytest -n 2 $(CHECK_TESTS)

# Everything with the full Hypothesis example counts, and the long checks marked slow (the
# solver against the plain search on hundreds of deals): slower, not what CI runs.
test-all: system lint
	HYPOTHESIS_PROFILE=thorough SOLRACE_REQUIRE_BROWSER=1 $(BIN)/python -m pytest $(PYTEST_ARGS) -m "slow or not slow"

# The suite beside a CPU burner on every core: what "no test depends on an idle machine" means.
test-under-load: $(VENV)/.stamp-dev
	$(BIN)/python scripts/burn.py & burner=$$!; trap 'kill $$burner' EXIT INT TERM; \
	SOLRACE_REQUIRE_BROWSER=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.stamp-dev
	$(BIN)/python bench/rules_bench.py
	$(BIN)/python bench/race_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis test-artifacts
