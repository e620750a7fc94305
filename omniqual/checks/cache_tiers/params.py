"""The cache-tiers gate's ``params`` block: the cache points to sweep, the quality floor of each
named tier, and the fixed work.

A point spells its cache the way vLLM-Omni 0.30 takes it at serve time: ``--cache-backend``
(``backend``) and ``--cache-config`` (``cache_config``, a JSON object; for Cache-DiT the fields of
``DiffusionCacheConfig`` its backend projects: ``residual_diff_threshold``, ``max_warmup_steps``,
``Fn_compute_blocks``, ``Bn_compute_blocks``, ``max_cached_steps``,
``max_continuous_cached_steps``). ``--enable-cache-dit-summary`` is added to every point so the
server logs its cached steps after each request (the hit proof). The lossless baseline is the
row's recipe with every ``cache_flags`` flag removed.
"""

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from omniqual.checks.base import CheckParams
from omniqual.compare.tolerance import ImageTolerance

LOSSLESS = "lossless"


class CachePoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    cache_config: dict[str, JsonValue] = Field(default_factory=dict)
    note: str = ""


class TierFloor(BaseModel):
    """A named tier: the fastest active point whose worst output meets these floors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    min_psnr_db: float | None = None
    min_ssim: float | None = Field(default=None, ge=-1, le=1)


class CacheTiersParams(CheckParams):
    backend: str = "cache_dit"
    cache_flags: tuple[str, ...] = ("cache-backend", "cache-config", "enable-cache-dit-summary")
    summary_flag: str | None = Field(
        default="enable-cache-dit-summary",
        description="Added to each point: the server then logs its cached steps per request.",
    )  # fmt: skip
    points: tuple[CachePoint, ...] = Field(min_length=1)
    tiers: tuple[TierFloor, ...] = Field(min_length=1, description="Strictest first.")
    width: int = Field(default=64, gt=0)
    height: int = Field(default=64, gt=0)
    steps: int = Field(default=8, gt=0, description="Steps of the measured requests.")
    alternate_steps: int = Field(
        default=2, gt=0,
        description="The changed step count of the alternation's middle request (within the "
        "cache's warm-up it is computed in full and must equal the lossless output).",
    )  # fmt: skip
    seeds: tuple[int, ...] = Field(default=(0, 1), min_length=2)
    warmup: int = Field(default=1, ge=0)
    repetitions: int = Field(default=3, ge=2, description="Timed passes over the seeds.")
    restore: ImageTolerance = Field(
        default=ImageTolerance(require_exact=True),
        description="How close a request after another must be to the same request alone.",
    )  # fmt: skip
    quality_resolution: float = Field(default=0.005, ge=0, description="SSIM apart to differ.")
    request_timeout_s: float = Field(default=120.0, gt=0)
    startup_deadline_s: float = Field(default=240.0, gt=0)

    @model_validator(mode="after")
    def _names(self) -> "CacheTiersParams":
        names = [p.name for p in self.points]
        if len(set(names)) != len(names) or LOSSLESS in names:
            raise ValueError(f"point names must be unique and not {LOSSLESS!r}: {names}")
        tiers = [t.name for t in self.tiers]
        if len(set(tiers)) != len(tiers) or LOSSLESS in tiers:
            raise ValueError(f"tier names must be unique and not {LOSSLESS!r}: {tiers}")
        return self
