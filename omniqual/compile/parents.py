"""Each candidate row's parent evidence: whether its parent row's correctness gate has a latest
usable pass (and, for a candidate parent, its own parent's, up to a baseline row), and, where
the promotion order asks more of the parent (``omniqual.domain.promotion``: a step/N row of its
step/1 row, an FP8 combination of its FP8 row), every gate that demands.

The rule table judges one row from that row's results; a candidate's ``parity`` only says it
computes what its parent computes, so compile reads the parent's results too and hands the table
the verdict as ``RowRequirements.parent`` (see ``omniqual.domain.rules``).
"""

from collections.abc import Callable, Iterable, Mapping

from omniqual.domain.matrix import LoadedMatrix
from omniqual.domain.promotion import parent_must_pass
from omniqual.domain.rules import (
    CurrentGate,
    EvidenceItem,
    ParentEvidence,
    Revisions,
    correctness_gap,
)


def parent_evidence(
    matrix: LoadedMatrix,
    evidence_of: Callable[[int], Iterable[EvidenceItem]],
    gates: Mapping[str, CurrentGate],
    target: Revisions,
) -> list[ParentEvidence | None]:
    """Per row of ``matrix`` (in order), its parent's evidence, None for a baseline row.
    ``evidence_of(i)`` gives the results held for row ``i``; it is asked only of parents."""
    position = {str(row.key): i for i, row in enumerate(matrix.rows)}
    parent_key: dict[int, str | None] = {}  # per spec: rows of one product share theirs
    gaps: dict[int, str | None] = {}

    def parent_of(i: int) -> str | None:
        spec = matrix.rows[i].spec
        if id(spec) not in parent_key:
            try:
                key = matrix.parent_of(matrix.rows[i])
            except ValueError as exc:  # a matrix built by hand: the loader refuses one
                parent_key[id(spec)] = f"{spec.parent_row} ({exc})"
            else:
                parent_key[id(spec)] = None if key is None else str(key)
        return parent_key[id(spec)]

    def gap(i: int, seen: tuple[int, ...]) -> str | None:
        """Why row ``i``'s correctness, with its chain of parents, is not established."""
        if i in gaps:
            return gaps[i]
        row = matrix.rows[i]
        gate = matrix.correctness_gate(row)
        why = correctness_gap(gate, evidence_of(i), gates, target)
        parent = parent_of(i)
        if why is None and parent is not None:
            j = position.get(parent)
            if j is None:
                why = f"its parent row {parent} is not a row of this matrix"
            elif j in seen:
                why = "its chain of parent rows is a cycle"
            elif (upstream := gap(j, (*seen, i))) is not None:
                why = f"its parent row {parent}: {upstream}"
        gaps[i] = why
        return why

    def demand_gap(i: int, j: int) -> str | None:
        """What row ``i`` asks of its parent ``j`` beyond its correctness (promotion order)."""
        parent_row = matrix.rows[j]
        demand = parent_must_pass(matrix.rows[i].key.as_dict(), parent_row.key.as_dict(),
                                  parent_row.spec.requires)  # fmt: skip
        if demand is None:
            return None
        for required in demand.gates:
            why = correctness_gap(required, evidence_of(j), gates, target)
            if why is not None:
                return f"{why} ({demand.why})"
        return None

    found: list[ParentEvidence | None] = []
    for i in range(len(matrix.rows)):
        parent = parent_of(i)
        if parent is None:
            found.append(None)
            continue
        j = position.get(parent)
        why = "not a row of this matrix" if j is None else gap(j, (i,))
        if why is None and j is not None:
            why = demand_gap(i, j)
        found.append(ParentEvidence(parent, why))
    return found
