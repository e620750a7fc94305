"""A campaign made of parts: only its (rows, gates) run, the rest says where it is run, and a
gate past its budget on this host is `invalid: host too slow`, never a wait."""

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.engine.run.campaign import run_campaign
from omniqual.specs.campaign import load_campaign
from omniqual.specs.source import SpecError
from tests.fakes import checks
from tests.fakes.projects import make_project

T2I = "model=m;task=t2i;quantization=none;hardware=cpu"
T2V = "model=m;task=t2v;quantization=none;hardware=cpu"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    (root / "tour.yaml").write_text(
        "name: tour\nmatrix: matrices/m.yaml\nevidence: runs\nfull_campaign: c.yaml\n"
        "include:\n  - rows: task=t2v\n    gates: [good]\n"
    )
    return root


def test_only_the_included_gates_run_and_the_rest_says_where_they_run(project: Path) -> None:
    outcome = asyncio.run(run_campaign(load_campaign(project / "tour.yaml"), command=["t"]))
    assert checks.CALLS == [("good", T2V)]
    rows = {row.key: row for row in outcome.compiled.rows}
    assert rows[T2I].state is CellState.NOT_TESTED
    assert rows[T2I].reasons[0] == "not in this campaign (see the full campaign, c.yaml): good"
    # The t2v row ran one of its two gates: still not tested, naming the one left out.
    assert rows[T2V].state is CellState.NOT_TESTED
    assert rows[T2V].reasons[0] == "not in this campaign (see the full campaign, c.yaml): bad"


def test_the_full_campaign_leaves_nothing_out(project: Path) -> None:
    outcome = asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    assert not any(
        reason.startswith("not in this campaign")
        for row in outcome.compiled.rows
        for reason in row.reasons
    )


def test_an_unknown_gate_in_a_part_is_a_spec_error(project: Path) -> None:
    (project / "tour.yaml").write_text(
        "name: tour\nmatrix: matrices/m.yaml\nevidence: runs\n"
        "include:\n  - rows: task=t2v\n    gates: [goood]\n"
    )
    with pytest.raises(SpecError, match="unknown gate 'goood'"):
        asyncio.run(run_campaign(load_campaign(project / "tour.yaml"), command=["t"]))
    assert checks.CALLS == []


def test_a_bad_part_selector_and_a_missing_full_campaign_name_file_line_and_field(
    project: Path,
) -> None:
    (project / "tour.yaml").write_text(
        "name: tour\nmatrix: matrices/m.yaml\nfull_campaign: gone.yaml\n"
        "include:\n  - rows: task\n"
    )
    with pytest.raises(SpecError) as raised:
        load_campaign(project / "tour.yaml")
    text = str(raised.value)
    assert "tour.yaml:5: include.0.rows: selector term 'task' is not axis=value" in text
    assert "tour.yaml:3: full_campaign: no such campaign file" in text


def test_a_gate_past_its_budget_is_invalid_host_too_slow(project: Path) -> None:
    (project / "gates" / "good.yaml").write_text(
        "id: good\nkind: scripted\nversion: 1\nbudget_s: 0.05\nparams: {hang: true}\n"
    )
    outcome = asyncio.run(run_campaign(load_campaign(project / "tour.yaml"), command=["t"]))
    [result] = outcome.results
    assert result.outcome is GateOutcome.INVALID
    assert result.reasons == (
        "host too slow for this workload: not done within the gate's budget of 0.05 s "
        "(last: case 3 of 8, 38% done)",
    )
    assert [(m.name, m.value, m.unit) for m in result.measurements] == [("gate_budget", 0.05, "s")]


@pytest.mark.parametrize("budget", ["budget_s: 600\n", ""])
def test_a_timeout_the_check_raises_itself_is_its_fault_not_a_spent_budget(
    project: Path, budget: str
) -> None:
    (project / "gates" / "good.yaml").write_text(
        f"id: good\nkind: scripted\nversion: 1\n{budget}params: {{raise_timeout: true}}\n"
    )
    outcome = asyncio.run(run_campaign(load_campaign(project / "tour.yaml"), command=["t"]))
    [result] = outcome.results
    assert result.outcome is GateOutcome.ERRORED
    assert result.reasons == ("TimeoutError: the check's own deadline",)
