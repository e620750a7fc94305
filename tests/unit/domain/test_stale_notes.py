"""Stale notes say which field made a result stale and both values."""

from datetime import UTC, datetime

from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.rules import CurrentGate, EvidenceItem, RowRequirements, derive_state

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GATES = {"contract": CurrentGate(2, "a" * 64)}
ROW = RowRequirements(requires=("contract",))
NONE = (None, None, None, None, None, None, None)


def item(**kw: object) -> EvidenceItem:
    fields: dict[str, object] = {
        "result_id": "r1",
        "run_id": "run",
        "gate_id": "contract",
        "gate_version": 2,
        "outcome": GateOutcome.PASSED,
        "finished_at": T0,
        "has_artifacts": True,
        "revisions": NONE,
        "spec_sha256": "a" * 64,
    }
    fields.update(kw)
    return EvidenceItem(**fields)  # type: ignore[arg-type]


def test_a_version_pin_a_url_result_lacks_names_the_field_and_both_values() -> None:
    got = derive_state(ROW, [item()], GATES, target=(None, None, "0.30.0", None, None, None, None))
    assert got.state is CellState.NOT_TESTED
    assert got.stale == 1
    assert (
        "1 result(s) ignored as stale (not the pinned revision): "
        "vllm_omni_version: pinned 0.30.0, result has none"
    ) in got.reasons


def test_every_differing_revision_is_named_with_both_values() -> None:
    target = ("rev-a", None, "0.30.0", None, None, None, None)
    got = derive_state(
        ROW, [item(revisions=("rev-b", None, "0.29.1", None, None, None, None))], GATES, target
    )
    (note,) = [r for r in got.reasons if "stale" in r]
    assert "model_revision: pinned rev-a, result has rev-b" in note
    assert "vllm_omni_version: pinned 0.30.0, result has 0.29.1" in note


def test_distinct_mismatches_are_counted_apiece() -> None:
    target = (None, None, "0.30.0", None, None, None, None)
    results = [
        item(result_id="r1"),
        item(result_id="r2", finished_at=T0.replace(minute=1)),
        item(result_id="r3", revisions=(None, None, "0.29.0", None, None, None, None)),
    ]
    (note,) = [r for r in derive_state(ROW, results, GATES, target).reasons if "stale" in r]
    assert note.startswith("3 result(s) ignored as stale (not the pinned revision): ")
    assert "vllm_omni_version: pinned 0.30.0, result has none (2)" in note
    assert "vllm_omni_version: pinned 0.30.0, result has 0.29.0 (1)" in note


def test_an_old_gate_version_names_the_gate_and_both_versions() -> None:
    got = derive_state(ROW, [item(gate_version=1)], GATES)
    assert (
        "1 result(s) ignored as stale (gate spec, contract or mapping changed since): "
        "contract gate_version: current 2, result has 1"
    ) in got.reasons


def test_an_edited_spec_names_the_gate_and_both_hashes_shortened() -> None:
    got = derive_state(ROW, [item(spec_sha256="b" * 64)], GATES)
    (note,) = [r for r in got.reasons if "stale" in r]
    assert note == (
        "1 result(s) ignored as stale (gate spec, contract or mapping changed since): "
        f"contract gate_spec_sha256: current {'a' * 12}…, result has {'b' * 12}…"
    )


def test_a_many_valued_note_stays_short() -> None:
    target = (None, "ck-pinned", None, None, None, None, None)
    results = [
        item(result_id=f"r{n}", revisions=(None, f"ck-{n}", None, None, None, None, None))
        for n in range(9)
    ]
    (note,) = [r for r in derive_state(ROW, results, GATES, target).reasons if "stale" in r]
    assert note.startswith("9 result(s) ignored as stale")
    assert note.count("checkpoint_sha256: pinned ck-pinned") == 3
    assert note.endswith("and 6 other mismatches")
