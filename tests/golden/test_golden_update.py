"""Updating golden files is reviewed, never self-approving: an update run that changes a golden
file fails with the diff, and a normal run compares strictly and writes nothing."""

import shutil
from pathlib import Path

import pytest

from tests.golden import test_report_golden
from tests.golden.golden_files import UPDATE_VARIABLE, golden_problem

GOLDEN = Path(__file__).parent / "report"


def _stale_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "report"
    shutil.copytree(GOLDEN, copy)
    (copy / "matrix.md").write_text("an outdated golden\n", encoding="utf-8")
    return copy


def test_an_update_that_changes_a_golden_file_fails_with_the_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _stale_copy(tmp_path)
    monkeypatch.setenv(UPDATE_VARIABLE, "1")
    monkeypatch.setattr(test_report_golden, "GOLDEN", copy)
    monkeypatch.setattr(test_report_golden, "UPDATE", True, raising=False)
    with pytest.raises(pytest.fail.Exception) as failed:
        test_report_golden.test_render_matches_golden_file("matrix.md")
    assert "-an outdated golden" in str(failed.value) and "review" in str(failed.value)
    # The new render is in place for the reviewer's diff, and now stands.
    assert (copy / "matrix.md").read_text() == (GOLDEN / "matrix.md").read_text()
    test_report_golden.test_render_matches_golden_file("matrix.md")


def test_a_normal_run_compares_strictly_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _stale_copy(tmp_path)
    monkeypatch.delenv(UPDATE_VARIABLE, raising=False)
    monkeypatch.setattr(test_report_golden, "GOLDEN", copy)
    with pytest.raises(pytest.fail.Exception, match=r"(?s)differs.*\+\+\+ matrix.md \(rendered\)"):
        test_report_golden.test_render_matches_golden_file("matrix.md")
    assert (copy / "matrix.md").read_text() == "an outdated golden\n"


def test_an_update_that_changes_nothing_passes(tmp_path: Path) -> None:
    path = tmp_path / "same.md"
    path.write_text("same\n", encoding="utf-8")
    assert golden_problem(path, "same\n", update=True) is None
    assert "created" in (golden_problem(tmp_path / "new.md", "x\n", update=True) or "")
    assert "missing" in (golden_problem(tmp_path / "absent.md", "x\n", update=False) or "")
