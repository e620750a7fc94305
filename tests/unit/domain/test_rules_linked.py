"""The rule table's linked passes: a perf pass counts only beside a passed correctness gate
(reference-parity or parity) of the same deployment."""

from datetime import UTC, datetime

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.rules import CurrentGate, EvidenceItem, RowRequirements, derive_state

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P, F = GateOutcome.PASSED, GateOutcome.FAILED
REV = ("rev1", "ck1", "0.30.0", None, "0.20.0", "cfg1", None)
OTHER = ("rev1", "ck1", "0.30.0", None, "0.20.0", "cfg2", None)
GATES = {g: CurrentGate(1) for g in ("contract", "perf", "reference-parity", "parity")}


def item(gate: str, outcome: GateOutcome = P, revisions: tuple[str | None, ...] = REV,
         ) -> EvidenceItem:  # fmt: skip
    return EvidenceItem(result_id=f"{gate}-{outcome.value}", run_id="run", gate_id=gate,
                        gate_version=1, outcome=outcome, finished_at=T0, has_artifacts=True,
                        revisions=revisions)  # fmt: skip


BASELINE_ROW = RowRequirements(requires=("contract", "reference-parity", "perf"))
PERF_ONLY = RowRequirements(requires=("contract", "perf"))


def test_perf_with_its_correctness_gate_passed_validates() -> None:
    got = derive_state(BASELINE_ROW, [item("contract"), item("reference-parity"), item("perf")],
                       GATES)  # fmt: skip
    assert got.state is CellState.VALIDATED


def test_perf_pass_without_any_correctness_result_does_not_count() -> None:
    got = derive_state(PERF_ONLY, [item("contract"), item("perf")], GATES)
    assert got.state is CellState.NOT_TESTED
    assert any(r.startswith("perf: passed, but a measured pass counts only beside") and
               "reference-parity has no usable result" in r for r in got.reasons)


def test_perf_pass_beside_a_failed_correctness_gate_does_not_count() -> None:
    got = derive_state(PERF_ONLY, [item("contract"), item("perf"), item("parity", F)], GATES)
    assert got.state is CellState.NOT_TESTED
    assert any("parity did not pass" in r for r in got.reasons)


def test_correctness_passed_on_another_deployment_does_not_count() -> None:
    got = derive_state(PERF_ONLY, [item("contract"), item("perf"),
                                   item("parity", revisions=OTHER)], GATES)  # fmt: skip
    assert got.state is CellState.NOT_TESTED
    assert any("parity passed on another deployment" in r for r in got.reasons)


def test_a_candidate_row_links_to_parity() -> None:
    got = derive_state(PERF_ONLY, [item("contract"), item("perf"), item("parity")], GATES)
    assert got.state is CellState.VALIDATED


def test_the_link_table_is_the_rows_to_change() -> None:
    unlinked = RowRequirements(requires=("contract", "perf"), linked=())
    assert derive_state(unlinked, [item("contract"), item("perf")], GATES).state is (
        CellState.VALIDATED)  # fmt: skip
