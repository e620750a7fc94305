"""Load matrix definitions: expand explicit rows and products into exact row keys, and report
every problem (unknown axis or value, unknown gate, contradictions, a row short of the
Definition of Done, a candidate without a parent one axis away, or a combination against its
default posture) with its file and line."""

import itertools
from collections.abc import Mapping
from pathlib import Path

from omniqual.domain.axes import AxisCatalog, Selector
from omniqual.domain.matrix import (
    ExplicitRow,
    LoadedMatrix,
    MatrixDefinition,
    PlannedRow,
    ProductRows,
    RowSpec,
)
from omniqual.domain.outcomes import CellState
from omniqual.specs.definition_of_done import parent_problems
from omniqual.specs.postures import combination_problems
from omniqual.specs.promotion import promotion_problems
from omniqual.specs.source import (
    Loc,
    SpecError,
    SpecProblem,
    YamlDocument,
    load_yaml,
    located_where_named,
    validate_document,
)


def load_catalog(path: Path) -> AxisCatalog:
    return validate_document(load_yaml(path), AxisCatalog)


def load_matrix(path: Path, gate_ids: Mapping[str, object] | None = None) -> LoadedMatrix:
    """Load and expand ``path``; ``gate_ids`` (when given) is the set of known gates."""
    doc = load_yaml(path)
    definition = validate_document(doc, MatrixDefinition)
    try:
        catalog = load_catalog(path.parent / definition.axes_file)
    except SpecError as exc:
        raise located_where_named(doc, ("axes_file",), exc) from None
    problems: list[SpecProblem] = []
    rows: dict[str, PlannedRow] = {}
    specs: list[tuple[Loc, RowSpec]] = []
    for i, row in enumerate(definition.rows):
        loc: Loc = ("rows", i)
        specs.append((loc, row))
        _check_row_spec(doc, loc, row, gate_ids, problems)
        _add(doc, (*loc, "key"), {**definition.defaults, **row.key}, row, catalog, rows, problems)
    for i, product in enumerate(definition.products):
        loc = ("products", i)
        specs.append((loc, product))
        _check_row_spec(doc, loc, product, gate_ids, problems)
        for values in _expand(doc, loc, product, catalog, problems):
            merged = {**definition.defaults, **product.base, **values}
            _add(doc, (*loc, "axes"), merged, product, catalog, rows, problems)
    problems += _inapplicable_gates(doc, rows, gate_ids)
    problems += parent_problems(doc, definition, catalog, specs, rows, gate_ids)
    problems += combination_problems(doc, definition, specs, rows, gate_ids)
    problems += promotion_problems(doc, definition, catalog, specs, rows)
    if problems:
        raise SpecError(problems)
    return LoadedMatrix(definition, catalog, tuple(rows.values()), path)


def _check_row_spec(
    doc: YamlDocument,
    loc: Loc,
    spec: RowSpec,
    gate_ids: Mapping[str, object] | None,
    problems: list[SpecProblem],
) -> None:
    named: list[tuple[Loc, str]] = [((*loc, "requires", j), g) for j, g in enumerate(spec.requires)]
    named += [((*loc, "unsupported_by", j), g) for j, g in enumerate(spec.unsupported_by)]
    if spec.limited is not None:
        base = (*loc, "limited")
        named += [((*base, "requires", j), g) for j, g in enumerate(spec.limited.requires)]
        named += [((*base, "rejection", j), g) for j, g in enumerate(spec.limited.rejection)]
    if gate_ids is not None:
        for where, gate in named:
            if gate not in gate_ids:
                known = ", ".join(sorted(gate_ids)) or "none"
                problems.append(doc.problem(where, f"unknown gate {gate!r} (known: {known})"))
            elif not getattr(getattr(gate_ids[gate], "spec", None), "decides_rows", True):
                problems.append(doc.problem(where, f"gate {gate!r} decides no row's state (a "
                                                   "comparison run on request): no row lists it"))
    overlap = set(spec.requires) & set(spec.unsupported_by)
    if overlap:
        problems.append(
            doc.problem(
                (*loc, "unsupported_by"),
                f"gates {sorted(overlap)} cannot both be required to pass and prove rejection",
            )
        )
    if spec.declared in (CellState.LIMITED,) and spec.limited is None:
        problems.append(doc.problem((*loc, "declared"), "declared limited without a limited block"))
    if spec.declared is CellState.UNSUPPORTED and not spec.unsupported_by:
        problems.append(
            doc.problem((*loc, "declared"), "declared unsupported without an unsupported_by gate")
        )


def _expand(
    doc: YamlDocument,
    loc: Loc,
    product: ProductRows,
    catalog: AxisCatalog,
    problems: list[SpecProblem],
) -> list[dict[str, str]]:
    clash = set(product.base) & set(product.axes)
    if clash:
        problems.append(doc.problem((*loc, "base"), f"axes {sorted(clash)} also varied in axes"))
    for j, rule in enumerate(product.exclude):
        for axis in rule:
            if catalog.axis(axis) is None:
                problems.append(doc.problem((*loc, "exclude", j, axis), f"unknown axis {axis!r}"))
    names = list(product.axes)
    combos = []
    for values in itertools.product(*(product.axes[n] for n in names)):
        combo = dict(zip(names, values, strict=True))
        if any(all(combo.get(a) == v for a, v in rule.items()) for rule in product.exclude):
            continue
        combos.append(combo)
    return combos


def _add(
    doc: YamlDocument,
    loc: Loc,
    values: dict[str, str],
    spec: ExplicitRow | ProductRows,
    catalog: AxisCatalog,
    rows: dict[str, PlannedRow],
    problems: list[SpecProblem],
) -> None:
    found = catalog.problems(values)
    if found:
        for axis, message in found:
            where = (*loc, axis) if axis in values else loc
            problems.append(doc.problem(where, message))
        return
    key = catalog.row_key(values)
    text = str(key)
    if text in rows:
        first = rows[text].line
        problems.append(doc.problem(loc, f"row {text} is already defined (line {first})"))
        return
    rows[text] = PlannedRow(key, spec, doc.line_of(loc))


def _inapplicable_gates(
    doc: YamlDocument, rows: Mapping[str, PlannedRow], gate_ids: Mapping[str, object] | None
) -> list[SpecProblem]:
    """A row listing a gate whose ``applies_to`` excludes it: that gate would never run on the
    row, and the row could never leave `not tested` (or be proven refused)."""
    found: list[SpecProblem] = []
    for row in rows.values():
        spec = row.spec
        listed = [*spec.requires, *spec.unsupported_by]
        if spec.limited is not None:
            listed += [*spec.limited.requires, *spec.limited.rejection]
        for gate in dict.fromkeys(listed):
            selector = getattr((gate_ids or {}).get(gate), "selector", None)
            if isinstance(selector, Selector) and not selector.matches(row.key):
                found.append(SpecProblem(
                    str(doc.path), row.line, "requires",
                    f"row {row.key} lists gate {gate!r}, whose applies_to ({selector}) "
                    "excludes it: the gate would never run on this row"))  # fmt: skip
    return found

