"""Gate outcomes and the four matrix states: the closed vocabularies every record uses."""

from enum import StrEnum


class GateOutcome(StrEnum):
    """What one gate run concluded about one row."""

    PASSED = "passed"
    FAILED = "failed"
    INVALID = "invalid"
    """The measurement did not meet its validity conditions (too few samples, schedule fell
    behind, run shorter than asked): neither a pass nor a fail."""
    ERRORED = "errored"
    """The harness or infrastructure failed; says nothing about the target."""
    SKIPPED = "skipped"

    @property
    def conclusive(self) -> bool:
        """Only passes and fails say something about the target."""
        return self in (GateOutcome.PASSED, GateOutcome.FAILED)


class CellState(StrEnum):
    """The four, and only four, states of a compatibility-matrix row."""

    VALIDATED = "validated"
    LIMITED = "limited"
    UNSUPPORTED = "unsupported"
    NOT_TESTED = "not tested"


DEFAULT_STATE = CellState.NOT_TESTED
