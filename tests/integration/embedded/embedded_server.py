"""The markers of every test module that needs the live embedded target.

Its servers are started by omniqual's own launcher: the session-shared ones by
:mod:`shared_servers` (tests/integration/conftest.py), the fresh ones by the tests that need a
process of their own.
"""

from __future__ import annotations

import pytest

NEEDS_EMBEDDED = pytest.mark.usefixtures("embedded_target")
"""Skips without the embedded target, fails in CI (tests/integration/conftest.py)."""
EMBEDDED_MARKS = [pytest.mark.integration, pytest.mark.embedded, NEEDS_EMBEDDED]
"""``pytestmark`` of every test module that needs the live embedded target."""
