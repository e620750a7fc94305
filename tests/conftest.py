"""The suite's tracks: every test gets exactly one, from its directory and file, before ``-m``.

``fast`` is the edit-loop tier: tests/unit and tests/golden (fakes, no live server, no network).
The live tests in tests/integration each get the track of vLLM-Omni's CI that what they exercise
belongs to: ``function``, ``accuracy``, ``performance`` or ``reliability``. A live test of a gate
takes the track its gate spec declares (gates/*.yaml: isolation, lora and fails-fast are function,
soak is reliability), so ``-m reliability`` runs what vLLM-Omni's L5 runs. A marker written on a
test or module wins over the table; a test with none and matching no rule stops the session before
anything runs, so a new file cannot land without a track.

Items are then ordered fast first, then the live tracks in CI-level order (a stable sort, so a
module's tests stay together), and each live test gets the live per-test timeout unless it
states its own ``@pytest.mark.timeout`` or the command line sets one.

A live test that measures time or memory runs with the host to itself: every test of the
performance and reliability tracks gets the ``alone`` marker, and a function or accuracy test
that judges a start-up deadline or runs a measuring gate writes it itself. The rest of the live
tests only judge outputs and statuses: ``make test`` runs them first (``-m "… and not alone"``,
in ``LIVE_WORKERS`` pytest-xdist workers, the shared servers' borrowers grouped on one) and the
``alone`` ones after, one at a time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
TRACKS = ("fast", "function", "accuracy", "performance", "reliability")
MEASURING_TRACKS = ("performance", "reliability")
"""Live tracks whose tests measure time or memory: each runs with the host to itself."""
SHARED_SERVERS_GROUP = "shared-servers"
"""The pytest-xdist group of the live tests that borrow the session's shared servers."""
FAST_DIRECTORIES = ("unit", "golden")
LIVE_DIRECTORY = "integration"

# First match wins, over "<directory>/<file>" under tests/integration. Reliability comes first:
# a killed harness in deploy/ is reliability, not deploy's function.
LIVE_TRACK_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reliability", re.compile(r"abort|fault_injection|soak|kill|lifecycle")),
    ("accuracy", re.compile(r"parity")),
    ("performance", re.compile(r"^bench/|perf|offload_sweep|stage_durations")),
    (
        "function",
        re.compile(
            r"api_contract|strict_load|fails_fast|isolation|lora"
            r"|^(cli|client|deploy|embedded|install|pytest_plugin|report)/"
        ),
    ),
)

# pyproject's `timeout` (120 s) covers the fast tier. A live test's clock starts with its
# fixtures: a server launch (readiness up to 240 s, checkpoint builds) plus a gate run within its
# spec's budget_s (600 s for most), so 20 minutes stops a hang without cutting a slow host short.
# Tests whose own bounds add up to more say so with @pytest.mark.timeout.
LIVE_TIMEOUT_S = 1200
WORKER_CENSUS = pytest.StashKey[list[str]]()
"""Under pytest-xdist, each worker's live-census line (tests/integration/conftest.py)."""


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for ``-n auto`` (the fast tier in the Makefile): two per usable CPU, at most
    eight. The fast tier mostly waits on in-process fakes (the abort and soak gates' real
    windows and service times): at one worker per core its CPU stays under half busy, while
    its tests judge their own fakes' timings, never the host's speed."""
    return min(8, 2 * len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 4)


def written_tracks(item: pytest.Item) -> list[str]:
    return [name for name in TRACKS if item.get_closest_marker(name) is not None]


def track_of(item: pytest.Item) -> str | None:
    """The one track of ``item``: its own marker, else its directory and file; None when it has
    none, or more than one marker (which one it means is unknown)."""
    written = written_tracks(item)
    if written:
        return written[0] if len(written) == 1 else None
    relative = Path(item.path).resolve().relative_to(TESTS)
    if relative.parts[0] in FAST_DIRECTORIES:
        return "fast"
    if relative.parts[0] == LIVE_DIRECTORY:
        inner = Path(*relative.parts[1:]).as_posix()
        for track, rule in LIVE_TRACK_RULES:
            if rule.search(inner):
                return track
    return None


def _in_this_suite(item: pytest.Item) -> bool:
    return Path(item.path).resolve().is_relative_to(TESTS)


def _command_line_timeout(config: pytest.Config) -> bool:
    return config.getoption("timeout", None) is not None or "PYTEST_TIMEOUT" in os.environ


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the markers given here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tracks: dict[str, str] = {}
    problems: list[str] = []
    for item in items:
        if not _in_this_suite(item):
            continue  # e.g. the omniqual plugin's gate items, marked by the plugin itself
        track = track_of(item)
        if track is None:
            written = written_tracks(item)
            found = f"tracks {' and '.join(written)}" if written else "no track"
            problems.append(f"{item.nodeid}: {found}")
            continue
        tracks[item.nodeid] = track
        item.add_marker(track)
        if track == "fast":
            live = [m for m in ("integration", "embedded") if item.get_closest_marker(m)]
            if live:
                problems.append(f"{item.nodeid}: a fast test marked {' and '.join(live)}")
            continue
        item.add_marker("integration")
        if track in MEASURING_TRACKS:
            item.add_marker("alone")
        if "embedded_target" in getattr(item, "fixturenames", ()):
            item.add_marker("embedded")
        if "shared_servers" in getattr(item, "fixturenames", ()):
            # One worker holds the session's shared servers (--dist loadgroup): borrowers on two
            # workers would start every shared server twice.
            item.add_marker(pytest.mark.xdist_group(SHARED_SERVERS_GROUP))
        if item.get_closest_marker("timeout") is None and not _command_line_timeout(config):
            item.add_marker(pytest.mark.timeout(LIVE_TIMEOUT_S))
    if problems:
        raise pytest.UsageError(
            "every test needs exactly one track: add its file to LIVE_TRACK_RULES in "
            f"tests/conftest.py or mark it with one of {', '.join(TRACKS)}\n  "
            + "\n  ".join(problems)
        )
    items.sort(key=lambda item: TRACKS.index(tracks.get(item.nodeid, "fast")))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's controller hook: absent without it
def pytest_testnodedown(node: Any, error: object) -> None:
    """Keep a worker's live-census line: the controller prints it (it never loads the live
    tests' conftest, which counts start-ups in each worker)."""
    line = getattr(node, "workeroutput", {}).get("live_census")
    if line:
        node.config.stash.setdefault(WORKER_CENSUS, []).append(str(line))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in terminalreporter.config.stash.get(WORKER_CENSUS, []):
        terminalreporter.write_line(f"worker {line}")
