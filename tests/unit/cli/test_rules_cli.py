"""``omniqual rules``: the coverage table of the shipped catalogue, and per row of a matrix which
result decided each rule."""

from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.skill_rules import LatestResult, SkillRule, latest_results, rule_on_row
from omniqual.engine.matrix_service import load_project_matrix
from tests.fakes.evidence import record_run

ROOT = Path(__file__).resolve().parents[3]
MATRIX = ROOT / "matrices" / "embedded-cpu.yaml"


def test_without_evidence_it_prints_counts_per_group_then_every_rule() -> None:
    out = CliRunner().invoke(app, ["rules", "--root", str(ROOT)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].split() == ["group", "rules", "decided", "partial", "human", "missing",
                                "out_of_scope"]  # fmt: skip
    assert lines[1].split()[:2] == ["G0", "33"]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[1] == "273"
    assert sum(int(n) for n in total.split()[2:]) == 273
    assert any(line.startswith("AB-12  decided") for line in lines)
    assert "        decided by: fault-injection/restart-policy" in lines


def test_matrix_without_evidence_is_a_usage_error() -> None:
    out = CliRunner().invoke(app, ["rules", "--matrix", str(MATRIX)])
    assert out.exit_code != 0


def test_with_evidence_a_rule_is_decided_on_a_row_by_its_gates_latest_conclusive_result(
    tmp_path: Path,
) -> None:
    rows = [str(r.key) for r in load_project_matrix(MATRIX).matrix.rows]
    decided_row, other_row = rows[0], rows[1]
    record_run(tmp_path, [
        ("fault-injection", decided_row, GateOutcome.INVALID),
        ("fault-injection", decided_row, GateOutcome.FAILED),
        ("fault-injection", other_row, GateOutcome.PASSED),
        ("fault-injection", other_row, GateOutcome.INVALID),
    ])  # fmt: skip
    out = CliRunner().invoke(app, ["rules", "--matrix", str(MATRIX), "--evidence", str(tmp_path)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("AB-12  decided")))
    block = lines[at + 1 : at + 1 + len(rows)]
    by_row = {_row_of(line): line.strip() for line in block}
    mine, theirs = by_row[decided_row], by_row[other_row]
    assert mine.startswith(f"decided     {decided_row} by ") and "(fault-injection failed)" in mine
    # The latest result there is invalid: it decided nothing, the earlier pass no longer counts.
    assert theirs.strip().startswith("not decided") and "fault-injection invalid" in theirs
    # Any rule nothing decides (which one changes as gates are added): never decided on a row.
    missing = lines.index(next(line for line in lines if line.split()[1:2] == ["missing"]))
    assert lines[missing + 1].strip().startswith("not decided")


def _row_of(line: str) -> str:
    words = line.split()
    return words[2] if words[0] == "not" else words[1]


RULE = SkillRule.model_validate({
    "id": "AB-12", "statement": "s", "mode": "automatic", "source": "S1", "status": "decided",
    "decided_by": [{"gate": "fault-injection", "case": "restart-policy"},
                   {"gate": "abort", "case": "cleanup"}],
})  # fmt: skip


def test_a_later_gate_in_the_trace_decides_when_the_first_has_no_conclusive_result() -> None:
    found = [LatestResult("fault-injection", "r", GateOutcome.ERRORED, "a"),
             LatestResult("abort", "r", GateOutcome.PASSED, "b")]  # fmt: skip
    latest = latest_results(found, {"a": 1.0, "b": 2.0})
    verdict = rule_on_row(RULE, "r", latest)
    assert verdict.decided and verdict.result_id == "b"
    assert not rule_on_row(RULE, "other", latest).decided


PIXEL_CAP = SkillRule.model_validate({
    "id": "G0-14", "statement": "s", "mode": "automatic", "source": "S0", "status": "partial",
    "decided_by": [{"gate": "api-contract", "case": "pixel-bomb"}], "missing": "frames",
})  # fmt: skip
EMITTED = {"api_contract": {"pixel-bomb": "pixel-bomb"}}


def test_a_result_without_the_traced_case_decides_nothing() -> None:
    """A contract that declares no pixel cap sends no pixel-bomb case: its passed api-contract
    result says nothing about the pixel cap, so the rule stays undecided on that row."""
    sd3 = LatestResult("api-contract", "sd3", GateOutcome.PASSED, "a", "api_contract",
                       frozenset({"images-generations/probe", "images-generations/size/max"}))
    i2v = LatestResult("api-contract", "i2v", GateOutcome.PASSED, "b", "api_contract",
                       frozenset({"videos-async/input_reference/pixel-bomb"}))  # fmt: skip
    latest = latest_results([sd3, i2v], {"a": 1.0, "b": 2.0})
    on_sd3 = rule_on_row(PIXEL_CAP, "sd3", latest, EMITTED)
    assert not on_sd3.decided and "without a pixel-bomb case" in on_sd3.why
    on_i2v = rule_on_row(PIXEL_CAP, "i2v", latest, EMITTED)
    assert on_i2v.decided and on_i2v.result_id == "b"
