"""The ``params`` of the ``parity`` gate (a candidate deployment against its reference one):
the request set, the baseline the reference row keeps, per fast path the evidence that it is
active (or why the release offers none), the serve flags it owns and the tolerance it is held
to, and the latency repetitions."""

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from omniqual.checks.base import CheckParams
from omniqual.checks.parity.requests import ParityRequests
from omniqual.compare.tolerance import ParityTolerance

MIN_REPETITIONS = 3
"""A median and a range mean something from three timed repetitions on; fewer is invalid."""

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class LogEvidence(BaseModel):
    """A startup-log line proving the path active. A named group ``count`` is summed over the
    matching lines; without one every matching line counts 1."""

    model_config = _FROZEN

    pattern: str = Field(min_length=1)
    min_count: int = Field(default=1, ge=1, description="Active at this total count or more.")
    says: str = Field(min_length=1, description="What the count is, in words (for reasons).")
    shows: Literal["activity", "enablement"] = Field(
        default="activity",
        description="activity: the path changed the computation (e.g. layers quantized, "
        "offload hooks installed); enablement: it was only switched on, which never shows a "
        "path at work.",
    )
    aggregate: Literal["sum", "max"] = Field(
        default="sum",
        description="How ``count`` combines over matching lines: sum (layers per component) "
        "or max (one line per admission wave: a wave of two or more shows a batch).",
    )
    always_logged: bool = Field(
        default=False,
        description="The release logs this line at INFO whenever the path is switched on, so a "
        "whole launch log without it shows the path off (inactive), not merely unproven.",
    )

    @field_validator("pattern")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return pattern


class MetricEvidence(BaseModel):
    """A ``/metrics`` series (summed over its label sets) proving the path active."""

    model_config = _FROZEN

    series: str = Field(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
    min_value: float = Field(default=1.0, description="Active at this value or more.")


class QuantCensus(BaseModel):
    """Which linears a quantization reaches: the module census of the candidate's pipeline, built
    (on the meta device, no weights) with the candidate's own quantization flags, lists every
    vLLM linear with the class of the quant method attached to it. The path is active only when
    at least ``min_quantized`` linears carry a matching method: outputs that differ prove
    nothing about which layers were quantized (F8-01)."""

    model_config = _FROZEN

    quant_method: str = Field(
        min_length=1, description="Regex over a linear's quant-method class, e.g. '(?i)fp8'."
    )
    min_quantized: int = Field(default=1, ge=1)

    @field_validator("quant_method")
    @classmethod
    def _regex(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return pattern


class FastPath(BaseModel):
    """One feature (an axis value the candidate row has and the baseline has not)."""

    model_config = _FROZEN

    feature: str = Field(pattern=r"^[a-z_]+=\S+$", description="axis=value, e.g. dtype=fp32.")
    lossy: bool = Field(description="Outputs may differ; identical outputs need other proof.")
    tolerance: str = Field(description="A key of ``tolerances``.")
    log: tuple[LogEvidence, ...] = ()
    metrics: tuple[MetricEvidence, ...] = ()
    census: QuantCensus | None = Field(
        default=None,
        description="A quantization: the module census must show the linears it reached; "
        "required for activity, never enough alone (outputs must still show it computed).",
    )
    request: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Fields set on every case, both sides (e.g. enough steps for a step cache "
        "to engage past its warm-up); the work stays the same on both sides.",
    )
    concurrent: int = Field(
        default=1, ge=1, description="Cases in flight at once on the candidate (batching rows)."
    )
    output_differs: bool = Field(
        default=False,
        description="A lossless path that still changes the bytes (another dtype): its outputs "
        "must differ from the reference's by more than the reference's own spread. Lossy paths "
        "are held to this as a signal without setting it.",
    )
    shared_execution: bool = Field(
        default=False,
        description="A batching path: cases sent together must finish together (one "
        "execution), not one execution apart; measured on the concurrent groups.",
    )
    unprovable: str | None = Field(
        default=None,
        min_length=1,
        description="Why the release offers no way to prove the path active. With it, a run "
        "where no declared signal reads either way passes at most as a limitation of the row.",
    )
    flags: tuple[str, ...] = Field(
        default=(),
        description="The serve flags (long names, no dashes) this feature owns: the candidate's "
        "serve configuration may differ from the reference's in these only.",
    )

    @model_validator(mode="after")
    def _some_proof(self) -> "FastPath":
        proofs = self.log or self.metrics or self.lossy or self.output_differs
        if not (proofs or self.shared_execution or self.unprovable):
            raise ValueError(
                f"fast path {self.feature!r} declares no proof of activity (log, metrics, "
                "output_differs, shared_execution) and no reason it is unprovable"
            )
        return self

    @property
    def proven_by_output(self) -> bool:
        return self.lossy or self.output_differs

    @property
    def axis(self) -> str:
        return self.feature.split("=", 1)[0]

    @property
    def value(self) -> str:
        return self.feature.split("=", 1)[1]


class LatencyParams(BaseModel):
    model_config = _FROZEN

    warmup: int = Field(default=1, ge=0, description="Untimed requests before the timed ones.")
    repetitions: int = Field(
        default=MIN_REPETITIONS,
        ge=1,
        description=f"Timed repetitions of one fixed case; fewer than {MIN_REPETITIONS} "
        "successful ones make the gate invalid.",
    )


class CandidateParityParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    requests: ParityRequests
    baseline: dict[str, str] = Field(
        min_length=1, description="Axis values of the reference row (the rest is the row's)."
    )
    fast_paths: tuple[FastPath, ...] = Field(min_length=1)
    tolerances: dict[str, ParityTolerance] = Field(min_length=1)
    latency: LatencyParams = Field(default_factory=LatencyParams)
    request_timeout_s: float = Field(default=120.0, gt=0)
    job_timeout_s: float = Field(default=300.0, gt=0)
    poll_interval_s: float = Field(default=0.25, gt=0)
    observer_interval_s: float = Field(default=0.25, gt=0)
    census_python: str | None = Field(
        default=None, description="Interpreter of the serving environment for the census."
    )
    census_timeout_s: float = Field(default=600.0, gt=0)
    thumbnail_side: int = Field(default=96, ge=16, le=512)
    difference_gain: float = Field(default=8.0, gt=0, description="Amplification of |c - r|.")

    @model_validator(mode="after")
    def _consistent(self) -> "CandidateParityParams":
        problems = [
            f"fast path {p.feature!r} names tolerance {p.tolerance!r}, which is not declared"
            for p in self.fast_paths
            if p.tolerance not in self.tolerances
        ]
        problems += [
            f"fast path {p.feature!r} is a value of axis {p.axis!r}, which the baseline does "
            "not fix"
            for p in self.fast_paths
            if p.axis not in self.baseline
        ]
        features = [p.feature for p in self.fast_paths]
        problems += [f"fast path {f!r} declared twice" for f in set(features)
                     if features.count(f) > 1]  # fmt: skip
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def fast_path(self, feature: str) -> FastPath | None:
        return next((p for p in self.fast_paths if p.feature == feature), None)
