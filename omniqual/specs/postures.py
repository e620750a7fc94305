"""Hold each row of a matrix definition to the default posture of the feature combination it
makes (``omniqual.domain.postures``), every problem at its file and line beside the loader's
other spec errors."""

from collections.abc import Mapping, Sequence

from omniqual.domain.matrix import MatrixDefinition, PlannedRow, RowSpec
from omniqual.domain.postures import posture_problems
from omniqual.specs.source import Loc, SpecProblem, YamlDocument


def combination_problems(
    doc: YamlDocument,
    definition: MatrixDefinition,
    specs: Sequence[tuple[Loc, RowSpec]],
    rows: Mapping[str, PlannedRow],
    gate_ids: Mapping[str, object] | None,
) -> list[SpecProblem]:
    where_of = {id(spec): loc for loc, spec in specs}
    known = None if gate_ids is None else tuple(gate_ids)
    found: list[SpecProblem] = []
    for text, row in rows.items():
        loc = where_of[id(row.spec)]
        parent = definition.parent_values(row.spec)
        for field, message in posture_problems(row.key.as_dict(), row.spec, parent, known):
            at: Loc = (*loc, *field.split("."))
            found.append(doc.problem(at, f"row {text}: {message}"))
    return found
