"""``omniqual evidence stability`` and ``omniqual run --repeat``: the verdict-stability table
from reruns of one build, and exit 1 when a verdict moved between passed and failed."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from tests.fakes.evidence import record_run
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)
from tests.fakes.projects import make_project

MATRIX = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices" / "mini.yaml"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
runner = CliRunner()


def test_identical_reruns_exit_0_with_full_agreement(tmp_path: Path) -> None:
    for minute in (0, 5):
        record_run(tmp_path / "runs", [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)],
                   start_minute=minute)  # fmt: skip
    result = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                 "-m", str(MATRIX), "-o", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 runs: 100% of gate verdicts agreed in every run; 0 moved" in result.stdout
    record = json.loads((tmp_path / "out" / "stability.json").read_text())
    assert [line["agreed"] for line in record["lines"]] == ["2/2", "2/2"]
    assert (tmp_path / "out" / "stability.html").is_file()


def test_a_verdict_that_moved_between_passed_and_failed_exits_1_naming_it(tmp_path: Path) -> None:
    record_run(tmp_path / "runs", [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
    record_run(tmp_path / "runs", [("contract", BASE, O.FAILED), ("load", BASE, O.PASSED)],
               start_minute=5)  # fmt: skip
    result = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                 "-m", str(MATRIX)])  # fmt: skip
    assert result.exit_code == 1, result.output
    assert f"contract on {BASE}: passed failed (moved between passed and failed" in result.stdout
    assert f"row {BASE}: validated → not tested" in result.stdout


def test_a_path_holding_no_runs_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "stability", str(tmp_path / "nothing"),
                                 "-m", str(MATRIX)])  # fmt: skip
    assert result.exit_code == 2
    assert "neither a run directory nor a directory of runs" in result.stderr


@pytest.mark.usefixtures("worked_priors")
def test_run_repeat_runs_the_campaign_again_and_writes_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--repeat", "2"])
    assert result.exit_code == 1, result.output  # the campaign's planted failure, not a flip
    assert "run 2 of 2" in result.stderr
    record = json.loads((root / "out" / "stability.json").read_text())
    assert len(record["runs"]) == 2 and record["flips"] == 0
    assert all(line["agreed"] == "2/2" for line in record["lines"])
    report = (root / "out" / "report.md").read_text()
    assert "12. Verdict stability (reruns of the same build)" in report
    assert "verdicts that moved between passed and failed" in report
