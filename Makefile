# The two set-up commands of the README: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test demo bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the project's dependencies change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest

BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(BENCH_STAMP)

# Benchmarks are not tests: they print tables and write bench-results/*.json.
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench

demo: $(STAMP)
	$(BIN)/python -m blackboard.infrastructure.demo

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .blackboard test-artifacts
