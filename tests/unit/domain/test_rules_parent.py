"""The rule table's parent evidence: a candidate row reaches `validated` or `limited` only when
its parent's correctness gate has a latest usable pass; a refusal needs no parent."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.rules import (
    CurrentGate,
    EvidenceItem,
    ParentEvidence,
    RowRequirements,
    correctness_gap,
    derive_state,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P, F = GateOutcome.PASSED, GateOutcome.FAILED
REV = ("rev1", "ck1", "0.30.0", None, "0.20.0", "cfg1", None)
GATES = {g: CurrentGate(1) for g in ("parity", "reference-parity", "fails-fast", "subset")}
PARENT = "model=m;quantization=none"
ORPHAN = ParentEvidence(PARENT, "reference-parity: no usable result")
ANCHORED = ParentEvidence(PARENT)


def item(gate: str, outcome: GateOutcome = P, minute: int = 0, version: int = 1) -> EvidenceItem:
    return EvidenceItem(result_id=f"{gate}-{minute}", run_id="run", gate_id=gate,
                        gate_version=version, outcome=outcome,
                        finished_at=T0 + timedelta(minutes=minute), has_artifacts=True,
                        revisions=REV)  # fmt: skip


def test_a_candidate_whose_parent_has_no_correctness_pass_is_not_tested() -> None:
    got = derive_state(RowRequirements(requires=("parity",), parent=ORPHAN), [item("parity")],
                       GATES)  # fmt: skip
    assert got.state is CellState.NOT_TESTED
    assert got.reasons[0].startswith(f"parent row {PARENT}: reference-parity: no usable result")
    assert got.supporting == ()


def test_a_candidate_beside_its_parents_pass_derives_from_its_own_evidence() -> None:
    req = RowRequirements(requires=("parity",), parent=ANCHORED)
    assert derive_state(req, [item("parity")], GATES).state is CellState.VALIDATED
    assert derive_state(req, [item("parity", F)], GATES).state is CellState.NOT_TESTED


def test_a_declared_limitation_does_not_stand_in_for_the_parent() -> None:
    req = RowRequirements(requires=("parity",), limitation="64x64 only",
                          limited_requires=("subset",), limited_rejection=("fails-fast",),
                          parent=ORPHAN)  # fmt: skip
    got = derive_state(req, [item("subset"), item("fails-fast")], GATES)
    assert got.state is CellState.NOT_TESTED
    assert got.reasons[0].startswith(f"parent row {PARENT}: ")
    anchored = replace(req, parent=ANCHORED)
    assert derive_state(anchored, [item("subset"), item("fails-fast")], GATES).state is (
        CellState.LIMITED)  # fmt: skip


def test_a_refusal_needs_no_parent_and_conflicts_are_still_conflicts() -> None:
    refusal = RowRequirements(requires=("parity",), unsupported_by=("fails-fast",), parent=ORPHAN)
    assert derive_state(refusal, [item("fails-fast")], GATES).state is CellState.UNSUPPORTED
    both = derive_state(refusal, [item("fails-fast"), item("parity")], GATES)
    assert both.state is CellState.NOT_TESTED and "conflicting" in both.reasons[0]


def test_correctness_gap_reads_only_the_latest_usable_result() -> None:
    assert correctness_gap("reference-parity", [item("reference-parity")], GATES) is None
    assert correctness_gap("reference-parity", [], GATES) == "reference-parity: no usable result"
    later_failure = [item("reference-parity"), item("reference-parity", F, minute=1)]
    gap = correctness_gap("reference-parity", later_failure, GATES)
    assert gap is not None and gap.startswith("reference-parity: latest result failed")
    stale = [item("reference-parity", version=0)]
    assert correctness_gap("reference-parity", stale, GATES) == (
        "reference-parity: no usable result")  # fmt: skip
