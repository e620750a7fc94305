"""The browser for the HTML report tests, and where their screenshots are kept.

Without a browser the tests skip and say why, except in CI (``CI=true``, with which CI runs
``.ci/run``) or with OMNIQUAL_REQUIRE_BROWSER=1 (set by ``.ci/run``, which installs one): there
a missing browser fails them instead (tests/requirements.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from devtools_page import BROWSER_NAMES, find_browser

from tests.requirements import require_or_skip

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def browser() -> str:
    found = find_browser()
    if found:
        return found
    names = os.environ.get("OMNIQUAL_BROWSER") or ", ".join(BROWSER_NAMES)
    require_or_skip(
        f"a headless Chromium on PATH (looked for {names})",
        "`.ci/install-browser.sh` (make browser) installs it from the system's packages, which "
        "needs root (or sudo) and apt-get",
        require_variable="OMNIQUAL_REQUIRE_BROWSER",
    )


@pytest.fixture(scope="session")
def artifact_dir() -> Path:
    """A stable place for screenshots a reviewer opens after the run (git ignores out/)."""
    configured = os.environ.get("OMNIQUAL_TEST_ARTIFACTS")
    path = Path(configured) if configured else REPO / "out" / "test-artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path
