"""``omniqual evidence stability`` and ``omniqual run --repeat``: the verdict-stability table
from reruns of one build, and exit 1 when a verdict moved between passed and failed."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT, LAUNCHED, record_run, result
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
    assert "2 runs: 100% of gate verdicts decided alike in every run" in result.stdout
    assert "100% of verdicts decided (4 of 4)" in result.stdout
    record = json.loads((tmp_path / "out" / "stability.json").read_text())
    assert [line["agreed"] for line in record["lines"]] == ["2/2", "2/2"]
    assert [line["decided"] for line in record["lines"]] == ["2/2", "2/2"]
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


def _run(root: Path, outcomes: list[tuple[str, O]], provenance: Provenance = LAUNCHED,
         minute: int = 0) -> Path:  # fmt: skip
    writer = RunWriter.create(root, command=("omniqual", "test"), environment=FINGERPRINT)
    with writer:
        for i, (gate, outcome) in enumerate(outcomes):
            writer.record(result(writer, gate, BASE, outcome, minute=minute + i,
                                 provenance=provenance))  # fmt: skip
    return writer.run_dir


def test_a_gate_invalid_in_every_run_is_not_called_agreed(tmp_path: Path) -> None:
    for minute in (0, 5):
        _run(tmp_path / "runs", [("contract", O.PASSED), ("load", O.INVALID)], minute=minute)
    result = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                 "-m", str(MATRIX), "-o", str(tmp_path / "out")])  # fmt: skip
    assert "2 runs: 50% of gate verdicts decided alike in every run" in result.stdout
    assert "50% of verdicts decided (2 of 4; 2 invalid)" in result.stdout
    assert f"load on {BASE}: invalid invalid (never decided: invalid in every run" in result.stdout
    record = json.loads((tmp_path / "out" / "stability.json").read_text())
    assert record["never_decided"] == 1 and record["decided"] == "2 of 4 (50%)"
    decided = {line["gate"]: line["decided"] for line in record["lines"]}
    assert decided == {"contract": "2/2", "load": "0/2"}


def test_runs_of_different_builds_are_refused_in_one_table(tmp_path: Path) -> None:
    first = _run(tmp_path / "runs", [("contract", O.PASSED)])
    newer = LAUNCHED.model_copy(update={"vllm_omni_version": "0.31.0"})
    second = _run(tmp_path / "runs", [("contract", O.PASSED)], newer, minute=5)
    result = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                 "-m", str(MATRIX)])  # fmt: skip
    assert result.exit_code == 2, result.output
    said = " ".join(result.stderr.split())
    assert "not all of one build" in said
    assert (f"{second.name} differs from {first.name} in vllm_omni_version on {BASE} "
            f"(0.30.0 in {first.name}, 0.31.0 in {second.name})") in said  # fmt: skip


def test_runs_of_another_omniqual_are_refused_in_one_table(tmp_path: Path) -> None:
    _run(tmp_path / "runs", [("contract", O.PASSED)])
    writer = RunWriter.create(tmp_path / "runs", command=("omniqual",),
                              environment=FINGERPRINT.model_copy(
                                  update={"omniqual_version": "0.2.0"}))  # fmt: skip
    with writer:
        writer.record(result(writer, "contract", BASE, O.PASSED, minute=5))
    result_ = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                  "-m", str(MATRIX)])  # fmt: skip
    assert result_.exit_code == 2, result_.output
    assert "in omniqual (0.1.0 in" in " ".join(result_.stderr.split())


def test_a_resumed_run_is_named_as_such(tmp_path: Path) -> None:
    first = _run(tmp_path / "runs", [("contract", O.PASSED)])
    with RunWriter.resume(first) as writer:
        writer.record(result(writer, "load", BASE, O.PASSED, minute=1))
    _run(tmp_path / "runs", [("contract", O.PASSED), ("load", O.PASSED)], minute=5)
    result_ = runner.invoke(app, ["evidence", "stability", str(tmp_path / "runs"),
                                  "-m", str(MATRIX), "-o", str(tmp_path / "out")])  # fmt: skip
    assert result_.exit_code == 0, result_.output
    assert f"{first.name} (resumed: 2 sessions)" in result_.stdout
    record = json.loads((tmp_path / "out" / "stability.json").read_text())
    assert record["resumed"] == [True, False]
    md = (tmp_path / "out" / "stability.md").read_text()
    assert "| Run 1 (resumed) | Run 2 |" in md


@pytest.mark.usefixtures("worked_priors")
def test_run_repeat_resuming_a_run_of_another_omniqual_writes_no_table_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)
    older = FINGERPRINT.model_copy(update={"omniqual_version": "0.0.1-older"})
    killed = RunWriter.create(root / "runs", command=("omniqual", "run"), environment=older)
    killed.close()  # a run killed before its first result, by an older omniqual
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--repeat", "2",
                                 "--resume", str(killed.run_dir)])  # fmt: skip
    said = " ".join(result.stderr.split())
    assert "no verdict-stability table: the runs are not all of one build" in said, result.output
    assert "in omniqual (0.0.1-older in " in said
    assert not (root / "out" / "stability.json").exists()
    assert (root / "out" / "report.md").is_file()
