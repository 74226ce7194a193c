# gputui quick start. `make demo` runs gputui on the embedded default (simulated GPUs, no Slurm needed);
# `make test` sets up a test environment, starts the local Slurm test cluster (installing Debian's Slurm
# packages when run as root) and runs the whole test suite.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Bounded in CI (.ci/run passes DEMO_ARGS="--duration 5"); people stop it with Ctrl-C.
DEMO_ARGS ?= --duration 60
PYTEST_ARGS ?=

.PHONY: demo test lint cluster cluster-down clean

demo: $(VENV)/.core
	$(BIN)/gputui --log - --backend sim --interval 1 $(DEMO_ARGS)

test: $(VENV)/.test cluster
	$(BIN)/ruff check gputui tests benchmarks ci
	$(BIN)/ruff format --check gputui tests benchmarks ci
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(VENV)/.test
	$(BIN)/ruff check gputui tests benchmarks ci
	$(BIN)/ruff format --check gputui tests benchmarks ci

# Exit status 3 means "no root or no apt here": the Slurm tests then skip (outside CI) with a reason.
cluster:
	ci/slurm-cluster up >/dev/null || [ $$? -eq 3 ]

cluster-down:
	ci/slurm-cluster down

$(VENV)/.python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "gputui needs Python 3.11 or newer: set PYTHON=python3.11 (or newer)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	touch $@

$(VENV)/.core: $(VENV)/.python pyproject.toml
	$(BIN)/pip install -q -e '.[nvidia]'
	touch $@

# torch first and pinned: 2.13.0 is the local CPU wheel; any other spec pulls GBs of CUDA packages.
$(VENV)/.test: $(VENV)/.core pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[nvidia,amd,test,tf]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
