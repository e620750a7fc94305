"""The isolation gate's ``params`` block: the heterogeneous request set (each request a variant
of the row's contract probe), how often and in which orders and arrival patterns they are sent
together, and the tolerance a together output is held to where the row's solo output is not
reproducible bit for bit."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.checks.base import CheckParams
from omniqual.compare.tolerance import ParityTolerance

Pattern = Literal["burst", "staggered", "mixed"]
"""burst: all sent at once; staggered: each sent a fraction of the solo service time after the
one before, so they meet mid-denoise; mixed (rows whose contract also serves the other video
transport): every other request goes through the sync/async twin of the row's endpoint."""

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class RequestVariant(BaseModel):
    """One request of the set, as knobs on the row's probe. A knob the row's contract does not
    list (or whose value it does not accept) is left at the probe's value and recorded."""

    model_config = _FROZEN

    label: str = Field(pattern=r"^[A-Z][A-Za-z0-9]{0,7}$")
    seed: int | None = None
    prompt: int | None = Field(default=None, ge=0, description="Index into ``prompts``.")
    size: str | None = Field(default=None, pattern=r"^\d+x\d+$")
    steps: int | None = Field(default=None, ge=1)
    guidance: float | None = Field(default=None, ge=0)
    true_cfg: float | None = Field(default=None, ge=0, description="True CFG scale (Qwen).")
    n: int | None = Field(default=None, ge=1, description="Outputs per request (count field).")
    output_format: str | None = None
    frames: int | None = Field(default=None, ge=1)
    length_s: float | None = Field(default=None, gt=0, description="Audio length.")
    input_image: int | None = Field(
        default=None, ge=0, description="Edit rows: which synthetic input image (0, 1, ...)."
    )


def _default_requests() -> tuple[RequestVariant, ...]:
    return (
        RequestVariant(label="A", seed=11, prompt=0, size="64x64", steps=2, guidance=7.0, n=1,
                       frames=5, length_s=0.5, input_image=0),
        # Batch-compatible with A (only seed, prompt and format differ): a batch row may batch
        # them, and each must still get its own output.
        RequestVariant(label="B", seed=22, prompt=1, size="64x64", steps=2, guidance=7.0, n=1,
                       output_format="jpeg", frames=5, length_s=0.5, input_image=1),
        # A with more steps: a batch that applies its head's steps answers it with A's output.
        RequestVariant(label="C", seed=11, prompt=0, size="64x64", steps=4, guidance=7.0, n=1,
                       frames=5, length_s=0.5, input_image=0),
        # Differs from A in every batch-key field: it must never share a batch with A.
        RequestVariant(label="D", seed=33, prompt=2, size="32x32", steps=3, guidance=3.0,
                       true_cfg=2.0, n=2, frames=9, length_s=0.25, input_image=2),
    )  # fmt: skip


def _default_tolerance() -> ParityTolerance:
    return ParityTolerance(
        rationale="Parity's batch bound: batched kernels may reorder reductions, which moves "
        "pixels by rounding, never content (vLLM-Omni's diffusers-similarity bounds).",
        image={"min_psnr_db": 30.0, "min_ssim": 0.95},
        video={"min_psnr_db": 30.0, "min_ssim": 0.95},
        audio={"min_snr_db": 25.0},
    )


class IsolationParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    prompts: tuple[str, ...] = Field(
        default=("a red cube on a wooden table", "a lighthouse on a cliff at dusk",
                 "a bowl of green apples, studio light"),
        min_length=1,
    )  # fmt: skip
    requests: tuple[RequestVariant, ...] = Field(default_factory=_default_requests, min_length=2)
    orders: int = Field(default=2, ge=1, description="Send orders: as listed, reversed, rotated.")
    patterns: tuple[Pattern, ...] = Field(default=("burst", "staggered", "mixed"), min_length=1)
    repeats: int = Field(default=1, ge=1, description="Rounds per (order, pattern).")
    stagger_fraction: float = Field(
        default=0.3, gt=0, lt=1,
        description="Staggered arrivals: gap between sends, in solo service times.",
    )  # fmt: skip
    tolerance: ParityTolerance = Field(default_factory=_default_tolerance)
    require_exact: bool = Field(
        default=False,
        description="The row must reproduce a solo output exactly; a solo that does not is "
        "invalid. Otherwise such a row is judged within ``tolerance``.",
    )
    crossing_margin_db: float = Field(
        default=3.0, ge=0,
        description="A mismatch is a crossing when the output is at least this much closer "
        "(PSNR/SNR) to another request's solo output than to its own.",
    )  # fmt: skip
    crossing_min_db: float = Field(
        default=20.0, ge=0,
        description="Closer by the margin counts only at this closeness or more: outputs of "
        "unrelated requests sit near 8-12 dB of each other, noise in which no margin means "
        "anything.",
    )  # fmt: skip
    metrics_poll_s: float = Field(default=0.05, gt=0)
    parallel_span_fraction: float = Field(
        default=0.75, gt=0, le=1,
        description="A round whose served answers (two at least, overlapping) all finished "
        "within this fraction of their summed warm solo service times computed at least partly "
        "at once (timing proof they met); refused answers count for nothing.",
    )  # fmt: skip
    request_timeout_s: float = Field(default=120.0, gt=0)
    job_timeout_s: float = Field(default=300.0, gt=0)
    poll_interval_s: float = Field(default=0.05, gt=0)
    thumbnail_side: int = Field(default=64, ge=16, le=256)
    max_thumbnails: int = Field(default=8, ge=0, description="Failure thumbnails stored.")

    @model_validator(mode="after")
    def _consistent(self) -> "IsolationParams":
        labels = [r.label for r in self.requests]
        problems = [f"request label {x!r} used twice" for x in set(labels) if labels.count(x) > 1]
        problems += [
            f"request {r.label} names prompt {r.prompt}, but only {len(self.prompts)} are given"
            for r in self.requests
            if r.prompt is not None and r.prompt >= len(self.prompts)
        ]
        if len(set(self.patterns)) != len(self.patterns):
            problems.append("a pattern is listed twice")
        if problems:
            raise ValueError("; ".join(problems))
        return self
