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
# The tests in tracks (tests/conftest.py): `fast` (unit and golden, no live server), then the
# live tracks of vLLM-Omni's CI. `make integration LIVE_TRACKS=reliability` runs one of them.
LIVE_TRACKS ?= function or accuracy or performance or reliability
PYTEST := $(BIN)/pytest -q --durations=25
# The live tests' one checkpoint cache (tests/integration/conftest.py): each bundled pipeline is
# built once and reused by every test and run until its recipe changes (`make clean` drops it).
export OMNIQUAL_EMBEDDED_CACHE ?= $(CURDIR)/.omniqual/cache/embedded

.PHONY: setup browser qualify qualify-full test test-fast static lint unit integration bench clean

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

# The main job: build the bundled checkpoints, run the tour campaign (almost every gate kind, every
# modality at least once) against the live embedded target, compile the matrix and render the
# PR evidence report into $(OUT)/.
qualify: setup
	$(BIN)/omniqual run $(CAMPAIGN) --jobs $(JOBS) --output $(OUT)

# Every row of the embedded matrix with every gate it requires (much longer than the tour).
qualify-full: setup
	$(BIN)/omniqual run $(FULL_CAMPAIGN) --jobs $(JOBS) --output $(OUT)

# Style and types. The import-layer contract runs once in `make test`: as a fast-tier test
# (tests/unit/test_architecture.py runs lint-imports).
static: setup
	$(BIN)/ruff check omniqual tests
	$(BIN)/mypy

lint: static
	$(BIN)/lint-imports

# The fast tier runs in pytest-xdist workers, two per core (tests/conftest.py): its tests mostly
# wait on in-process fakes. Test by test (worksteal): one module of gate tests is minutes alone.
FAST := -m fast -x -n auto --dist worksteal

# The edit loop: the fast tier alone, stopping at its first failure.
test-fast: setup
	$(PYTEST) $(FAST)

unit: setup
	$(BIN)/pytest -q tests/unit

# pytest exits 5 when a selection is empty (`LIVE_TRACKS=reliability` has no shared part).
integration: setup browser
	$(PYTEST) $(LIVE_SHARED) || test $$? -eq 5
	$(PYTEST) $(LIVE_ALONE) || test $$? -eq 5

# The live tests that only judge outputs and statuses run first, in LIVE_WORKERS pytest-xdist
# workers; those that borrow the session's shared servers stay on one worker (--dist loadgroup),
# so each server starts once. On 2 cores one worker: for those 120 tests two took 12 min 44 s
# and one 14 min 4 s (clean clones, one run each), each test about twice as slow beside another:
# a gain within the spread between runs, at the price of every test sharing the CPU.
# A bigger host: LIVE_WORKERS=N. The `alone` ones (performance, reliability, start-up deadlines
# and measuring gates; tests/conftest.py) run after, one at a time, with the host to themselves.
LIVE_WORKERS ?= 1
LIVE_SHARED := -m "($(LIVE_TRACKS)) and not alone" -n $(LIVE_WORKERS) --dist loadgroup
LIVE_ALONE := -m "($(LIVE_TRACKS)) and alone"

# Everything, as CI runs it (.ci/run): style and types, the fast tier (stopping at its first
# failure, so a broken unit test shows in minutes, not after the live servers), then the live
# tracks (function, accuracy, performance, reliability; tests/conftest.py): the ones that share
# the host, then the ones that run alone.
# pytest-timeout bounds every test: 120 s in the fast tier, 1200 s or the test's own when live.
test: static browser
	$(PYTEST) $(FAST)
	$(PYTEST) $(LIVE_SHARED) || test $$? -eq 5
	$(PYTEST) $(LIVE_ALONE) || test $$? -eq 5

bench: setup
	$(PY) tests/bench/bench_loadgen.py
	$(PY) tests/bench/bench_peer.py
	$(PY) tests/bench/bench_compile.py

clean:
	rm -rf $(OUT) .omniqual .pytest_cache .mypy_cache .ruff_cache
