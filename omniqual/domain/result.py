"""GateResult: the immutable record of one gate run against one row."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from omniqual.domain.evidence import Artifact, CaseResult, ErrorInfo, Measurement, Parameters
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance

RESULT_SCHEMA_VERSION = 1


class GateResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = RESULT_SCHEMA_VERSION
    result_id: str
    run_id: str
    gate_id: str
    gate_version: int
    gate_kind: str
    gate_spec_sha256: str | None = None
    row: str = Field(description="The exact row key, canonical string form.")
    outcome: GateOutcome
    reasons: tuple[str, ...] = ()
    limitations: tuple[str, ...] = Field(
        default=(),
        description="Declared deviations this run reproduced: the row is at best `limited`.",
    )
    startup_only: bool = Field(
        default=False, description="Only showed the target starts; never promotes a row."
    )
    target: str = Field(description="URL or launch-recipe id the gate ran against.")
    command: tuple[str, ...] = Field(default=(), description="Exact command, secrets redacted.")
    requested: Parameters = Field(default_factory=dict)
    effective: Parameters = Field(default_factory=dict)
    measurements: tuple[Measurement, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    cases: tuple[CaseResult, ...] = ()
    provenance: Provenance = Field(default_factory=Provenance)
    error: ErrorInfo | None = None
    started_at: datetime
    finished_at: datetime

    @property
    def duration_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()
