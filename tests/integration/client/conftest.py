"""Fixtures for client integration tests: the fake server on a real 127.0.0.1 ephemeral port."""

from __future__ import annotations

import sys
from pathlib import Path

# `tests.fakes` is imported as a package from the repository root; make sure the root is on
# sys.path even when pytest's rootdir handling has not put it there.
_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
