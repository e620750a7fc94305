"""Weighted request mixes (YAML workload specs) and their seeded assignment to schedule slots.

The spec is pydantic because it is read from files; the plan it produces is a tuple of frozen
``PlannedRequest`` values, which is all the issuer and a ``Send`` implementation ever see.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.loadgen.schedule import Schedule, TraceScalar

PositiveInt = Annotated[int, Field(gt=0)]


class EndpointKind(StrEnum):
    IMAGE = "image"
    IMAGE_EDIT = "image_edit"
    VIDEO_ASYNC = "video_async"
    VIDEO_SYNC = "video_sync"
    AUDIO = "audio"
    CHAT = "chat"


class SeedPolicy(StrEnum):
    FIXED = "fixed"  # every request of the entry sends ``seed``
    PER_REQUEST = "per_request"  # a distinct seed per request, drawn from the workload seed
    UNSET = "unset"  # no seed sent; the server chooses


class ShapeParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    width: PositiveInt | None = None
    height: PositiveInt | None = None
    num_frames: PositiveInt | None = None
    steps: PositiveInt | None = None
    prompt_tokens: PositiveInt | None = None
    guidance_scale: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    extra: dict[str, TraceScalar] = Field(default_factory=dict)


class MixEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$")
    task: str = Field(min_length=1, description="e.g. t2i, i2i, t2v, i2v, ti2v, t2a")
    endpoint: EndpointKind
    shape: ShapeParams = Field(default_factory=ShapeParams)
    weight: float = Field(gt=0, allow_inf_nan=False)
    seed_policy: SeedPolicy = SeedPolicy.PER_REQUEST
    seed: int | None = None

    @model_validator(mode="after")
    def _seed_matches_policy(self) -> MixEntry:
        if self.seed_policy is SeedPolicy.FIXED and self.seed is None:
            raise ValueError(f"entry '{self.name}': seed_policy 'fixed' needs seed")
        if self.seed_policy is not SeedPolicy.FIXED and self.seed is not None:
            raise ValueError(f"entry '{self.name}': seed is only used with seed_policy 'fixed'")
        return self


class WorkloadSpec(BaseModel):
    """A named request mix. ``stratified`` assignment hits each entry's share to within one
    request (every entry with a share appears), ``random`` draws each slot independently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    seed: int = 0
    assignment: Literal["stratified", "random"] = "stratified"
    entries: tuple[MixEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> WorkloadSpec:
        names = [entry.name for entry in self.entries]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate entry names: {', '.join(duplicates)}")
        return self

    @classmethod
    def from_yaml(cls, path: Path) -> WorkloadSpec:
        with path.open(encoding="utf-8") as handle:
            return cls.model_validate(yaml.safe_load(handle))


@dataclass(frozen=True, slots=True)
class RequestParams:
    width: int | None
    height: int | None
    num_frames: int | None
    steps: int | None
    prompt_tokens: int | None
    guidance_scale: float | None
    seed: int | None
    extra: tuple[tuple[str, TraceScalar], ...]


@dataclass(frozen=True, slots=True)
class PlannedRequest:
    index: int
    offset_s: float
    entry: str
    task: str
    endpoint: EndpointKind
    params: RequestParams


_INT_OVERRIDES = ("width", "height", "num_frames", "steps", "prompt_tokens", "seed")


def _stratified(entries: Sequence[MixEntry], slots: int, rng: random.Random) -> list[MixEntry]:
    """Largest-remainder counts per entry, then a seeded shuffle of the slot order."""
    total = sum(entry.weight for entry in entries)
    quotas = [entry.weight / total * slots for entry in entries]
    counts = [int(quota) for quota in quotas]
    by_remainder = sorted(range(len(entries)), key=lambda i: (counts[i] - quotas[i], i))
    for i in by_remainder[: slots - sum(counts)]:
        counts[i] += 1
    chosen = [entry for entry, n in zip(entries, counts, strict=True) for _ in range(n)]
    rng.shuffle(chosen)
    return chosen


def plan_requests(spec: WorkloadSpec, schedule: Schedule) -> tuple[PlannedRequest, ...]:
    """Assign every schedule slot a mix entry and concrete parameters, deterministically.

    Trace lines that name an entry keep it, and their shape fields override the entry's; the
    remaining slots are filled from the weighted mix.
    """
    by_name = {entry.name: entry for entry in spec.entries}
    hints = schedule.trace_hints
    pinned: dict[int, MixEntry] = {}
    for index, hint in enumerate(hints):
        if hint.entry is not None:
            if hint.entry not in by_name:
                raise ValueError(f"slot {index}: trace names unknown mix entry '{hint.entry}'")
            pinned[index] = by_name[hint.entry]
    free = [i for i in range(len(schedule)) if i not in pinned]
    mix_rng = random.Random(f"{spec.seed}:mix")
    seed_rng = random.Random(f"{spec.seed}:seeds")
    if spec.assignment == "stratified":
        fill = _stratified(spec.entries, len(free), mix_rng)
    else:
        weights = [entry.weight for entry in spec.entries]
        fill = mix_rng.choices(spec.entries, weights=weights, k=len(free))
    chosen = dict(pinned)
    chosen.update(zip(free, fill, strict=True))

    # Once per entry, not per slot: a bench plans its whole phase inside its measured window.
    extras = {entry.name: tuple(sorted(entry.shape.extra.items())) for entry in spec.entries}
    planned: list[PlannedRequest] = []
    for index, offset in enumerate(schedule.offsets_s):
        entry = chosen[index]
        shape = entry.shape
        # Draw for every slot so one entry's policy never shifts another entry's seeds.
        drawn = seed_rng.randrange(2**31)
        policy = entry.seed_policy
        seed = drawn if policy is SeedPolicy.PER_REQUEST else (
            entry.seed if policy is SeedPolicy.FIXED else None)  # fmt: skip
        params = RequestParams(
            shape.width,
            shape.height,
            shape.num_frames,
            shape.steps,
            shape.prompt_tokens,
            shape.guidance_scale,
            seed,
            extras[entry.name],
        )
        if hints:
            overrides = {k: v for k, v in hints[index].overrides if k in _INT_OVERRIDES}
            params = replace(params, **overrides)  # type: ignore[arg-type]
        planned.append(
            PlannedRequest(index, offset, entry.name, entry.task, entry.endpoint, params)
        )
    return tuple(planned)
