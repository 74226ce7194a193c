# gputui quick start. `make demo` opens the dashboard on the embedded default: a real 2-rank DDP training
# run on this machine with simulated GPUs (no Slurm, no GPU needed);
# `make test` sets up a test environment, checks style and the import layers (pyproject.toml's
# [tool.importlinter]), starts the local Slurm test cluster (installing Debian's Slurm packages when run
# as root) and runs the whole test suite.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# People quit with q; CI runs the same pipeline without a screen (DEMO_ARGS="--headless ...").
DEMO_ARGS ?=
PYTEST_ARGS ?=
MUTATE_ARGS ?=

.PHONY: demo test lint mutate cluster cluster-down clean

demo: $(VENV)/.demo
	$(BIN)/gputui demo $(DEMO_ARGS)

test: $(VENV)/.test cluster
	$(BIN)/ruff check gputui tests benchmarks ci
	$(BIN)/ruff format --check gputui tests benchmarks ci
	$(BIN)/lint-imports --no-cache
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(VENV)/.test
	$(BIN)/ruff check gputui tests benchmarks ci
	$(BIN)/ruff format --check gputui tests benchmarks ci
	$(BIN)/lint-imports --no-cache

# Mutation testing (docs/testing.md): not part of `make test` or CI; about 45 minutes on 2 cores.
mutate: $(VENV)/.test
	$(BIN)/pip install -q -e '.[mutate]'
	nice -n 19 $(BIN)/python benchmarks/mutation.py $(MUTATE_ARGS)

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

# The demo trains a real model: PyTorch's CPU wheel (pinned: see below), then the `demo` extra (NumPy).
$(VENV)/.demo: $(VENV)/.core pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[nvidia,demo,serve]'
	touch $@

# torch first and pinned: 2.13.0 is the local CPU wheel; any other spec pulls GBs of CUDA packages.
$(VENV)/.test: $(VENV)/.core pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[nvidia,amd,test,tf,lightning]'
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
