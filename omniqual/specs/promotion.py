"""Hold each row of a matrix definition to the promotion order of
:mod:`omniqual.domain.promotion` (where FP8 and an attention backend may enter a chain of parent
rows; no wildcard in a key) and to the claims :mod:`omniqual.domain.claims` keeps apart
(producer, transport, streaming), every problem at its file and line beside the loader's other
spec errors."""

from collections.abc import Mapping, Sequence

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.claims import claim_problems, lane_problems, readiness_problems
from omniqual.domain.matrix import ExplicitRow, MatrixDefinition, PlannedRow, RowSpec
from omniqual.domain.promotion import entry_problems
from omniqual.specs.source import Loc, SpecProblem, YamlDocument


def promotion_problems(
    doc: YamlDocument,
    definition: MatrixDefinition,
    catalog: AxisCatalog,
    specs: Sequence[tuple[Loc, RowSpec]],
    rows: Mapping[str, PlannedRow],
) -> list[SpecProblem]:
    where_of = {id(spec): loc for loc, spec in specs}
    found: list[SpecProblem] = []
    for text, row in rows.items():
        loc = where_of[id(row.spec)]
        parent = definition.parent_values(row.spec)
        baseline = True  # a parent nowhere in the matrix is parent_problems' to report
        if parent is not None and not catalog.problems(parent):
            held = rows.get(str(catalog.row_key(parent)))
            baseline = held is None or held.spec.parent_row is None
        values = row.key.as_dict()
        texts = {"note": row.spec.note}
        if row.spec.limited is not None:
            texts["limited.limitation"] = row.spec.limited.limitation
        found_here = [*entry_problems(values, parent, baseline), *claim_problems(values),
                      *lane_problems(values, parent, texts),
                      *readiness_problems(texts)]  # fmt: skip
        for field, message in found_here:
            at: Loc = (*loc, *_field_loc(row.spec, field))
            found.append(doc.problem(at, f"row {text}: {message}"))
    return found


def _field_loc(spec: RowSpec, field: str) -> tuple[str, ...]:
    """``key.<axis>``: where the spec states that value (an explicit row's key; a product's
    line otherwise, its values being spread over base, axes and the defaults)."""
    head, _, axis = field.partition(".")
    if head != "key":
        return tuple(field.split("."))
    if isinstance(spec, ExplicitRow):
        return ("key", axis) if axis else ("key",)
    return ()
