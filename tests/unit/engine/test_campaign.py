"""A campaign end to end without sockets: plan, run, record, resume, compile."""

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.engine.run.campaign import run_campaign
from omniqual.evidence.store import RunWriter, read_run
from omniqual.specs.campaign import load_campaign
from omniqual.specs.source import SpecError
from tests.fakes import checks
from tests.fakes.evidence import FINGERPRINT
from tests.fakes.projects import make_project

BASE = "model=m;task=t2i;quantization=none;hardware=cpu"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def test_campaign_runs_records_and_compiles(project: Path) -> None:
    outcome = asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    assert len(outcome.results) == 3
    assert outcome.unplanned_rows == ("model=m;task=t2v;quantization=fp8;hardware=cpu",)
    states = {row.key: row.state for row in outcome.compiled.rows}
    assert states[BASE] is CellState.VALIDATED
    assert states["model=m;task=t2v;quantization=none;hardware=cpu"] is CellState.NOT_TESTED
    contents = read_run(outcome.run_dir)
    assert contents.finished is not None and contents.finished.status == "completed"
    assert {r.outcome for r in contents.results} == {GateOutcome.PASSED, GateOutcome.FAILED}
    failed = next(r for r in contents.results if r.outcome is GateOutcome.FAILED)
    assert failed.reasons == ("planted fault",)


def test_a_killed_campaign_resumes_without_redoing_results(project: Path) -> None:
    loaded = load_campaign(project / "c.yaml")
    first = asyncio.run(run_campaign(loaded, command=["t"]))
    # Simulate a kill after the first result: a run holding only that one, never finished.
    writer = RunWriter.create(project / "runs", command=["t"], environment=FINGERPRINT)
    writer.record(first.results[0].model_copy(update={"run_id": writer.run_id, "artifacts": ()}))
    writer.close()
    checks.CALLS.clear()
    resumed = asyncio.run(run_campaign(loaded, command=["t"], resume=writer.run_dir))
    assert resumed.skipped_as_done == 1
    assert len(checks.CALLS) == 2
    assert len(read_run(writer.run_dir).results) == 3


def test_a_harness_fault_is_recorded_as_errored(project: Path) -> None:
    (project / "gates" / "good.yaml").write_text(
        "id: good\nkind: scripted\nversion: 1\nparams: {outcome: raise}\n"
    )
    outcome = asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    errored = [r for r in outcome.results if r.outcome is GateOutcome.ERRORED]
    assert len(errored) == 2
    assert errored[0].error is not None and "scripted harness fault" in errored[0].error.message


def test_bad_gate_params_stop_the_campaign_before_anything_runs(project: Path) -> None:
    (project / "gates" / "bad.yaml").write_text(
        "id: bad\nkind: scripted\nversion: 1\nparams: {outcome: maybe}\n"
    )
    with pytest.raises(SpecError, match=r"bad.yaml:4: params.outcome"):
        asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    assert checks.CALLS == []


def test_a_recipe_that_disagrees_with_its_row_is_a_spec_error(project: Path) -> None:
    (project / "runners" / "live.yaml").write_text(
        "id: live\ndescription: d\nkind: url\nurl: http://127.0.0.1:9\nrow: {quantization: fp8}\n"
    )
    with pytest.raises(SpecError, match="realizes quantization=fp8"):
        asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
