"""What the ``lora`` gate takes: the adapters to send (on the server's host) and its bounds."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from omniqual.checks.base import CheckParams


class AdapterRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    path: str = Field(min_length=1, description="The adapter's directory on the server's host.")


class LoraParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    adapters: tuple[AdapterRef, ...] | None = Field(
        default=None,
        min_length=2,
        description="Two adapters with different effects, as the server's host sees them; None: "
        "the bundled ones, written beside the launched target's checkpoint (embedded target).",
    )
    missing_path: str = Field(
        default="/nonexistent/omniqual-lora-adapter",
        description="An adapter path that does not exist on the server's host.",
    )
    broken_adapters: dict[Literal["no-layer", "malformed"], str] = Field(
        default_factory=dict,
        description="Adapter directories on the server's host that must be refused: `no-layer` "
        "(target modules that match no layer), `malformed` (weights that are not safetensors). "
        "Unset: the bundled ones on the embedded target; elsewhere those cases are not sent.",
    )
    request_timeout_s: float = Field(default=120.0, gt=0)
    job_timeout_s: float = Field(default=300.0, gt=0)
    poll_interval_s: float = Field(default=0.25, gt=0)
    reproducible_db: float = Field(
        default=30.0, gt=0, description="Same-seed answers at least this close: reproducible."
    )
    margin_db: float = Field(
        default=3.0, ge=0, description="How far beyond the same-seed spread an effect must be."
    )
    churn_rounds: int = Field(
        default=4, ge=0,
        description="Turns of the two adapters after both were loaded once (two loads each "
        "where the server caches one adapter); 0: no churn turns.",
    )  # fmt: skip
    max_churn_memory_growth_mib: float = Field(
        default=64.0, ge=0,
        description="How much the server's memory may grow over the churn turns.",
    )  # fmt: skip
    release: str | None = Field(
        default=None, description="vLLM-Omni release for the contract's declared deviations; "
        "None: read from GET /version.",
    )  # fmt: skip
