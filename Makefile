# omniqual — set-up, the main job (qualify the embedded target) and the test suite.
# Everything is installed by these targets; nothing needs to be done by hand.

VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
STAMP := $(VENV)/.omniqual-setup
CAMPAIGN ?= examples/embedded-cpu-tour.yaml
FULL_CAMPAIGN ?= examples/embedded-cpu-campaign.yaml
OUT ?= out
# Launch groups at once: two on a 2-core host overlap start-ups (~25 s each, mostly imports on
# one core) and output comparisons; gates that measure time or memory still run alone. A bigger
# host: JOBS=auto (by GPUs, else by cores).
JOBS ?= 2

.PHONY: setup browser qualify qualify-full test lint unit integration bench clean

setup: $(STAMP)

# The venv holds the core toolkit, the dev tools and the embedded CPU target (vLLM-Omni on
# vLLM's CPU build); .ci/install-embedded.sh is idempotent and applies the CPU fixes.
$(STAMP): pyproject.toml .ci/install-embedded.sh .ci/torch-cpu-source.sh .ci/pytorch-cpu-index.txt
	test -x $(PY) || python3 -m venv $(VENV)
	bash .ci/install-embedded.sh $(VENV)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Headless Chromium from the system's packages, for the browser test of the HTML report.
# Instant when one is on PATH; without root or apt it says why and that test skips.
browser:
	bash .ci/install-browser.sh

# The main job: build the bundled checkpoints, run the tour campaign (every gate kind and every
# modality at least once) against the live embedded target, compile the matrix and render the
# PR evidence report into $(OUT)/.
qualify: setup
	$(BIN)/omniqual run $(CAMPAIGN) --jobs $(JOBS) --output $(OUT)

# Every row of the embedded matrix with every gate it requires (much longer than the tour).
qualify-full: setup
	$(BIN)/omniqual run $(FULL_CAMPAIGN) --jobs $(JOBS) --output $(OUT)

lint: setup
	$(BIN)/ruff check omniqual tests
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: setup
	$(BIN)/pytest -q tests/unit

integration: setup browser
	$(BIN)/pytest -q tests/integration

test: lint browser
	$(BIN)/pytest -q

bench: setup
	$(PY) tests/bench/bench_loadgen.py
	$(PY) tests/bench/bench_peer.py
	$(PY) tests/bench/bench_compile.py

clean:
	rm -rf $(OUT) .omniqual .pytest_cache .mypy_cache .ruff_cache
