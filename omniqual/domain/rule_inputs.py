"""What the rule table (:mod:`omniqual.domain.rules`) reads of one recorded result, and what a
result must have been recorded against to count: kept apart so the table itself stays small."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import REVISION_FIELDS

Revisions = tuple[str | None, ...]
"""One value per ``REVISION_FIELDS`` entry, None where unknown."""

UNKNOWN_VALUES = frozenset({"", "unknown", "Unknown", "UNKNOWN"})
"""Recorded spellings of "nobody knows": read as None, never as a revision."""


def known_revisions(values: Sequence[str | None]) -> Revisions:
    """``values`` (one per revision field) with every unknown spelling read as None."""
    if len(values) != len(REVISION_FIELDS):
        # A short tuple would match anything a zip() stops short of: never allow one.
        raise ValueError(f"revisions need one value per field {REVISION_FIELDS}, got {len(values)}")
    return tuple(None if v in UNKNOWN_VALUES else v for v in values)


@dataclass(frozen=True, slots=True)
class CurrentGate:
    """What a result must have been recorded against to be current."""

    version: int
    spec_sha256: str | None = None
    """Hash of everything that decides the gate's results (None: compare versions only)."""


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """The part of a GateResult the rule table reads."""

    result_id: str
    run_id: str
    gate_id: str
    gate_version: int
    outcome: GateOutcome
    finished_at: datetime
    has_artifacts: bool
    revisions: Revisions
    """Exactly one value per ``REVISION_FIELDS`` entry (checked): None = unknown."""
    spec_sha256: str | None = None
    limitations: tuple[str, ...] = ()
    """Declared contract deviations this result reproduced."""
    reasons: tuple[str, ...] = ()
    count: int = 1
    """How many recorded results this item stands for (compile keeps only the latest of
    results that differ in nothing the table reads but time)."""

    def __post_init__(self) -> None:
        if len(self.revisions) != len(REVISION_FIELDS) or not UNKNOWN_VALUES.isdisjoint(
            self.revisions
        ):
            object.__setattr__(self, "revisions", known_revisions(self.revisions))
