"""Comparing a render with its golden file, and updating golden files so the change is reviewed.

A normal run compares strictly and, on a difference, fails with a unified diff. With
``OMNIQUAL_UPDATE_GOLDEN=1`` the new render is written over the golden file and the test still
FAILS, listing the diff, whenever anything changed: an update never passes by comparing a file
with itself. Review the diff (``git diff tests/golden``), commit it, and run again without the
variable to see the comparison pass.
"""

import difflib
import os
from pathlib import Path

import pytest

UPDATE_VARIABLE = "OMNIQUAL_UPDATE_GOLDEN"
MAX_DIFF_LINES = 200


def updating() -> bool:
    return os.environ.get(UPDATE_VARIABLE) == "1"


def unified_diff(old: str, new: str, name: str) -> str:
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{name} (golden)",
            tofile=f"{name} (rendered)",
        )
    )
    shown = "".join(lines[:MAX_DIFF_LINES])
    more = len(lines) - MAX_DIFF_LINES
    return shown + (f"\n... and {more} more diff lines\n" if more > 0 else "")


def golden_problem(path: Path, rendered: str, *, update: bool) -> str | None:
    """Why ``rendered`` does not stand as ``path``'s golden content, or None when it does.
    With ``update``, a differing (or missing) golden file is rewritten, and still reported."""
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == rendered:
        return None
    diff = unified_diff(old or "", rendered, path.name)
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
        verb = "created" if old is None else "rewritten"
        return (f"{path} {verb}; review this diff and commit it, then run the tests again "
                f"without {UPDATE_VARIABLE}:\n{diff}")  # fmt: skip
    if old is None:
        return f"{path} missing: run with {UPDATE_VARIABLE}=1 to create it, then review it"
    return (f"{path.name} differs from its golden file; if intended, run with "
            f"{UPDATE_VARIABLE}=1, review the diff and commit it:\n{diff}")  # fmt: skip


def assert_matches_golden(path: Path, rendered: str) -> None:
    problem = golden_problem(path, rendered, update=updating())
    if problem is not None:
        pytest.fail(problem, pytrace=False)
