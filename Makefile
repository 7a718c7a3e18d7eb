PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo reports test lint bench clean

# One report per example scenario worth showing (at least one per system), written to
# reports/<scenario-stem>/.  REPORT_ROUNDS rounds per run keeps the whole target well
# under 3 minutes on 2 cores.
REPORT_SCENARIOS := party_vs_wolves ambush perception_gunnar_wolf perception_party_vs_wolves \
	vtm_gangrel_ambush vtm_three_way_brawl
REPORT_ROUNDS ?= 1000000

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks,dask]'
	$(BIN)/python -m compileall -q simkit  # as a regular (non-editable) install would
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/simkit report scenarios/party_vs_wolves.toml --rounds 2000000 --out demo-out/party_vs_wolves
	@echo "Open demo-out/party_vs_wolves/report.html (self-contained) or report.md"

reports: $(STAMP)
	@for s in $(REPORT_SCENARIOS); do \
		$(BIN)/simkit report scenarios/$$s.toml --rounds $(REPORT_ROUNDS) --out reports/$$s \
			> /dev/null || exit $$?; \
		echo "wrote reports/$$s/report.html"; \
	done

lint: $(STAMP)
	$(BIN)/ruff check simkit tests benchmarks
	$(BIN)/ruff format --check simkit tests benchmarks
	$(BIN)/lint-imports

test: $(STAMP) lint
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
