"""Load ``matrices/vllm-omni-features.yaml``: which axis values realize each column of
vLLM-Omni's diffusion feature tables, which tasks make each modality section, and which matrix
model each document model name stands for. Every problem is reported with its file, line and
field, axes and values checked against the project's axis catalog."""

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.feature_tables import (
    FeatureColumn,
    FeatureTableMap,
    ModalitySection,
    label_key,
)
from omniqual.specs.matrix import load_catalog
from omniqual.specs.source import (
    Loc,
    SpecError,
    SpecProblem,
    YamlDocument,
    load_spec,
    located_where_named,
)

FEATURES_FILE = "vllm-omni-features.yaml"


class ColumnSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, description="The column heading, as the document writes it.")
    axis: str | None = Field(default=None, description="None: no axis measures this feature.")
    values: tuple[str, ...] = ()
    gate: str | None = Field(
        default=None, pattern=r"^[a-z][a-z0-9-]*$",
        description="A feature a gate qualifies on a row's own server (per-request LoRA): the "
        "rows that require this gate use it. Instead of an axis, never beside one.",
    )
    aliases: tuple[str, ...] = Field(default=(), description="Other headings for the same column.")


class SectionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    tasks: tuple[str, ...] = Field(min_length=1)


class FeatureTablesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    axes_file: str = Field(default="axes.yaml", description="Relative to this file.")
    sections: tuple[SectionSpec, ...] = Field(min_length=1)
    columns: tuple[ColumnSpec, ...] = Field(min_length=1)
    compatibility: tuple[ColumnSpec, ...] = ()
    models: dict[str, str] = Field(default_factory=dict, description="document name: model")


def _column_problems(
    doc: YamlDocument, where: str, columns: tuple[ColumnSpec, ...], catalog: AxisCatalog
) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    seen: dict[str, int] = {}
    for i, column in enumerate(columns):
        loc: Loc = (where, i)
        for name in (column.label, *column.aliases):
            key = label_key(name)
            if not key:
                problems.append(doc.problem((*loc, "label"), f"{name!r} has no letters or digits"))
            elif key in seen and seen[key] != i:
                problems.append(doc.problem((*loc, "label"), f"{name!r} names {where}[{seen[key]}]"
                                            " too"))  # fmt: skip
            seen.setdefault(key, i)
        if column.gate is not None and column.axis is not None:
            problems.append(doc.problem((*loc, "gate"), "a column is realized by an axis or by "
                                        "a gate, not both"))  # fmt: skip
        if column.axis is None:
            if column.values:
                problems.append(doc.problem((*loc, "values"), "values need an axis"))
            continue
        axis = catalog.axis(column.axis)
        if axis is None:
            known = ", ".join(catalog.names())
            problems.append(doc.problem((*loc, "axis"), f"unknown axis {column.axis!r} ({known})"))
            continue
        if not column.values:
            problems.append(doc.problem((*loc, "values"), f"name the {axis.name} values"))
        for j, value in enumerate(column.values):
            if not axis.known(value):
                known = ", ".join(v.name for v in axis.values)
                problems.append(doc.problem((*loc, "values", j),
                                            f"unknown value {value!r} for axis {axis.name!r} "
                                            f"({known})"))  # fmt: skip
    return problems


def _section_problems(doc: YamlDocument, spec: FeatureTablesFile) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    owner: dict[str, str] = {}
    for i, section in enumerate(spec.sections):
        for j, task in enumerate(section.tasks):
            if task in owner:
                problems.append(doc.problem(("sections", i, "tasks", j),
                                            f"task {task!r} is in section {owner[task]!r} "
                                            "already"))  # fmt: skip
            owner.setdefault(task, section.name)
    return problems


def load_feature_tables(path: Path) -> FeatureTableMap:
    spec, doc = load_spec(path, FeatureTablesFile)
    try:
        catalog = load_catalog(path.parent / spec.axes_file)
    except SpecError as exc:
        raise located_where_named(doc, ("axes_file",), exc) from None
    problems = _section_problems(doc, spec)
    problems += _column_problems(doc, "columns", spec.columns, catalog)
    problems += _column_problems(doc, "compatibility", spec.compatibility, catalog)
    for name, model in spec.models.items():
        if not model.strip():
            problems.append(doc.problem(("models", name), "maps to no model"))
    if problems:
        raise SpecError(problems)

    def columns(specs: tuple[ColumnSpec, ...]) -> tuple[FeatureColumn, ...]:
        return tuple(FeatureColumn(c.label, c.axis, c.values, c.aliases, c.gate) for c in specs)

    return FeatureTableMap(
        sections=tuple(ModalitySection(s.name, s.tasks) for s in spec.sections),
        columns=columns(spec.columns),
        pairs=columns(spec.compatibility),
        models=tuple(spec.models.items()),
        source=str(path),
    )
