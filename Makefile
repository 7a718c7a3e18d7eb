PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo reports test check lint bench coverage browser warmup clean

# One report per example scenario worth showing (at least one per system), written to
# reports/<scenario-stem>/.
REPORT_SCENARIOS := party_vs_wolves ambush perception_gunnar_wolf perception_party_vs_wolves \
	vtm_gangrel_ambush vtm_three_way_brawl
REPORT_ROUNDS ?= 1000000

# install: the virtualenv, simkit with every extra, byte-compiled (as a regular install
# would be), and every kernel compiled into numba's cache (`simkit warmup`), so that the
# first run after installing starts at once.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks,dask]'
	$(BIN)/python -m compileall -q simkit
	$(BIN)/simkit warmup
	touch $(STAMP)

install: $(STAMP)

warmup: $(STAMP)
	$(BIN)/simkit warmup

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

# Debian's chromium for the test that lays the reports out in a real browser; where it
# cannot be installed (not root, no apt) that test is skipped and says why, except under
# CI=true (.ci/run), where it fails.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		{ apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 || \
		  { apt-get update -q >/dev/null 2>&1 && \
		    apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; }; }; } || \
		echo "chromium could not be installed: the report layout test will be skipped (and fail under CI=true)"

# The whole suite (slow statistical runs, subprocesses and the browser included).
test: $(STAMP) lint browser
	$(BIN)/python -m pytest -q

# The development loop: lint, then every test not marked slow (pyproject.toml's markers).
check: $(STAMP) lint
	$(BIN)/python -m pytest -q -m "not slow"

# The twins and the contract tests with the JIT off, so that coverage sees the kernels'
# lines; fails below 90% of simkit/systems/.
coverage: $(STAMP)
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -o addopts="" -m "not slow" \
		tests/test_contract.py tests/test_readiness_rules.py tests/test_vtm_rules.py \
		tests/test_perception_rules.py tests/test_plugin_system.py tests/test_trace_cli.py \
		tests/test_vtm_kernel.py::test_rounds_side_by_side_equal_rounds_one_by_one \
		tests/test_perception_kernel.py::test_rounds_side_by_side_equal_the_general_path \
		tests/test_random_stream.py::test_first_outputs_are_each_rounds_first_two_outputs \
		--cov=simkit/systems --cov-report=term-missing:skip-covered --cov-fail-under=90

# Every figure of the README's performance section: throughput against numpy's dice,
# cost per round from 4 to 200 combatants, a report's fixed cost, cold and warm starts.
bench: $(STAMP)
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/scaling.py
	$(BIN)/python benchmarks/report_cost.py
	$(BIN)/python benchmarks/sensitivity.py
	$(BIN)/python benchmarks/policies.py
	$(BIN)/python benchmarks/compile.py

clean:
	rm -rf $(VENV) build *.egg-info
