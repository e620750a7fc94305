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

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum


class RowKind(StrEnum):
    BASELINE = "baseline"
    """The reference deployment of an advertised task (no ``parent_row``)."""
    CANDIDATE = "candidate"
    """A deployment one axis away from its ``parent_row``."""


TASK_GATES: tuple[str, ...] = ("api-contract", "strict-load", "reference-parity")
"""Every advertised task: API parity and negative validation, strict loading, fixed reference."""

CORRECTNESS_GATES: dict[RowKind, str] = {
    RowKind.BASELINE: "reference-parity",
    RowKind.CANDIDATE: "parity",
}
"""The gate that proves a row of each kind computes the right thing."""

AXIS_CORRECTNESS_GATES: dict[str, str] = {"adapter": "lora"}
"""Candidate axes whose rows are meant to compute something other than their parent: a row one
per-request adapter away from its parent proves, by the adapter's own gate, that the adapter
acts, gives the parent's output at scale 0 and stays in its own request; parity with the parent
would only show that a request without the adapter is unchanged."""

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


def correctness_gate(kind: RowKind, axes: Iterable[str] = ()) -> str:
    """The gate that proves a row of ``kind`` right; a candidate's ``axes`` are those it differs
    from its parent on (exactly one on a valid matrix; any other count falls back to parity)."""
    differing = tuple(axes)
    if kind is RowKind.CANDIDATE and len(differing) == 1:
        return AXIS_CORRECTNESS_GATES.get(differing[0], CORRECTNESS_GATES[kind])
    return CORRECTNESS_GATES[kind]


def minimum_gates(kind: RowKind, axes: Iterable[str] = ()) -> tuple[str, ...]:
    """The gates a row of ``kind`` must list in ``requires`` (the DoD's floor)."""
    if kind is RowKind.BASELINE:
        return TASK_GATES
    return (correctness_gate(kind, axes),)


def recommendation_gates(kind: RowKind, axes: Iterable[str] = ()) -> tuple[str, ...]:
    """The gates a row of ``kind`` must have passed to be named the recommended deployment."""
    return (correctness_gate(kind, axes), *RECOMMENDED_GATES)


def differing_axes(row: Mapping[str, str], parent: Mapping[str, str]) -> tuple[str, ...]:
    """The axes on which ``row`` differs from ``parent`` (full value maps), sorted."""
    return tuple(sorted(a for a in set(row) | set(parent) if row.get(a) != parent.get(a)))


def missing_gates(listed: Iterable[str], wanted: Iterable[str]) -> tuple[str, ...]:
    """``wanted`` gates that ``listed`` lacks, in ``wanted``'s order."""
    have = set(listed)
    return tuple(g for g in wanted if g not in have)
