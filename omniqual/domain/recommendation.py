"""What ``omniqual recommend`` selects (``omniqual.compile.recommend``), as plain records: the
objective, the winning row with its compiled state (and limitation, when `limited`), the figure
and the evidence that made it eligible, the most memory-constrained eligible row, and every row
that is not eligible with why. The report draws them (``omniqual.report.recommendation_view``);
the selection itself lives in ``compile``.
"""

from dataclasses import dataclass
from enum import StrEnum

from omniqual.domain.outcomes import CellState


class Objective(StrEnum):
    LATENCY = "latency"
    THROUGHPUT = "throughput"
    MEMORY = "memory"


@dataclass(frozen=True, slots=True)
class Figure:
    value: float
    unit: str
    source: str
    """``gate:measurement`` it was read from."""
    result_id: str
    link: str


@dataclass(frozen=True, slots=True)
class Candidate:
    row: str
    recipe: str | None
    figure: Figure
    evidence: tuple[str, ...]
    """result ids (or links) of the results its compiled state rests on (one deployment), and
    of the figure's result when that is another result of the same deployment."""
    state: CellState
    """`validated` or `limited`: no other state is ever recommended."""
    limitation: str | None = None
    """What bounds a `limited` row; said wherever the row is recommended."""


@dataclass(frozen=True, slots=True)
class NotEligible:
    row: str
    recipe: str | None
    why: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The view a report or the CLI shows."""

    objective: Objective
    best: Candidate | None
    ranked: tuple[Candidate, ...]
    memory_constrained: Candidate | None
    not_eligible: tuple[NotEligible, ...]
