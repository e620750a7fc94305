"""``omniqual report`` as a user runs it: the PR-comment Markdown, CSV tables beside it, the
step summary appended to ``$GITHUB_STEP_SUMMARY``, and readable errors for bad options."""

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from tests.fakes.evidence import record_run

MATRIX = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices" / "mini.yaml"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
runner = CliRunner()


def test_report_writes_markdown_csv_and_the_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    record_run(runs / "a", [("contract", BASE, O.PASSED)])
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = tmp_path / "out" / "report.md"
    outcome = runner.invoke(app, ["report", str(MATRIX), "-e", str(runs), "-o", str(out),
                                  "--csv-dir", str(tmp_path / "out" / "tables"),
                                  "--full-report", "report.html",
                                  "--append-step-summary"])  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    text = out.read_text(encoding="utf-8")
    assert len(text) <= 65_536 and "## 1. Official revisions and API/limit matrix" in text
    assert "](../runs/a/" in text and "/journal.jsonl#" in text  # relative to the report
    verdicts = (
        tmp_path / "out" / "tables" / "00-per-gate-verdicts-latest-result-per-gate-and-row.csv"
    )
    rows = list(csv.DictReader(verdicts.open(encoding="utf-8")))
    assert [(r["Gate"], r["Verdict"]) for r in rows] == [("contract", "passed")]
    assert rows[0]["evidence"].startswith("../../runs/a/")  # relative to the CSV directory
    appended = summary.read_text(encoding="utf-8")
    assert appended.startswith("earlier step\n## ") and "### Evidence checklist" in appended


def test_bad_format_and_missing_summary_variable_are_user_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    record_run(runs / "a", [("contract", BASE, O.PASSED)])
    outcome = runner.invoke(app, ["report", str(MATRIX), "-e", str(runs), "-f", "pdf"])
    assert outcome.exit_code == 2  # a usage mistake: no traceback
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    assert "--format must be one of" in outcome.output
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    outcome = runner.invoke(app, ["report", str(MATRIX), "-e", str(runs),
                                  "--append-step-summary"])  # fmt: skip
    assert outcome.exit_code != 0 and "GITHUB_STEP_SUMMARY is not set" in outcome.output
