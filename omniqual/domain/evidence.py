"""Evidence a gate result carries: artifacts by content hash, measurements with units, cases."""

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from omniqual.domain.outcomes import GateOutcome

_SHA256 = r"^[0-9a-f]{64}$"


class Artifact(BaseModel):
    """A file in a run's content-addressed store (``artifacts/<sha256>``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=_SHA256)
    size: int = Field(ge=0)
    media_type: str
    role: str = Field(description="What it is for, e.g. output-image, server-log, raw-series.")
    name: str = Field(description="A human-readable name; never a prompt.")


class Measurement(BaseModel):
    """One number with its unit and, where it is a statistic, the samples behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    value: float
    unit: str
    samples: int | None = Field(default=None, ge=0)
    bound: float | None = Field(default=None, description="The threshold it was held to.")
    ok: bool | None = Field(default=None, description="Whether it met the bound, if any.")


class CaseResult(BaseModel):
    """One generated case of a case-based gate (the API contract, aborts, fail-fast launches)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    endpoint: str
    field: str | None = None
    sent: str | None = Field(default=None, description="A short, redacted rendering of the value.")
    expected_status: str
    observed_status: str
    outcome: GateOutcome
    deviation: bool = Field(
        default=False, description="A declared, known deviation of this release from the contract."
    )
    note: str = ""


class ErrorInfo(BaseModel):
    """A harness fault, kept as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    message: str
    traceback: str | None = None


Parameters = dict[str, JsonValue]
