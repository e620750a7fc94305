from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.loadgen.schedule import constant_schedule, parse_trace, trace_schedule
from omniqual.loadgen.workload import (
    EndpointKind,
    MixEntry,
    SeedPolicy,
    ShapeParams,
    WorkloadSpec,
    plan_requests,
)


def _spec(assignment: str = "stratified") -> WorkloadSpec:
    return WorkloadSpec.model_validate(
        {
            "name": "mix",
            "seed": 5,
            "assignment": assignment,
            "entries": [
                {
                    "name": "img-small",
                    "task": "t2i",
                    "endpoint": "image",
                    "weight": 6,
                    "shape": {"width": 512, "height": 512, "steps": 4},
                },
                {
                    "name": "img-large",
                    "task": "t2i",
                    "endpoint": "image",
                    "weight": 3,
                    "shape": {"width": 1024, "height": 1024, "steps": 20},
                    "seed_policy": "fixed",
                    "seed": 42,
                },
                {
                    "name": "vid",
                    "task": "t2v",
                    "endpoint": "video_async",
                    "weight": 1,
                    "shape": {"num_frames": 17},
                    "seed_policy": "unset",
                },
            ],
        }
    )


def test_stratified_assignment_hits_shares_and_is_deterministic() -> None:
    schedule = constant_schedule(10.0, count=100)
    plan = plan_requests(_spec(), schedule)
    assert plan == plan_requests(_spec(), schedule)
    assert Counter(p.entry for p in plan) == {"img-small": 60, "img-large": 30, "vid": 10}
    assert [p.index for p in plan] == list(range(100))
    assert [p.offset_s for p in plan] == list(schedule.offsets_s)
    # Shuffled, not blocked: the first ten slots are not all one entry.
    assert len({p.entry for p in plan[:10]}) > 1


def test_stratified_small_counts_use_largest_remainder() -> None:
    plan = plan_requests(_spec(), constant_schedule(1.0, count=7))
    # Quotas 4.2 / 2.1 / 0.7: floors 4/2/0, the one spare slot goes to the 0.7 remainder.
    assert Counter(p.entry for p in plan) == {"img-small": 4, "img-large": 2, "vid": 1}


def test_random_assignment_is_seeded_and_roughly_weighted() -> None:
    schedule = constant_schedule(10.0, count=3000)
    plan = plan_requests(_spec("random"), schedule)
    assert plan == plan_requests(_spec("random"), schedule)
    share = Counter(p.entry for p in plan)["img-small"] / 3000
    assert share == pytest.approx(0.6, abs=0.04)


def test_seed_policies_and_params() -> None:
    plan = plan_requests(_spec(), constant_schedule(10.0, count=60))
    small = [p for p in plan if p.entry == "img-small"]
    large = [p for p in plan if p.entry == "img-large"]
    video = [p for p in plan if p.entry == "vid"]
    assert len({p.params.seed for p in small}) == len(small)
    assert {p.params.seed for p in large} == {42}
    assert {p.params.seed for p in video} == {None}
    assert video[0].endpoint is EndpointKind.VIDEO_ASYNC
    assert video[0].params.num_frames == 17
    assert large[0].params.width == 1024 and large[0].task == "t2i"


def test_trace_pins_entries_and_overrides_shapes() -> None:
    lines = [
        json.dumps({"timestamp": 0, "entry": "vid", "num_frames": 33, "seed": 7}),
        json.dumps({"timestamp": 1, "width": 640}),
        json.dumps({"timestamp": 2}),
    ]
    schedule = trace_schedule(parse_trace(lines))
    plan = plan_requests(_spec(), schedule)
    assert plan[0].entry == "vid"
    assert plan[0].params.num_frames == 33
    assert plan[0].params.seed == 7
    assert plan[1].params.width == 640
    bad = trace_schedule(parse_trace([json.dumps({"timestamp": 0, "entry": "nope"})]))
    with pytest.raises(ValueError, match="slot 0: trace names unknown mix entry 'nope'"):
        plan_requests(_spec(), bad)


def test_spec_validation_errors(tmp_path: Path) -> None:
    entry = {"name": "a", "task": "t2i", "endpoint": "image", "weight": 1}
    with pytest.raises(ValidationError, match="duplicate entry names: a"):
        WorkloadSpec.model_validate({"name": "w", "entries": [entry, entry]})
    with pytest.raises(ValidationError, match="needs seed"):
        MixEntry.model_validate({**entry, "seed_policy": "fixed"})
    with pytest.raises(ValidationError):
        MixEntry.model_validate({**entry, "weight": 0})
    with pytest.raises(ValidationError):
        MixEntry.model_validate({**entry, "endpoint": "fax"})
    with pytest.raises(ValidationError):
        ShapeParams.model_validate({"width": 512, "colour": "blue"})
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: w\nentries:\n  - {name: a, task: t2a, endpoint: audio, weight: 1, "
        "seed_policy: fixed, seed: 3}\n",
        encoding="utf-8",
    )
    loaded = WorkloadSpec.from_yaml(path)
    assert loaded.entries[0].endpoint is EndpointKind.AUDIO
    assert loaded.entries[0].seed_policy is SeedPolicy.FIXED
