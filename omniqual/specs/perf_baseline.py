"""Perf baselines: owned files that say what one row's performance is on one hardware class and
one serve configuration, what change is tolerated, who owns it and the evidence it was set from.

One file per (row, hardware) and, for a server on the measuring host, per CPU class of that host:
``<baselines dir>/<row slug>__<hardware>[__<cpu class>].yaml``. The perf gate
reads it to judge a row; ``omniqual perf baseline update`` writes it from a recorded perf result.
A baseline judges only the row, hardware, serve configuration and workload it was set on. It
states what it can resolve (``resolution``): from its own launch spread, with the gate's launches
per run and confidence, the smallest threshold an unchanged server's typical run passes at, and
the smallest regression a typical run fails at its threshold; a threshold below the first is
refused.
"""

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.domain.axes import RowKey
from omniqual.specs.source import load_spec

BASELINE_SCHEMA_VERSION: Literal[1] = 1

UPDATE_PROCEDURE = """\
Run the perf gate on this row on the stated hardware (nothing else measuring on the host), check
that the row's correctness gate passed on the same deployment, then
`omniqual perf baseline update --from RUN_DIR --from RUN_DIR --from RUN_DIR --row SELECTOR
--owner NAME [--threshold T]` with at least three runs, each of the gate's own server launches
(spread over time: a run is judged against the spread between launches). Review the printed
diff (means, spreads, serve configuration, the threshold it can hold) and commit the file with
the reason in the message. A changed serve configuration or hardware is a new baseline file,
never an overwrite."""

MIN_LAUNCHES = 3
"""Server launches a baseline must be set from: a run is one launch, and launches of the same
build differ by more than the repetitions inside one do; fewer than three leave that spread
unknown (two give a t quantile of 12.7 at 95 %)."""


class _Block(BaseModel):
    # A baseline judges runs by comparison, and NaN compares false with everything: a NaN or
    # infinite number would make a baseline no run can regress against.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class ServeIdentity(_Block):
    """The deployment the baseline was measured on; another one is never judged by it."""

    recipe: str | None = None
    serve_config_sha256: str | None = None
    checkpoint_sha256: str | None = None
    vllm_omni_version: str | None = None

    def mismatch(self, other: "ServeIdentity") -> str | None:
        """The first known identity field that differs, as ``field: baseline X, run Y``."""
        for name in ("serve_config_sha256", "checkpoint_sha256"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and mine != theirs:
                return f"{name}: baseline {mine[:12]}, this run {str(theirs)[:12]}"
        return None


class BaselineLaunch(_Block):
    """One server launch the baseline was set from (of a run that may hold several), and its
    mean of the metric."""

    run_id: str
    result_id: str
    launch: int = Field(default=1, ge=1, description="Which launch of its run.")
    mean: float = Field(gt=0)
    repetitions: int = Field(ge=2)
    host_probe_s: float | None = Field(default=None, gt=0)
    host_steal_fraction: float | None = Field(default=None, ge=0, le=1)


class BaselineResolution(_Block):
    """What the baseline can tell apart, from its own launches: with ``launches_per_run`` new
    launches of ``repetitions_per_launch`` each at ``confidence``, an unchanged server's typical
    interval is ``±min_threshold`` (the smallest threshold it can hold), and the smallest
    regression a typical run fails is ``threshold + min_threshold`` (``detects``). See
    :func:`omniqual.loadgen.regression.resolution`."""

    launches_per_run: int = Field(ge=1)
    repetitions_per_launch: int = Field(ge=2)
    confidence: float = Field(gt=0.5, lt=1)
    min_threshold: float = Field(gt=0, description="The smallest threshold it can hold.")
    detects: float = Field(gt=0, description="The smallest regression a typical run fails.")


class BaselineEvidence(_Block):
    """The perf results the baseline was set from (``run_id``/``result_id``: the latest), with
    every measured repetition of all of them and the mean of each launch."""

    run_id: str
    result_id: str
    set_at: datetime
    repetitions: tuple[float, ...] = Field(min_length=2)
    mean: float
    stdev: float = Field(ge=0)
    host_probe_s: float | None = Field(
        default=None, gt=0,
        description="The measuring host's reference workload (seconds) while the baseline was "
        "measured, when the server ran on that host: a run judges against it only on a host "
        "of the same speed (omniqual.loadgen.host_speed).",
    )  # fmt: skip
    host_probe_workload: str | None = Field(
        default=None,
        description="Which reference workload ``host_probe_s`` timed: a run's reading of "
        "another one is not comparable with it.",
    )  # fmt: skip
    host_steal_fraction: float | None = Field(
        default=None, ge=0, le=1,
        description="The share of CPU time the hypervisor stole while the baseline was measured.",
    )  # fmt: skip
    host_cpu_class: str | None = Field(
        default=None,
        description="The CPU class of the host the server ran on (omniqual.loadgen.cpu_class): "
        "a probed baseline judges only runs on the same one.",
    )  # fmt: skip
    launches: tuple[BaselineLaunch, ...] = Field(
        default=(),
        description="Each server launch the baseline was set from; a run is judged against "
        f"the spread between them, and only by a baseline of at least {MIN_LAUNCHES}.",
    )  # fmt: skip


class PerfBaseline(_Block):
    schema_version: Literal[1] = BASELINE_SCHEMA_VERSION
    row: str = Field(description="The exact row key (canonical form).")
    hardware: str = Field(min_length=1)
    gate: str = "perf"
    metric: str = Field(min_length=1, description="A per-repetition metric of the perf gate.")
    unit: str = "s"
    direction: Literal["lower", "higher"] = Field(description="Which way is better.")
    threshold: float = Field(gt=0, lt=1, description="Tolerated relative change, e.g. 0.10.")
    owner: str = Field(min_length=1)
    serve: ServeIdentity
    workload_sha256: str = Field(pattern=r"^[0-9a-f]{64}$",
                                 description="The gate's fixed work the values belong to.")
    evidence: BaselineEvidence
    resolution: BaselineResolution | None = Field(
        default=None,
        description="What its sessions can resolve (written by `perf baseline update`).",
    )
    update_procedure: str = UPDATE_PROCEDURE

    @model_validator(mode="after")
    def _mean_is_of_the_repetitions(self) -> "PerfBaseline":
        values = self.evidence.repetitions
        mean = sum(values) / len(values)
        if abs(mean - self.evidence.mean) > 1e-6 * max(1.0, abs(mean)):
            raise ValueError(f"evidence.mean {self.evidence.mean} is not the mean of its "
                             f"repetitions ({mean})")  # fmt: skip
        if self.evidence.mean <= 0:
            raise ValueError("evidence.mean must be positive")
        launches = self.evidence.launches
        if len({(launch.run_id, launch.launch) for launch in launches}) != len(launches):
            raise ValueError("evidence.launches names one run twice (the same launch of it): "
                             "each launch counts once")  # fmt: skip
        stated = self.resolution
        if stated is not None and self.threshold < stated.min_threshold:
            raise ValueError(f"threshold {self.threshold:.1%} is below the smallest its launch "
                             f"spread can hold ({stated.min_threshold:.1%}, resolution."
                             "min_threshold)")  # fmt: skip
        if stated is not None and abs(stated.detects - self.threshold
                                      - stated.min_threshold) > 5e-4:  # fmt: skip
            raise ValueError(f"resolution.detects must be threshold + min_threshold "
                             f"({self.threshold + stated.min_threshold:.4f})")
        if self.serve.serve_config_sha256 is None and self.serve.checkpoint_sha256 is None:
            raise ValueError("serve names no serve_config_sha256 or checkpoint_sha256: a "
                             "baseline must say which deployment it judges")
        return self


def row_slug(row: RowKey) -> str:
    """A readable, unique file-name stem for a row (hardware is named separately)."""
    rest = ";".join(f"{k}={v}" for k, v in row.items if k != "hardware")
    readable = "-".join(v for v in (row.get("model"), row.get("api_mode"), row.get("execution"))
                        if v)  # fmt: skip
    readable = re.sub(r"[^a-z0-9.-]+", "-", readable.lower()).strip("-") or "row"
    return f"{readable}.{hashlib.sha256(rest.encode()).hexdigest()[:8]}"


def cpu_class_slug(cpu_class: str) -> str:
    """A file-name part for a CPU class (``GenuineIntel x86_64 amx_tile`` ->
    ``genuineintel-x86-64-amx-tile``)."""
    return re.sub(r"[^a-z0-9]+", "-", cpu_class.lower()).strip("-")


def baseline_path(directory: Path, row: RowKey, hardware: str,
                  cpu_class: str | None = None) -> Path:  # fmt: skip
    """The row's baseline on ``hardware``; with a CPU class, the one set on that class of host
    (a CPU row's baselines are per class: a reference workload cannot carry one across)."""
    stem = f"{row_slug(row)}__{hardware}"
    return directory / (f"{stem}__{cpu_class_slug(cpu_class)}.yaml" if cpu_class else
                        f"{stem}.yaml")  # fmt: skip


def load_baseline(path: Path) -> PerfBaseline:
    """Read and validate one baseline file (SpecError with file:line: field: message)."""
    return load_spec(path, PerfBaseline)[0]


def dump_baseline(baseline: PerfBaseline, note: str = "") -> str:
    """The file's text; ``note`` (lines without their ``#``) is written as comments under the
    header (``perf baseline update`` shows its resolution arithmetic there)."""
    data = baseline.model_dump(mode="json")
    if data.get("resolution") is None:
        data.pop("resolution")
    head = "# Perf baseline, written by `omniqual perf baseline update`; review diffs as code.\n"
    comments = "".join(f"# {line}".rstrip() + "\n" for line in note.splitlines())
    return head + comments + yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=100)


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the update procedure) as literal blocks."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def baseline_diff(old: PerfBaseline | None, new: PerfBaseline) -> list[str]:
    """What changes for a reviewer: one line per changed field (all of them for a new file)."""
    held = _held(new)
    if old is None:
        ev = new.evidence
        return [f"new baseline: {new.metric} mean {ev.mean:.4g} {new.unit} "
                f"(stdev {ev.stdev:.3g}, {len(ev.repetitions)} repetitions in "
                f"{len(ev.launches)} launches, launch means "
                f"{', '.join(f'{launch.mean:.4g}' for launch in ev.launches)}), threshold "
                f"{new.threshold:.0%}, owner {new.owner}", *held]  # fmt: skip
    lines: list[str] = []
    before, after = _flat(_readable(old)), _flat(_readable(new))
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            lines.append(f"{key}: {before.get(key)!r} -> {after.get(key)!r}")
    mean_change = (new.evidence.mean - old.evidence.mean) / old.evidence.mean
    lines.append(f"mean {old.evidence.mean:.4g} -> {new.evidence.mean:.4g} {new.unit} "
                 f"({mean_change:+.1%})")  # fmt: skip
    return [*lines, *held]


def _held(baseline: PerfBaseline) -> list[str]:
    stated = baseline.resolution
    if stated is None:
        return []
    return [f"resolution: with {stated.launches_per_run} launch(es) per run it can hold a "
            f"threshold of {stated.min_threshold:.1%} or more; at {baseline.threshold:.0%} a "
            f"typical run fails a regression of {stated.detects:.1%} or more"]  # fmt: skip


def _readable(baseline: PerfBaseline) -> dict[str, object]:
    """The baseline as a reviewer reads a diff of it: launches by their means, repetitions by
    their count (the file holds every value)."""
    data = baseline.model_dump(mode="json")
    evidence = baseline.evidence
    data["evidence"]["launches"] = (f"{len(evidence.launches)} launches, means "
                                    + ", ".join(f"{x.mean:.4g}" for x in evidence.launches))
    data["evidence"]["repetitions"] = f"{len(evidence.repetitions)} values"
    return data


def _flat(data: object, prefix: str = "") -> dict[str, object]:
    if isinstance(data, dict):
        out: dict[str, object] = {}
        for key, value in data.items():
            out.update(_flat(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): data}
