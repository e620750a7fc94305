"""The rule table: every transition, positive and negative."""

from datetime import UTC, datetime, timedelta

import pytest

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.rules import EvidenceItem, RowRequirements, derive_state

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P, F = GateOutcome.PASSED, GateOutcome.FAILED
VERSIONS = {"contract": 1, "load": 1, "reject": 1, "subset": 1, "ff": 1}
FULL = RowRequirements(requires=("contract", "load"))
LIMITED = RowRequirements(
    requires=("contract", "load"),
    limitation="up to 256x256 only",
    limited_requires=("subset",),
    limited_rejection=("reject",),
)
UNSUPPORTED = RowRequirements(requires=("contract",), unsupported_by=("ff",))


def item(gate: str, outcome: GateOutcome = P, minute: int = 0, **kw: object) -> EvidenceItem:
    fields: dict[str, object] = {
        "result_id": f"{gate}-{minute}-{outcome.value}",
        "run_id": "run",
        "gate_id": gate,
        "gate_version": 1,
        "outcome": outcome,
        "finished_at": T0 + timedelta(minutes=minute),
        "has_artifacts": True,
        "revisions": ("rev1", "ck1", "0.30.0", None),
    }
    fields.update(kw)
    return EvidenceItem(**fields)  # type: ignore[arg-type]


def state(
    req: RowRequirements, *items: EvidenceItem, target: tuple[str | None, ...] = ()
) -> CellState:
    return derive_state(req, items, VERSIONS, target).state


def test_default_is_not_tested() -> None:
    derivation = derive_state(FULL, [], VERSIONS)
    assert derivation.state is CellState.NOT_TESTED
    assert any("no usable result" in r for r in derivation.reasons)


def test_validated_needs_every_required_gate() -> None:
    assert state(FULL, item("contract")) is CellState.NOT_TESTED
    assert state(FULL, item("contract"), item("load")) is CellState.VALIDATED


def test_validated_supporting_results_are_listed() -> None:
    d = derive_state(FULL, [item("contract"), item("load")], VERSIONS)
    assert set(d.supporting) == {"contract-0-passed", "load-0-passed"}


def test_pass_without_artifacts_does_not_promote() -> None:
    got = derive_state(FULL, [item("contract"), item("load", has_artifacts=False)], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert any("without artifacts" in r for r in got.reasons)


def test_no_required_gates_never_validates() -> None:
    assert state(RowRequirements(), item("contract")) is CellState.NOT_TESTED


def test_startup_only_never_promotes() -> None:
    got = derive_state(
        FULL, [item("contract", startup_only=True), item("load", startup_only=True)], VERSIONS
    )
    assert got.state is CellState.NOT_TESTED
    assert any("startup-only" in r for r in got.reasons)


def test_stale_gate_version_does_not_count() -> None:
    got = derive_state(FULL, [item("contract", gate_version=0), item("load")], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert any("stale" in r for r in got.reasons)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_stale_revision_does_not_count(index: int) -> None:
    target: list[str | None] = ["rev1", "ck1", "0.30.0", None]
    target[index] = "other"
    assert state(FULL, item("contract"), item("load"), target=tuple(target)) is CellState.NOT_TESTED


def test_matching_pinned_revision_counts() -> None:
    assert state(FULL, item("contract"), item("load"), target=("rev1", "ck1", "0.30.0", None)) is (
        CellState.VALIDATED
    )


def test_later_failure_demotes() -> None:
    assert state(FULL, item("contract"), item("load"), item("load", F, minute=5)) is (
        CellState.NOT_TESTED
    )


def test_later_pass_repromotes_after_failure() -> None:
    assert state(FULL, item("contract"), item("load", F), item("load", P, minute=5)) is (
        CellState.VALIDATED
    )


@pytest.mark.parametrize("outcome", [GateOutcome.INVALID, GateOutcome.ERRORED, GateOutcome.SKIPPED])
def test_inconclusive_results_are_not_evidence(outcome: GateOutcome) -> None:
    only = derive_state(FULL, [item("contract", outcome), item("load", outcome)], VERSIONS)
    assert only.state is CellState.NOT_TESTED
    assert any("not evidence" in r for r in only.reasons)
    # ... and neither do they erase an earlier conclusive pass.
    later = [item("contract"), item("load"), item("load", outcome, minute=9)]
    assert state(FULL, *later) is CellState.VALIDATED


def test_limited_needs_subset_rejection_and_limitation() -> None:
    assert state(LIMITED, item("subset"), item("reject")) is CellState.LIMITED
    assert state(LIMITED, item("subset")) is CellState.NOT_TESTED
    assert state(LIMITED, item("reject")) is CellState.NOT_TESTED
    assert state(LIMITED, item("subset"), item("reject", F)) is CellState.NOT_TESTED
    no_limitation = RowRequirements(
        requires=("contract",), limited_requires=("subset",), limited_rejection=("reject",)
    )
    assert state(no_limitation, item("subset"), item("reject")) is CellState.NOT_TESTED


def test_limited_reason_states_the_limitation() -> None:
    got = derive_state(LIMITED, [item("subset"), item("reject")], VERSIONS)
    assert got.reasons[0] == "limitation: up to 256x256 only"


def test_full_evidence_beats_limited() -> None:
    everything = [item("contract"), item("load"), item("subset"), item("reject")]
    assert state(LIMITED, *everything) is CellState.VALIDATED


def test_unsupported_needs_passing_fail_fast() -> None:
    assert state(UNSUPPORTED, item("ff")) is CellState.UNSUPPORTED
    assert state(UNSUPPORTED, item("ff", F)) is CellState.NOT_TESTED
    assert state(UNSUPPORTED, item("ff", startup_only=True)) is CellState.NOT_TESTED
    assert state(UNSUPPORTED, item("ff", has_artifacts=False)) is CellState.NOT_TESTED


def test_a_failed_rejection_check_is_the_reason() -> None:
    got = derive_state(
        RowRequirements(unsupported_by=("ff",)), [item("ff", F, reasons=("it served",))], VERSIONS
    )
    assert got.state is CellState.NOT_TESTED
    assert got.reasons == ("unsupported: ff: latest result failed (it served)",)


def test_unsupported_demoted_by_later_silent_acceptance() -> None:
    assert state(UNSUPPORTED, item("ff"), item("ff", F, minute=3)) is CellState.NOT_TESTED


def test_conflicting_evidence_is_not_tested() -> None:
    got = derive_state(UNSUPPORTED, [item("contract"), item("ff")], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert "conflicting" in got.reasons[0]


def test_failure_reason_is_reported() -> None:
    got = derive_state(
        FULL, [item("contract"), item("load", F, reasons=("missing tensor x",))], VERSIONS
    )
    assert any("missing tensor x" in r for r in got.reasons)


def test_unknown_gate_versions_are_not_stale() -> None:
    got = derive_state(FULL, [item("contract"), item("load")], {})
    assert got.state is CellState.VALIDATED
