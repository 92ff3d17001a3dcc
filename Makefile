# One entry point for every task; `make up` and `make test` are the README's two commands.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export SPARK_LOCAL_IP := 127.0.0.1

.PHONY: install up test unit lint typecheck openapi client bench bench-processors clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

up: install
	$(BIN)/jetspark up

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy jetspark api worker migrations bench tests

test: lint typecheck
	$(BIN)/pytest -q -ra

unit: install
	$(BIN)/pytest -q -m "not spark and not slow"

openapi: install
	$(BIN)/python -m api.openapi_dump openapi/openapi.json

client: openapi
	$(BIN)/openapi-python-client generate --path openapi/openapi.json --meta none \
		--output-path clients/jetspark_client --overwrite

bench: install
	$(BIN)/python -m bench.status_reads

bench-processors: install
	$(BIN)/python -m bench.python_processors

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
