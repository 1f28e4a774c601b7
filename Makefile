# The two set-up commands of the README: `make demo` and `make test`. Both create .venv when missing;
# `make test` also provisions the programs its tests drive (`make tools`), `make demo` needs none of them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test tools faults soak demo demo-claude bench lint schemas skill dist clean screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the project's dependencies change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# ruff keeps the tree one shape (`ruff format` fixes what `--check` finds); lint-imports keeps the layers
lint: $(STAMP)
	$(BIN)/ruff format --check --quiet .
	$(BIN)/ruff check --quiet .
	$(BIN)/lint-imports --cache-dir build/import-linter-cache

# zsh, fish, chromium and chromium-driver (apt-get, when root on Debian) and Claude Code, pinned, in
# .tools/claude-code (npm); or stop, naming what to install and how. Quiet and quick when all is there.
tools:
	$(PYTHON) tools/provision.py

# The JSON schemas the package ships, generated from the document models (infrastructure/documents/);
# tests/unit/test_schemas.py fails while a checked-in file differs from what this writes
schemas: $(STAMP)
	$(BIN)/python tools/schemas.py

# The skill's copies (inside the package, for `blackboard skill install`; inside the Claude Code plugin) from
# docs/skill/SKILL.md, the one source; tests/plugin/test_plugin_files.py fails while a copy differs
skill:
	$(PYTHON) tools/skill.py

# The tests run on TEST_WORKERS processes (pytest-xdist), each with its own PostgreSQL database; the files
# whose module fixtures are costly keep to one process (they are marked `one_process`: docs/testing.md). A test
# waits on the processes it starts much of its time, so more workers than cores pay (docs/performance.md).
# compileall first: with PYTHONDONTWRITEBYTECODE set (as in some shells and CI images) Python caches no
# bytecode, and each of the thousands of CLI calls the tests make would compile ~80 of our modules again
# (about 0.1 s of CPU a call, measured on a post); written once here, every call reads them.
TEST_WORKERS ?= 4
test: tools lint
	$(BIN)/python -m compileall -q src migrations > /dev/null
	$(BIN)/python -m pytest -m "not faults" -n $(TEST_WORKERS) --durations=10

# The fault suite (docs/faults.md): kills, racing processes, a server restart; CI runs it after `make test`.
# BLACKBOARD_FAULT_SCALE=10 makes every round count ten times bigger.
faults: $(STAMP)
	$(BIN)/python -m pytest -m faults tests/faults

# A few minutes of workers on the example agents with random failures and kills (not in CI);
# BLACKBOARD_SOAK_SECONDS sets how long (180 by default).
soak: $(STAMP)
	$(BIN)/python -m tests.faults.soak

BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# Benchmarks are not tests: they print tables and write bench-results/*.json.
bench: $(BENCH_STAMP)
	$(BIN)/python -m compileall -q src migrations > /dev/null
	$(BIN)/python -m bench

demo: $(STAMP)
	$(BIN)/python -m blackboard.infrastructure.demo.board

# The pictures of docs/web.md, taken afresh by the web view's browser tests themselves (tests/e2e/web.py,
# `screenshot`): run them on SQLite with BLACKBOARD_DOC_SCREENSHOTS=1, which copies each into docs/img/.
screenshots: $(STAMP)
	BLACKBOARD_DOC_SCREENSHOTS=1 $(BIN)/python -m pytest -q -m "not faults" -k "sqlite and ui_" tests/e2e tests/runners

# A wheel of the package in $(DIST) (dist/), for installing it where no package index serves it yet:
# `pipx install dist/agent_blackboard-*.whl`, or `pip install 'dist/agent_blackboard-0.2.0-py3-none-any.whl[ui]'`
# with an extra (docs/plugin.md, "Installing the package"). pip builds it in an environment of its own (the
# backend of pyproject.toml); tests/integration/test_install.py builds it here and installs it in a fresh venv.
DIST ?= dist
dist: $(BIN)/python
	rm -f $(DIST)/agent_blackboard-*.whl
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir $(DIST) .

# The same with a model: three public agent files (plugin/agents) run by Claude Code in turn, on a fresh
# board, then their results and usage (docs/plugin.md). Needs ANTHROPIC_API_KEY or a signed-in Claude Code,
# and Claude Code itself (`make tools` puts it in .tools/claude-code); says which is missing, exit 2.
demo-claude: $(STAMP)
	$(BIN)/python -m blackboard.infrastructure.demo.claude

clean:
	rm -rf $(VENV) .tools .pytest_cache .hypothesis .blackboard test-artifacts
