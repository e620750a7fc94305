"""Sweep points measured once per run: a point launched for one row's sweep is the same
deployment when another row's sweep derives it again, so the second row reads its record.

The resident row launches every point; an offload row launches the reference and its own point,
both of which the resident row has just measured (or will: whichever row comes first measures).
What makes two derivations the same point is everything a launch and a measurement depend on:
the derived recipe's serving fields (kind, pipeline or model, command, flags, environment,
readiness, stop policy), the checkpoint, the gate's whole params, the request cases (they follow
the row's endpoint: an images row never reads a chat row's outputs), and the run's evidence
store (a record's artifacts live there). Recipe id, description, notes and row axes are labels.

A record is kept without parity: parity against the reference is judged afresh by each sweep.
A later run (a resume, another process) starts empty and launches again.
"""

import hashlib
import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.base import ArtifactSink
from omniqual.checks.offload_sweep.params import OffloadSweepParams
from omniqual.checks.offload_sweep.points import PointRecord
from omniqual.checks.parity.requests import ParityCase
from omniqual.domain.evidence import Artifact
from omniqual.domain.recipe import LaunchRecipe

_SERVING_FIELDS = {"kind", "pipeline", "model", "url", "command", "flags", "env", "readiness",
                   "stop", "expect", "expected_error"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SharedPoint:
    record: PointRecord
    artifacts: tuple[Artifact, ...]
    measured_for: str
    """The row whose sweep launched and measured it."""


_BY_SINK: "weakref.WeakKeyDictionary[ArtifactSink, dict[str, SharedPoint]]" = (
    weakref.WeakKeyDictionary()
)
"""Per evidence store, weakly: a run's points go when its writer does."""


def point_key(recipe: LaunchRecipe, checkpoint: Path | None, params: OffloadSweepParams,
              cases: Sequence[ParityCase]) -> str:  # fmt: skip
    doc = {
        "recipe": recipe.model_dump(mode="json", include=_SERVING_FIELDS),
        "checkpoint": str(checkpoint.resolve()) if checkpoint is not None else None,
        "params": params.model_dump(mode="json"),
        # Frozen dataclasses of JSON values and small fixtures: their repr is their content.
        "cases": [repr(case) for case in cases],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()


def measured_point(sink: ArtifactSink, key: str) -> SharedPoint | None:
    """The point this run already measured under ``key``, if any."""
    try:
        return _BY_SINK.get(sink, {}).get(key)
    except TypeError:  # a store that cannot be weakly referenced shares nothing
        return None


def keep_point(sink: ArtifactSink, key: str, shared: SharedPoint) -> None:
    try:
        _BY_SINK.setdefault(sink, {})[key] = shared
    except TypeError:
        return
