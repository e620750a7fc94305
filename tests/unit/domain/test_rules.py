"""The rule table: every transition, positive and negative."""

from datetime import UTC, datetime, timedelta

import pytest

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.rules import CurrentGate, EvidenceItem, RowRequirements, derive_state

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P, F = GateOutcome.PASSED, GateOutcome.FAILED
VERSIONS = {g: CurrentGate(1, f"spec-{g}") for g in ("contract", "load", "reject", "subset", "ff")}
REV = ("rev1", "ck1", "0.30.0", None, "0.20.0", "cfg1", None)
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
        "revisions": REV,
        "spec_sha256": f"spec-{gate}",
    }
    fields.update(kw)
    return EvidenceItem(**fields)  # type: ignore[arg-type]


def state(
    req: RowRequirements, *items: EvidenceItem, target: tuple[str | None, ...] | None = None
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


def test_stale_gate_version_does_not_count() -> None:
    got = derive_state(FULL, [item("contract", gate_version=0), item("load")], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert any("stale" in r for r in got.reasons)


@pytest.mark.parametrize("index", [0, 1, 2, 4])
def test_stale_revision_does_not_count(index: int) -> None:
    target: list[str | None] = list(REV)
    target[index] = "other"
    assert state(FULL, item("contract"), item("load"), target=tuple(target)) is CellState.NOT_TESTED


def test_matching_pinned_revision_counts() -> None:
    assert state(FULL, item("contract"), item("load"), target=REV) is CellState.VALIDATED


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


# --- one row's state never mixes checkpoints or servers ---------------------------------------

CK_A = ("rev1", "ck-a", "0.30.0", None, "0.20.0", "cfg1", None)
CK_B = ("rev1", "ck-b", "0.30.0", None, "0.20.0", "cfg1", None)
UNKNOWN = (None,) * 7
SERVED_A = (None, None, None, None, "0.20.0", None, "served-a")
SERVED_B = (None, None, None, None, "0.20.0", None, "served-b")


def test_passes_on_two_checkpoints_never_combine() -> None:
    got = derive_state(FULL, [item("contract", revisions=CK_A), item("load", revisions=CK_B)], {})
    assert got.state is CellState.NOT_TESTED
    assert got.reasons[0].startswith("evidence from different checkpoints/servers: ")
    assert "contract (checkpoint_sha256=ck-a)" in got.reasons[0]
    assert "load (checkpoint_sha256=ck-b)" in got.reasons[0]
    assert got.supporting == ()


def test_unknown_revisions_never_combine_with_known_ones() -> None:
    got = derive_state(
        FULL, [item("contract", revisions=CK_A), item("load", revisions=UNKNOWN)], {}
    )
    assert got.state is CellState.NOT_TESTED
    assert "load (model_revision=unknown, checkpoint_sha256=unknown" in got.reasons[0]
    # ... and a later pass on the same, known, checkpoint restores the row.
    again = [item("contract", revisions=CK_A), item("load", revisions=UNKNOWN),
             item("load", minute=5, revisions=CK_A)]  # fmt: skip
    assert derive_state(FULL, again, {}).state is CellState.VALIDATED


def test_the_literal_unknown_is_no_revision() -> None:
    # Two results that record nothing of their deployment (URL results of an older omniqual)
    # may come from two servers: unknown never equals unknown.
    reported = ("unknown",) * 7
    got = derive_state(
        FULL, [item("contract", revisions=reported), item("load", revisions=UNKNOWN)], {}
    )
    assert got.state is CellState.NOT_TESTED
    assert got.reasons[0] == (
        "evidence from deployments nobody can tell apart (no checkpoint, serve config or served "
        "identity recorded): contract, load"
    )
    assert got.supporting == ()
    # A lone result combines with nothing: a one-gate row still rests on it.
    alone = RowRequirements(requires=("contract",))
    assert state(alone, item("contract", revisions=reported)) is CellState.VALIDATED
    pinned = ("rev1", None, None, None, None, None, None)
    assert state(FULL, item("contract", revisions=reported), item("load"), target=pinned) is (
        CellState.NOT_TESTED
    )


def test_url_results_combine_only_on_one_served_identity() -> None:
    same = [item("contract", revisions=SERVED_A), item("load", revisions=SERVED_A)]
    assert derive_state(FULL, same, {}).state is CellState.VALIDATED
    got = derive_state(
        FULL, [item("contract", revisions=SERVED_A), item("load", revisions=SERVED_B)], {}
    )
    assert got.state is CellState.NOT_TESTED
    assert "contract (served_identity_sha256=served-a)" in got.reasons[0]
    assert "load (served_identity_sha256=served-b)" in got.reasons[0]


def test_launched_results_combine_on_their_serve_config_alone() -> None:
    # A launch from a hub id has no checkpoint hash; its serve config names the deployment.
    launched = (None, None, "0.30.0", None, "0.20.0", "cfg1", None)
    pair = [item("contract", revisions=launched), item("load", revisions=launched)]
    assert derive_state(FULL, pair, {}).state is CellState.VALIDATED


def test_mixed_proof_of_rejection_is_not_unsupported() -> None:
    req = RowRequirements(unsupported_by=("ff", "reject"))
    got = derive_state(req, [item("ff", revisions=CK_A), item("reject", revisions=CK_B)], {})
    assert got.state is CellState.NOT_TESTED
    assert "different checkpoints/servers" in got.reasons[0]


# --- dead mechanisms (item 12) --------------------------------------------------------------


def test_revisions_must_name_every_field() -> None:
    with pytest.raises(ValueError, match="one value per field"):
        item("contract", revisions=())
    with pytest.raises(ValueError, match="one value per field"):
        derive_state(FULL, [item("contract"), item("load")], {}, target=())


def test_stale_results_are_counted() -> None:
    got = derive_state(
        FULL, [item("contract", gate_version=0), item("load", revisions=CK_B), item("load")],
        VERSIONS, REV,
    )  # fmt: skip
    assert got.stale == 2


# --- staleness follows content (item 4) -----------------------------------------------------


def test_changed_spec_content_is_stale() -> None:
    got = derive_state(FULL, [item("contract", spec_sha256="edited"), item("load")], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert any("gate spec, contract or mapping changed" in r for r in got.reasons)
    assert got.stale == 1


def test_results_without_a_spec_hash_are_judged_by_version_and_say_so() -> None:
    got = derive_state(FULL, [item("contract", spec_sha256=None), item("load")], VERSIONS)
    assert got.state is CellState.VALIDATED
    assert "1 result(s) without a recorded spec hash, judged by gate version only" in got.reasons


# --- reproduced deviations make a row limited (item 8) --------------------------------------


def test_reproduced_deviations_make_the_row_limited() -> None:
    deviations = ("n=0 accepted (declared deviation)", "size 1x1 accepted")
    got = derive_state(FULL, [item("contract", limitations=deviations), item("load")], VERSIONS)
    assert got.state is CellState.LIMITED
    assert got.limitation == "n=0 accepted (declared deviation); size 1x1 accepted"
    assert got.reasons[0] == f"limitation: {got.limitation}"
    assert set(got.supporting) == {"contract-0-passed", "load-0-passed"}


def test_declared_limitation_carries_the_deviations_of_its_evidence() -> None:
    got = derive_state(LIMITED, [item("subset", limitations=("seed ignored",)), item("reject")],
                       VERSIONS)  # fmt: skip
    assert got.state is CellState.LIMITED
    assert got.limitation == "up to 256x256 only; seed ignored"


def test_limited_with_a_passing_rejection_proof_is_conflicting() -> None:
    req = RowRequirements(
        requires=("contract",), limitation="small only", limited_requires=("subset",),
        limited_rejection=("reject",), unsupported_by=("ff",),
    )  # fmt: skip
    got = derive_state(req, [item("subset"), item("reject"), item("ff")], {})
    assert got.state is CellState.NOT_TESTED
    assert got.reasons[0].startswith("conflicting evidence")


def test_deviations_with_a_passing_rejection_proof_are_conflicting() -> None:
    got = derive_state(UNSUPPORTED, [item("contract", limitations=("x",)), item("ff")], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert "conflicting" in got.reasons[0]


# --- limited states only what it limits ------------------------------------------------------


def test_limited_does_not_cover_a_failed_required_gate() -> None:
    # The limited gates passed, but `load` (no part of the limitation) failed: the failure
    # keeps its own consequence, as without a limited block (not tested, the failure named).
    got = derive_state(LIMITED, [item("subset"), item("reject"), item("load", F)], VERSIONS)
    assert got.state is CellState.NOT_TESTED
    assert any(r.startswith("load: latest result failed") for r in got.reasons), got.reasons
    assert any("limitation does not cover" in r for r in got.reasons), got.reasons
    # A required gate merely not run is what a limited block is for.
    assert state(LIMITED, item("subset"), item("reject"), item("contract")) is CellState.LIMITED


def test_failed_required_gate_with_a_passing_rejection_proof_is_unsupported() -> None:
    # Without the limited claim there is no conflict: the fail-fast proof decides, as it
    # does for a row without a limited block.
    req = RowRequirements(requires=("contract",), limitation="small only",
                          limited_requires=("subset",), limited_rejection=("reject",),
                          unsupported_by=("ff",))  # fmt: skip
    proof = (item("subset"), item("reject"), item("ff"))
    assert state(req, *proof, item("contract", F)) is CellState.UNSUPPORTED
