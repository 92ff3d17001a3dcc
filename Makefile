# One entry point for every task; `make up` and `make test` are the README's two commands.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The locks (`make lock` writes them from pyproject.toml): what `make install`, CI and the
# image install, so an upstream release changes nothing here until the locks are refreshed.
LOCK := requirements/dev.txt
RUNTIME_LOCK := requirements/runtime.txt
UV := $(BIN)/uv
COMPILE := $(UV) pip compile pyproject.toml --quiet --universal --python-version 3.11 \
	--annotation-style line --custom-compile-command "make lock"
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: jdbc-driver docs examples bench-scale bench-snapshot-store bench-latency bench-webhooks install lock lock-upgrade browser up test unit lint typecheck openapi client bench bench-status-reads bench-rate-limit bench-validation bench-stack bench-engine bench-processors bench-streaming bench-chaos bench-metrics bench-faults bench-api bench-jdbc bench-kafka clean

# The venv holds exactly the dev lock (uv, itself pinned there, syncs it: seconds from its
# cache), then the project itself, editable and without resolving anything.
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q "$$(grep -o '^uv==[^ ]*' $(LOCK))"
	$(UV) pip sync -q --python $(BIN)/python $(LOCK)
	$(UV) pip install -q --python $(BIN)/python --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Refresh the locks after a change of pyproject.toml's dependencies: the pins already there
# are kept where they still fit (`make lock-upgrade` moves every pin to the newest release).
lock: install
	$(COMPILE) $(LOCK_FLAGS) --extra dev --extra embedded -o $(LOCK)
	$(COMPILE) $(LOCK_FLAGS) -c $(LOCK) -o $(RUNTIME_LOCK)

lock-upgrade:
	$(MAKE) lock LOCK_FLAGS=--upgrade

# `make up UP_ARGS="--port 8080 --workers 2"` passes options on to `jetspark up`.
up: install jdbc-driver
	$(BIN)/jetspark up $(UP_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy jetspark api worker launcher migrations bench tests

# Debian's Chromium for the browser tests (Playwright drives it; no browser download).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "no chromium and no root apt-get: the browser tests will be skipped"; fi; }

# Debian's PostgreSQL JDBC driver for source.jdbc / sink.jdbc (the workers' Spark loads it from
# JETSPARK_JDBC_DRIVER_JARS, /usr/share/java/postgresql.jar by default).
jdbc-driver:
	@test -f /usr/share/java/postgresql.jar || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's libpostgresql-jdbc-java for source.jdbc and sink.jdbc"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpostgresql-jdbc-java >/dev/null; \
	  else echo "no /usr/share/java/postgresql.jar and no root apt-get: install libpostgresql-jdbc-java" \
	    "(or put a PostgreSQL JDBC jar in JETSPARK_JDBC_DRIVER_JARS); source.jdbc/sink.jdbc jobs fail" \
	    "naming the missing driver and their tests are skipped"; fi; }

# The tests in two processes (pytest-xdist), a test file to a process, each with its own
# embedded servers and SparkSession: ~47 min on two cores against ~80 in one process.
# PYTEST_WORKERS=0: in one process.
PYTEST_WORKERS ?= 2
test: lint typecheck browser jdbc-driver
	$(BIN)/pytest -q -ra -n $(PYTEST_WORKERS) --dist loadfile --durations=30

unit: install
	$(BIN)/pytest -q -m "not spark and not slow"

# The README's settings table and Compose's variables, from jetspark/settings.py.
docs: install
	$(BIN)/python -m jetspark.settings_reference --write

openapi: install
	$(BIN)/python -m api.openapi_dump openapi/openapi.json

client: openapi
	$(BIN)/openapi-python-client generate --path openapi/openapi.json --meta none \
		--config clients/openapi-python-client.yaml \
		--output-path clients/jetspark_client --overwrite

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# The examples' JSON files, printed by their SDK scripts (tests/sdk/test_examples.py checks).
examples: install
	for script in examples/[a-z]*.py; do \
	  name=$$(basename $$script .py | tr _ -); \
	  $(BIN)/python $$script > examples/$$name.json || exit 1; \
	done

# ---- benchmarks (not tests: each prints figures against a baseline of the same run) ----------
# `make bench` runs every one in turn: well over an hour on two cores.
BENCHES := bench-status-reads bench-api bench-stack bench-engine bench-latency bench-scale \
	bench-processors bench-metrics bench-streaming bench-chaos bench-faults \
	bench-snapshot-store bench-webhooks bench-rate-limit bench-validation bench-jdbc \
	bench-kafka
bench: $(BENCHES)

# Status reads/s and latency, submissions/s, idle memory of `jetspark up` (baseline /healthz).
bench-status-reads: install
	$(BIN)/python -m bench.status_reads

# The API's own cost per request: wrk on a bare FastAPI app, jetspark's /healthz and a job view.
bench-api: install
	$(BIN)/python -m bench.api_overhead

# `jetspark up` in a temporary home: seconds to /readyz and to warm workers, idle memory.
bench-stack: install
	$(BIN)/python -m bench.stack

# Engine: 10M-word count, DAG vs hand-written DataFrame code (in one process, then files in
# and out through `jetspark up`); submit -> RUNNING, warm vs cold.
bench-engine: install
	$(BIN)/python -m bench.engine_wordcount
	$(BIN)/python -m bench.files_wordcount
	$(BIN)/python -m bench.submit_latency

# Submit -> COMPLETED through the API with a warm worker: tiny job, word count, hash join;
# against hand-written PySpark (warm) and a cold spark-submit; jobs/s at 1/4/16 clients.
bench-latency: install
	$(BIN)/python -m bench.latency

# Scale: word count, tiny-job latency and 2 exactly-once streams on local[2] vs a standalone
# cluster (2 workers x 1 core) vs 2 workers on one queue; ratios to local[2] in one run.
bench-scale: install
	$(BIN)/python -m bench.scale

# Python processors: Tokenizer processor vs hand-written mapInArrow, 10M words.
bench-processors: install
	$(BIN)/python -m bench.python_processors

# Live metrics: the same Python-processor job with metrics reporting on vs off.
bench-metrics: install
	$(BIN)/python -m bench.metrics_overhead

# Streaming: events/s exactly-once vs none, watermark lag, recovery after a lost worker.
bench-streaming: install
	$(BIN)/python -m bench.streaming

# 20 SIGKILLs of the worker holding an exactly-once stream: lost/duplicated windows (must be 0).
bench-chaos: install
	$(BIN)/python -m bench.chaos

# Faults: Redis/PostgreSQL/API restarts and worker SIGKILLs under load; lost/duplicated (0).
bench-faults: install
	$(BIN)/python -m bench.faults

# Snapshot write time on one Redis vs a Redis Cluster (3 primaries + 3 replicas), with and
# without a backup WAITed for; the cluster's ratio to one Redis in one run.
bench-snapshot-store: install
	$(BIN)/python -m bench.snapshot_store

# Webhooks: status change commit -> receiver, p50/p99 over 100 deliveries (50 jobs).
bench-webhooks: install
	$(BIN)/python -m bench.webhooks --jobs 50

# Rate limiting: requests allowed per second against the configured rate (ratio 1.0: exact).
bench-rate-limit: install
	$(BIN)/python -m bench.rate_limit

# Validation time of the largest DAG the limits allow against a small one of the same shape.
bench-validation: install
	$(BIN)/python -m bench.validation_size

# A 5M-row table read (split on its key), grouped and written back: source.jdbc -> aggregate
# -> sink.jdbc through the server vs spark.read.jdbc/df.write.jdbc, same partitions (ratio).
bench-jdbc: install
	$(BIN)/python -m bench.jdbc

# Kafka (a Tansu broker): events/s topic -> keyed tumbling window -> topic, exactly-once vs
# none; a worker SIGKILLed mid-stream: lost and duplicated windows in the output topic.
bench-kafka: install
	$(BIN)/python -m bench.kafka
