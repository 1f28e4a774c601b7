# The two set-up commands of the README: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test demo lint unit bdd clean

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

demo: $(STAMP)
	$(BIN)/python -m infrastructure.demo

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .blackboard
