# Two commands do all set-up: `make demo` and `make test`. Both build .venv from
# requirements.lock on first use.
SHELL := /bin/bash
PYTHON ?= $(shell for p in python3.11 python3.12 python3; do command -v $$p >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# `make test` runs the suite on three pytest-xdist workers, then the `quiet` tests alone (scripts/run-tests.sh);
# PYTEST_WORKERS=0 runs the first phase in one process.
PYTEST_WORKERS ?= 3
UV_VERSION := 0.13.9

export AIRFLOW_HOME ?= $(CURDIR)/.airflow
export PYSPARK_PYTHON ?= $(CURDIR)/$(BIN)/python
export NO_ALBUMENTATIONS_UPDATE := 1

.PHONY: demo test test-matrix lint ui venv java kafka kernels lock clean bench mutate

java:
	@scripts/check-java.sh

# Real Apache Kafka (broker + Kafka's own tools) from Maven Central, resolved once into
# .kafka/<version>/lib/ (git-ignored); later runs are offline and instant. The second script
# resolves Kafka 4.0.x's AdminUtils, the oracle of the placement differential test.
kafka: java
	@scripts/kafka-classpath.sh
	@scripts/kafka-oracle-classpath.sh >/dev/null

$(STAMP): pyproject.toml requirements.lock
	@test -n "$(PYTHON)" || { echo "error: no python3 found; install CPython 3.11" >&2; exit 1; }
	@echo ">> creating $(VENV) with $(PYTHON) from requirements.lock (first run takes 1-2 minutes)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# uv installs the same pinned set four times faster than pip from an empty cache (92 s against 355 s
	@# here, pyspark's sdist built once); pip does it where uv cannot be had.
	@if ! { $(BIN)/python -m pip install -q "uv==$(UV_VERSION)" && \
	        $(BIN)/uv pip install -q --native-tls --python $(BIN)/python -r requirements.lock && \
	        $(BIN)/uv pip install -q --native-tls --python $(BIN)/python --no-deps -e . ; }; then \
	  echo ">> uv could not install requirements.lock; pip installs it" >&2; \
	  $(BIN)/python -m pip install -q -r requirements.lock && $(BIN)/python -m pip install -q --no-deps -e . ; \
	fi
	@touch $@

venv: $(STAMP)

# The planner's numba kernels compiled once, by one process, before anything plans (planner/kernels.py): otherwise each
# test worker compiles them on its first plan. Where the cache is current this only loads it (a few seconds).
kernels: $(STAMP)
	@$(BIN)/python -m kafka_rebalance.planner.kernels

# The real-Kafka demo; `make demo SIMULATED=1` runs the same DAG on the embedded simulator.
# DEMO_STARTED is taken when make starts, so the time printed includes the venv and the jars.
demo: export DEMO_STARTED := $(shell date +%s)
demo: java kafka $(STAMP) kernels
	@if [ -n "$(SIMULATED)" ]; then scripts/demo-simulated.sh; else scripts/demo.sh; fi

# The linter first (instant: a style error fails the run before the suite); the type checker beside the suite's
# first phase (half a minute on a fresh clone, most of it reading Airflow's and GX's sources), its errors printed
# after it and failing the run all the same.
test: java kafka $(STAMP) kernels
	@$(BIN)/ruff check --quiet .
	@PYTEST_WORKERS=$(PYTEST_WORKERS) TYPECHECK=$(BIN)/mypy scripts/run-tests.sh $(BIN)/python $(PYTEST_ARGS)

# The Kafka version matrix (3.7 to 4.4, KRaft and ZooKeeper mode; table in docs/KAFKA.md). Not part of
# `make test`: one to three minutes per release on 2 cores. PYTEST_ARGS='-k 3.7.2-zookeeper' runs one.
test-matrix: java $(STAMP)
	@VENV_BIN=$(CURDIR)/$(BIN) scripts/test-matrix.sh $(PYTEST_ARGS)

lint: $(STAMP)
	@$(BIN)/ruff check --quiet .
	@$(BIN)/mypy

ui: java kafka $(STAMP)
	@scripts/ui.sh

bench: java $(STAMP)
	@$(BIN)/python benchmarks/planner.py

# Mutation testing of the pure core with the fast unit tests (see [tool.mutmut] in pyproject.toml).
# Not part of `make test`: about an hour on 2 cores. MUTANTS='*metrics*' runs a subset; a scope of
# [tool.mutate.scopes] ('kafka_rebalance.planner.goals*'), or one module of it ('kafka_rebalance.planner.goals.network*'),
# mutates only those files and runs only the scope's tests.
MUTANTS ?=
mutate: $(STAMP)
	@VENV_BIN=$(CURDIR)/$(BIN) scripts/mutate.sh $(MUTANTS)

# Re-resolve the pins from pyproject.toml into a scratch venv (needs the network).
lock:
	rm -rf /tmp/kafka-rebalance-lock && $(PYTHON) -m venv /tmp/kafka-rebalance-lock
	/tmp/kafka-rebalance-lock/bin/pip install -q '.[dev]'
	{ echo "# Pinned, resolved dependency set (pip freeze of a clean install on CPython 3.11)."; \
	  echo "# Regenerate with: make lock"; \
	  /tmp/kafka-rebalance-lock/bin/pip freeze --exclude kafka-rebalance; } > requirements.lock

clean:
	rm -rf $(VENV) .kafka .airflow .pytest_cache .ruff_cache .mypy_cache build *.egg-info spark-warehouse
