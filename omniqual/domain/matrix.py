"""Matrix definitions (what to qualify) and compiled matrices (what the evidence says)."""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from omniqual.domain.axes import AxisCatalog, RowKey
from omniqual.domain.definition_of_done import correctness_gate, differing_axes, kind_of
from omniqual.domain.outcomes import CellState
from omniqual.domain.provenance import Provenance

MATRIX_SCHEMA_VERSION = 1


class LimitedSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    limitation: str = Field(min_length=1, description="The bound, in words a user can act on.")
    requires: tuple[str, ...] = Field(min_length=1, description="Gates the bounded subset passes.")
    rejection: tuple[str, ...] = Field(
        min_length=1, description="Gates proving out-of-bound input is rejected or falls back."
    )


class RestartPolicy(StrEnum):
    """What a row's deployment does after a fault inside a request (the fault-injection gate
    holds it to this): stay up and serve the next request as before, or end its process tree
    so an outer supervisor restarts it (never a transparent recovery)."""

    RECOVERS = "recovers"
    EXITS = "exits"


class RowSpec(BaseModel):
    """Requirements shared by explicit rows and products."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requires: tuple[str, ...] = ()
    limited: LimitedSpec | None = None
    unsupported_by: tuple[str, ...] = ()
    declared: CellState | None = Field(
        default=None, description="A claimed state; `matrix validate` checks it against evidence."
    )
    recipe: str | None = Field(default=None, description="Launch recipe that realizes this row.")
    restart_policy: RestartPolicy = Field(
        default=RestartPolicy.RECOVERS,
        description="After an injected fault: `recovers` (serves on, no state leaked) or `exits` "
        "(the process tree ends cleanly: restart required).",
    )
    parent_row: dict[str, str] | None = Field(
        default=None,
        description="A candidate row's parent: the key of the row it is one axis away from "
        "(axes left out take the matrix defaults). None: a baseline row.",
    )
    note: str = ""


class ExplicitRow(RowSpec):
    key: dict[str, str]


class ProductRows(RowSpec):
    """Every combination of ``axes`` values over ``base``, minus ``exclude``."""

    base: dict[str, str] = Field(default_factory=dict)
    axes: dict[str, tuple[str, ...]]
    exclude: tuple[dict[str, str], ...] = ()


class MatrixDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = MATRIX_SCHEMA_VERSION
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    title: str = ""
    description: str = ""
    axes_file: str = Field(default="axes.yaml", description="Relative to this file.")
    target: Provenance = Field(
        default_factory=Provenance, description="Pinned revisions; other evidence is stale."
    )
    defaults: dict[str, str] = Field(default_factory=dict)
    rows: tuple[ExplicitRow, ...] = ()
    products: tuple[ProductRows, ...] = ()

    def parent_values(self, spec: RowSpec) -> dict[str, str] | None:
        """The axis values of ``spec``'s parent row (its ``parent_row`` over the defaults), or
        None for a baseline row."""
        if spec.parent_row is None:
            return None
        return {**self.defaults, **spec.parent_row}


@dataclass(frozen=True, slots=True)
class PlannedRow:
    """One row of a loaded matrix: its exact key, the spec it came from and that spec's line."""

    key: RowKey
    spec: RowSpec
    line: int | None


@dataclass(frozen=True, slots=True)
class LoadedMatrix:
    """A matrix definition expanded into its rows (``omniqual.specs.matrix.load_matrix``)."""

    definition: MatrixDefinition
    catalog: AxisCatalog
    rows: tuple[PlannedRow, ...]
    path: Path

    def parent_of(self, row: PlannedRow) -> RowKey | None:
        """The key of ``row``'s parent row (None: a baseline row). Raises ValueError when the
        parent names no complete, known key (the loader reports that as a spec error)."""
        values = self.definition.parent_values(row.spec)
        return None if values is None else self.catalog.row_key(values)

    def candidate_axes(self, row: PlannedRow) -> tuple[str, ...]:
        """The axes ``row`` differs from its parent on (empty for a baseline row, or where the
        parent names no known key: the loader reports that)."""
        try:
            parent = self.parent_of(row)
        except ValueError:
            return ()
        return () if parent is None else differing_axes(row.key.all_values(), parent.all_values())

    def correctness_gate(self, row: PlannedRow) -> str:
        """The gate that proves ``row`` right (``definition_of_done.correctness_gate``)."""
        return correctness_gate(kind_of(row.spec.parent_row), self.candidate_axes(row))


class EvidenceRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    result_id: str
    gate_id: str
    outcome: str
    artifacts: tuple[str, ...] = Field(default=(), description="sha256 of each artifact.")
    link: str = Field(description="Path to the result, relative to the compiled matrix.")


class CompiledRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    axes: dict[str, str]
    state: CellState
    reasons: tuple[str, ...]
    required_gates: tuple[str, ...]
    limitation: str | None = None
    evidence: tuple[EvidenceRef, ...] = ()
    gate_outcomes: dict[str, str] = Field(
        default_factory=dict, description="Latest outcome per gate on this row, for display."
    )
    declared: CellState | None = None
    note: str = ""
    stale: int = Field(
        default=0,
        description="Results on this row ignored as stale (gate spec, contract, mapping or "
        "pinned revision changed since): evidence to re-measure.",
    )


class CompiledMatrix(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = MATRIX_SCHEMA_VERSION
    name: str
    title: str
    axes: tuple[str, ...]
    compiled_at: datetime
    evidence_dirs: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    rows: tuple[CompiledRow, ...]

    def counts(self) -> dict[CellState, int]:
        counts = {state: 0 for state in CellState}
        for row in self.rows:
            counts[row.state] += 1
        return counts
