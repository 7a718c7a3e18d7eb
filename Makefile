PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/simkit run scenarios/party_vs_wolves.toml --rounds 2000000

lint: $(STAMP)
	$(BIN)/ruff check simkit tests benchmarks
	$(BIN)/ruff format --check simkit tests benchmarks

test: $(STAMP) lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
