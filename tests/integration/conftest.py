"""Fixtures every integration directory shares: the live embedded target's presence.

A module that needs the live target carries ``pytest.mark.usefixtures("embedded_target")``
(part of ``EMBEDDED_MARKS``); the decision itself is :mod:`embedded_presence`.
"""

from __future__ import annotations

import os

import pytest

from tests.integration.embedded.embedded_presence import absence, missing_embedded


@pytest.fixture(scope="session")
def embedded_target() -> None:
    """Skip without the embedded target; fail instead where CI requires it."""
    found = absence(os.environ, missing_embedded())
    if found is None:
        return
    if found.required:
        pytest.fail(found.reason, pytrace=False)
    pytest.skip(found.reason)
