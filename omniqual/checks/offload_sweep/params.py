"""The ``params`` of an ``offload-sweep`` gate: the points to launch, the rows they stand for,
the request set, the repetitions, the parity tolerance and the memory budget.

A point spells its offload the way vLLM-Omni 0.30 parses it (``offloader/config.py``):
``diffusion_offload_config`` is the JSON of ``--diffusion-offload-config`` (``mode`` layer or
module, ``components``, ``pin_memory``, ``layer_options.dit.weight_transfer`` allgather or
rank-local, ``layer_options.dit.resident_layers``); ``flags`` are any other serve flags
(``enable-cpu-offload``, ``enable-layerwise-offload``, ``enable-distributed-layerwise-offload``,
``dlo-resident-layers``). ``resident_layers`` (a list, or ``{from, to}`` inclusive) expands one
point into one per value, named ``<name>-r<k>``: it sets ``layer_options.dit.resident_layers``
when the point has an offload config, else the ``dlo-resident-layers`` flag.
"""

import copy
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from omniqual.checks.base import CheckParams
from omniqual.checks.parity.requests import ParityRequests
from omniqual.compare.tolerance import ParityTolerance
from omniqual.domain.recipe import FlagValue

OFFLOAD_FLAGS: frozenset[str] = frozenset({
    "diffusion-offload-config", "enable-cpu-offload", "enable-layerwise-offload",
    "enable-distributed-layerwise-offload", "dlo-resident-layers", "dlo-use-allgather",
    "dlo-no-use-allgather",
    "layerwise-num-gpu-layers",
})  # fmt: skip
"""Flags that choose an offload; a point's recipe is its base recipe without any of them."""


class LayerRange(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    start: int = Field(alias="from", ge=0)
    to: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> "LayerRange":
        if self.to < self.start:
            raise ValueError(f"range from {self.start} to {self.to} is empty")
        return self


class PointSpec(BaseModel):
    """One declared point (or, with ``resident_layers``, one per resident-layer count)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    diffusion_offload_config: dict[str, JsonValue] | None = None
    flags: dict[str, FlagValue] = Field(default_factory=dict)
    resident_layers: tuple[int, ...] | LayerRange | None = None
    note: str = ""

    def layer_counts(self) -> tuple[int, ...] | None:
        if isinstance(self.resident_layers, LayerRange):
            return tuple(range(self.resident_layers.start, self.resident_layers.to + 1))
        return self.resident_layers


@dataclass(frozen=True, slots=True)
class Point:
    """A point as launched: its name and the offload flags it adds to the base recipe."""

    name: str
    flags: dict[str, FlagValue]
    settings: dict[str, Any]
    """What the point sets, for the raw table (the offload config as a mapping, not JSON)."""
    note: str = ""
    spec: str = ""
    """The declared point it was expanded from."""


class OffloadSweepParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    requests: ParityRequests
    reference: str = Field(description="The resident point every other point is held to.")
    points: tuple[PointSpec, ...] = Field(min_length=2)
    rows: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Point name -> the axis values of the matrix row it stands for.",
    )
    model_points: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="Model axis value -> the declared points swept for it (default: all).",
    )
    warmup: int = Field(default=1, ge=1, description="Untimed requests before anything counts.")
    repetitions: int = Field(default=3, ge=1, description="Timed fixed-work runs per point.")
    min_repetitions: int = Field(default=3, ge=1, description="Fewer successful runs: invalid.")
    tolerance: ParityTolerance
    startup_deadline_s: float = Field(default=180.0, gt=0, description="Spawn to ready, at most.")
    memory_budget_bytes: float | None = Field(default=None, gt=0)
    memory_resolution: float = Field(
        default=0.05, ge=0, lt=1,
        description="Memory figures closer than this fraction are not told apart.",
    )  # fmt: skip
    observer_interval_s: float = Field(default=0.25, gt=0)
    request_timeout_s: float = Field(default=120.0, gt=0)
    job_timeout_s: float = Field(default=300.0, gt=0)
    poll_interval_s: float = Field(default=0.5, gt=0)

    @model_validator(mode="after")
    def _names(self) -> "OffloadSweepParams":
        names = [p.name for p in expand(self.points)]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"point names repeat after expansion: {repeated}")
        if self.reference not in names:
            raise ValueError(f"reference {self.reference!r} is none of the points {names}")
        unknown = sorted(set(self.rows) - set(names))
        if unknown:
            raise ValueError(f"rows name unknown points {unknown}")
        declared = {p.name for p in self.points}
        for model, chosen in self.model_points.items():
            missing = sorted(set(chosen) - declared)
            if missing or self.reference not in chosen:
                raise ValueError(f"model_points[{model!r}] must name declared points and the"
                                 f" reference {self.reference!r} (unknown: {missing})")  # fmt: skip
        return self


def expand(specs: tuple[PointSpec, ...]) -> tuple[Point, ...]:
    points: list[Point] = []
    for spec in specs:
        counts = spec.layer_counts()
        if counts is None:
            points.append(_point(spec.name, spec, spec.diffusion_offload_config, spec.flags))
            continue
        for count in counts:
            flags = dict(spec.flags)
            config = copy.deepcopy(spec.diffusion_offload_config)
            if config is not None:
                options = config.setdefault("layer_options", {})
                assert isinstance(options, dict), "layer_options must be a mapping"
                dit = options.setdefault("dit", {})
                assert isinstance(dit, dict), "layer_options.dit must be a mapping"
                dit["resident_layers"] = count
            else:
                flags["dlo-resident-layers"] = count
            points.append(_point(f"{spec.name}-r{count}", spec, config, flags))
    return tuple(points)


def _point(
    name: str, spec: PointSpec, config: dict[str, JsonValue] | None, flags: dict[str, FlagValue]
) -> Point:
    launched: dict[str, FlagValue] = dict(flags)
    settings: dict[str, Any] = {"flags": dict(flags)}
    if config is not None:
        launched["diffusion-offload-config"] = json.dumps(config, sort_keys=True)
        settings["diffusion_offload_config"] = config
    return Point(name, launched, settings, spec.note, spec.name)
