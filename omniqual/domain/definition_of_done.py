"""The production skill's Definition of Done, as the minimum gates of each kind of row.

Every advertised task (a baseline row: the dense reference deployment of a model, task and API
mode) must pass API parity and negative validation (``api-contract``), strict loading
(``strict-load``) and fixed-reference quality (``reference-parity``). A candidate row (one axis
away from its ``parent_row``: a fast path, an offload, an execution mode) proves its correctness
against that parent (``parity``) and counts only beside the parent's own correctness evidence.
The recommended deployment must, on top of its correctness gate, pass isolation, abort and error
cleanup, the benchmark and the soak on named hardware.

Pure data and small pure functions: the matrix loader, the rule table and ``recommend`` read it;
nobody else decides what "done" means.
"""

from collections.abc import Iterable, Sequence
from enum import StrEnum


class RowKind(StrEnum):
    BASELINE = "baseline"
    """The reference deployment of an advertised task (no ``parent_row``)."""
    CANDIDATE = "candidate"
    """A deployment one axis away from its ``parent_row``."""


TASK_GATES: tuple[str, ...] = ("api-contract", "strict-load", "reference-parity")
"""Every advertised task: API parity and negative validation, strict loading, fixed reference."""

CANDIDATE_GATES: tuple[str, ...] = ("parity",)
"""A candidate's correctness against its parent."""

CORRECTNESS_GATES: dict[RowKind, str] = {
    RowKind.BASELINE: "reference-parity",
    RowKind.CANDIDATE: "parity",
}
"""The gate that proves a row of each kind computes the right thing."""

RECOMMENDED_GATES: tuple[str, ...] = ("isolation", "abort", "fault-injection", "perf", "soak")
"""What the recommended deployment passes beside its correctness gate: isolation, abort and
error cleanup (faults injected inside the server), the benchmark and the soak."""


DRAFTED_GATES: tuple[str, ...] = (*TASK_GATES, *RECOMMENDED_GATES)
"""The whole DoD of a new model's baseline row (``model init``): the row is the task's reference
deployment and, until a candidate beats it, the one a recommendation would name."""


def held_to_floor(requires: Sequence[str], limited: bool) -> bool:
    """Whether a row must list its kind's minimum gates: every row that can reach `validated`
    or `limited` (it lists ``requires`` or declares a ``limited`` block). A row that lists only
    ``unsupported_by`` gates claims nothing but a refusal, and a row that lists nothing can
    never be more than `not tested`: neither shortens the DoD."""
    return limited or bool(requires)


def kind_of(parent_row: object | None) -> RowKind:
    """A row that names a ``parent_row`` is a candidate; every other row is a baseline."""
    return RowKind.BASELINE if parent_row is None else RowKind.CANDIDATE


def minimum_gates(kind: RowKind) -> tuple[str, ...]:
    """The gates a row of ``kind`` must list in ``requires`` (the DoD's floor)."""
    return TASK_GATES if kind is RowKind.BASELINE else CANDIDATE_GATES


def recommendation_gates(kind: RowKind) -> tuple[str, ...]:
    """The gates a row of ``kind`` must have passed to be named the recommended deployment."""
    return (CORRECTNESS_GATES[kind], *RECOMMENDED_GATES)


def missing_gates(listed: Iterable[str], wanted: Iterable[str]) -> tuple[str, ...]:
    """``wanted`` gates that ``listed`` lacks, in ``wanted``'s order."""
    have = set(listed)
    return tuple(g for g in wanted if g not in have)
