"""Hold a matrix definition to the Definition of Done (``omniqual.domain.definition_of_done``):
every row that claims anything lists its kind's minimum gates, and every candidate row names a
parent row of the same matrix, exactly one axis away, in no cycle. Each problem is reported at
its file and line, beside the loader's other spec errors."""

from collections.abc import Mapping, Sequence

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.definition_of_done import (
    RowKind,
    differing_axes,
    held_to_floor,
    kind_of,
    minimum_gates,
    missing_gates,
)
from omniqual.domain.matrix import MatrixDefinition, PlannedRow, RowSpec
from omniqual.specs.source import Loc, SpecProblem, YamlDocument


def floor_problems(
    doc: YamlDocument,
    loc: Loc,
    spec: RowSpec,
    gate_ids: Mapping[str, object] | None,
    axes: Sequence[str] = (),
) -> list[SpecProblem]:
    """The row's ``requires`` (and ``limited.requires``) that lack its kind's minimum gates; a
    candidate's floor is the correctness gate of the ``axes`` its rows differ from the parent."""
    if not held_to_floor(spec.requires, spec.limited is not None):
        return []
    kind = kind_of(spec.parent_row)
    # A project's registry is the set of gates it can run: the floor asks for every one of its
    # gates that the project defines (the shipped project defines them all). Asking a project
    # for a gate it has no spec of would only add an unknown-gate error to each row; a project
    # without any of them (a test fixture of toy gates) qualifies nothing against this DoD.
    floor = tuple(g for g in minimum_gates(kind, axes) if gate_ids is None or g in gate_ids)
    what = (
        "a baseline row (no parent_row) is an advertised task"
        if kind is RowKind.BASELINE
        else "a candidate row proves its correctness against its parent_row"
    )
    found: list[SpecProblem] = []
    # A limitation bounds the inputs a row serves, never the gates it passes: the bounded
    # subset is held to the same floor, or `limited` would be a way around the DoD.
    lists = [((*loc, "requires"), spec.requires)]
    if spec.limited is not None:
        lists.append(((*loc, "limited", "requires"), spec.limited.requires))
    for where, listed in lists:
        missing = missing_gates(listed, floor)
        if missing:
            found.append(
                doc.problem(
                    where,
                    f"{what}: the Definition of Done requires {', '.join(floor)}; missing "
                    f"{', '.join(missing)} (a matrix cannot shorten it; `limited` declares a "
                    "bound on inputs, not fewer gates)",
                )
            )
    return found


def parent_problems(
    doc: YamlDocument,
    definition: MatrixDefinition,
    catalog: AxisCatalog,
    specs: Sequence[tuple[Loc, RowSpec]],
    rows: Mapping[str, PlannedRow],
    gate_ids: Mapping[str, object] | None,
) -> list[SpecProblem]:
    """Every spec's floor (a candidate's by the axis it differs on) and every candidate spec's
    parent: a known key, a row of this matrix, one axis from each of the spec's rows, and no
    chain of parents that comes back to where it began."""
    by_spec: dict[int, list[PlannedRow]] = {}
    for row in rows.values():
        by_spec.setdefault(id(row.spec), []).append(row)
    found: list[SpecProblem] = []
    parent_of: dict[str, tuple[str, Loc]] = {}
    for loc, spec in specs:
        values = definition.parent_values(spec)
        if values is None or spec.parent_row is None:
            found += floor_problems(doc, loc, spec, gate_ids)
            continue
        where = (*loc, "parent_row")
        unknown = catalog.problems(values)
        if unknown:
            for axis, message in unknown:
                at = (*where, axis) if axis in spec.parent_row else where
                found.append(doc.problem(at, f"parent row: {message}"))
            found += floor_problems(doc, loc, spec, gate_ids)
            continue
        parent = catalog.row_key(values)
        text = str(parent)
        axes: set[str] = set()
        for row in by_spec.get(id(spec), []):
            differing = differing_axes(row.key.all_values(), parent.all_values())
            axes.update(differing)
        # Every row of one spec differs on the same axis where the matrix is valid; where it is
        # not, the floor falls back to parity and the mismatch is reported below.
        found += floor_problems(doc, loc, spec, gate_ids, tuple(sorted(axes)))
        if text not in rows:
            found.append(doc.problem(where, f"parent row {text} is not a row of this matrix"))
            continue
        for row in by_spec.get(id(spec), []):
            differing = differing_axes(row.key.all_values(), parent.all_values())
            if len(differing) != 1:
                found.append(
                    doc.problem(
                        where,
                        f"row {row.key} differs from its parent row on {len(differing)} axes "
                        f"({', '.join(differing) or 'none'}): a candidate is exactly one axis "
                        "away from its parent",
                    )
                )
            parent_of[str(row.key)] = (text, where)
    return found + _cycles(doc, parent_of)


def _cycles(doc: YamlDocument, parent_of: Mapping[str, tuple[str, Loc]]) -> list[SpecProblem]:
    """One problem per cycle of parents (each candidate counts only beside its parent's
    correctness, so a cycle would have no evidence to start from)."""
    found: list[SpecProblem] = []
    reported: set[frozenset[str]] = set()
    for start in parent_of:
        path: list[str] = []
        at = start
        while at in parent_of and at not in path:
            path.append(at)
            at = parent_of[at][0]
        if at not in path:
            continue
        cycle = path[path.index(at) :]
        if frozenset(cycle) in reported:
            continue
        reported.add(frozenset(cycle))
        first = min(cycle)
        found.append(
            doc.problem(
                parent_of[first][1],
                f"parent rows form a cycle ({' -> '.join([*cycle, cycle[0]])}): a candidate's "
                "chain of parents must end at a baseline row",
            )
        )
    return found
