"""The Definition of Done as data: the floor of each kind of row, and which rows it binds."""

from omniqual.domain.definition_of_done import (
    DRAFTED_GATES,
    RECOMMENDED_GATES,
    TASK_GATES,
    RowKind,
    held_to_floor,
    kind_of,
    minimum_gates,
    missing_gates,
)


def test_a_row_with_a_parent_is_a_candidate_held_to_parity() -> None:
    assert kind_of(None) is RowKind.BASELINE
    assert kind_of({"quantization": "none"}) is RowKind.CANDIDATE
    assert minimum_gates(RowKind.BASELINE) == ("api-contract", "strict-load", "reference-parity")
    assert minimum_gates(RowKind.CANDIDATE) == ("parity",)


def test_only_rows_that_claim_nothing_but_a_refusal_escape_the_floor() -> None:
    assert held_to_floor(("parity",), limited=False)
    assert held_to_floor((), limited=True)
    assert not held_to_floor((), limited=False)


def test_a_drafted_row_carries_the_whole_dod_in_order() -> None:
    assert (*TASK_GATES, *RECOMMENDED_GATES) == DRAFTED_GATES
    assert missing_gates(("soak", "api-contract"), TASK_GATES) == (
        "strict-load", "reference-parity")  # fmt: skip
