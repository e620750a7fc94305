"""One sweep point's record: how it started, what it measured, its parity against the
reference point and its measurement-validity verdict; and the recipe a point is launched from.

A point is ``valid`` only when it served, at least ``min_repetitions`` timed runs succeeded,
both phases have a reading in the sweep's memory unit (PSS on CPU; NVML and PSS on GPU) and every
case the reference answered could be compared. A refused or hung point is recorded with its
message and is ``invalid`` (nothing measured); so is a point left uncompared on a case the
reference failed. Parity is otherwise kept apart from validity: an output that differs is a
correctness failure of the gate, and the point leaves the frontier.

One memory unit per sweep (:func:`memory_unit`): NVML when any point's devices were seen, the
peak over both phases summed over devices; else PSS, the peak over both phases. A point of a GPU
sweep without NVML readings has no memory figure: it is never judged in PSS beside NVML points.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from omniqual.checks.fails_fast import crash_line
from omniqual.checks.offload_sweep.loader_path import LoaderPath
from omniqual.checks.offload_sweep.measure import PhaseMemory, PointMeasurement
from omniqual.checks.offload_sweep.params import OFFLOAD_FLAGS, Point
from omniqual.checks.parity.candidate_media import compare_media
from omniqual.compare import MediaDecodeError, ParityTolerance, judge
from omniqual.compare.image import ImageComparison
from omniqual.compare.tolerance import Comparison
from omniqual.compare.video import VideoComparison
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe


def point_recipe(base: LaunchRecipe, point: Point, deadline_s: float) -> LaunchRecipe:
    """``base`` without its offload flags, plus the point's, bounded at ``deadline_s``."""
    flags = {k: v for k, v in base.flags.items() if k not in OFFLOAD_FLAGS}
    flags.update(point.flags)
    readiness = base.readiness.model_copy(
        update={"timeout_s": min(base.readiness.timeout_s, deadline_s)}
    )
    return base.model_copy(update={
        "id": f"{base.id}--{point.name}", "flags": flags, "readiness": readiness,
        "expect": Expectation.SERVES, "expected_error": None,
    })  # fmt: skip


@dataclass(frozen=True, slots=True)
class Parity:
    outcome: str
    """``passed``, ``failed`` or ``unavailable`` (nothing to compare)."""
    max_abs_error: float | None
    psnr_db: float | None
    findings: tuple[str, ...] = ()
    uncompared: tuple[str, ...] = ()
    """Cases the reference gave no output for (with its problem): this point is unchecked there."""

    def as_json(self) -> dict[str, Any]:
        psnr = None if self.psnr_db is None or math.isinf(self.psnr_db) else self.psnr_db
        return {"outcome": self.outcome, "max_abs_error": self.max_abs_error, "psnr_db": psnr,
                "identical": self.psnr_db is not None and math.isinf(self.psnr_db)}  # fmt: skip


def _figures(comparison: Comparison) -> tuple[float | None, float | None]:
    if isinstance(comparison, ImageComparison):
        return comparison.max_abs_error, comparison.psnr_db
    if isinstance(comparison, VideoComparison):
        worst_err = max(comparison.max_abs_error, default=None)
        return worst_err, min(comparison.psnr_db, default=None)
    return None, None


def parity_of(
    reference: PointMeasurement, candidate: PointMeasurement, kinds: dict[str, str],
    tolerance: ParityTolerance,
) -> Parity:  # fmt: skip
    """Every case both sides answered, compared output by output; the worst figures kept."""
    findings: list[str] = []
    worst_err: float | None = None
    worst_psnr: float | None = None
    compared = 0
    uncompared: list[str] = []
    for case_id, kind in kinds.items():
        ref, cand = reference.outputs.get(case_id, ()), candidate.outputs.get(case_id, ())
        if not ref:
            # Not this point's fault, but its output there is unchecked: it cannot pass on it.
            uncompared.append(f"{case_id} ({reference.problems.get(case_id, 'no output')})")
            continue
        if len(cand) != len(ref):
            findings.append(f"{case_id}: {len(cand)} outputs where the reference gave {len(ref)}"
                            f" ({candidate.problems.get(case_id, 'no error')})")  # fmt: skip
            continue
        for index, (r, c) in enumerate(zip(ref, cand, strict=True)):
            try:
                comparison = compare_media(kind, r, c)
            except MediaDecodeError as exc:
                findings.append(f"{case_id}#{index}: undecodable output: {exc}")
                continue
            compared += 1
            err, psnr = _figures(comparison)
            if err is not None:
                worst_err = err if worst_err is None else max(worst_err, err)
            if psnr is not None:
                worst_psnr = psnr if worst_psnr is None else min(worst_psnr, psnr)
            findings += [f"{case_id}#{index}: {f}" for f in judge(comparison, tolerance)]
    if findings:
        return Parity("failed", worst_err, worst_psnr, tuple(findings), tuple(uncompared))
    if compared == 0:
        return Parity("unavailable", None, None, ("no output pair to compare",), tuple(uncompared))
    return Parity("passed", worst_err, worst_psnr, (), tuple(uncompared))


MemoryUnit = Literal["nvml", "pss"]


def memory_unit(records: Iterable["PointRecord"]) -> MemoryUnit:
    """The sweep's one memory unit: NVML when any point's devices were seen, else PSS."""
    for record in records:
        m = record.measured
        if m is not None and (m.load.gpu_bytes_per_device or m.steady.gpu_bytes_per_device):
            return "nvml"
    return "pss"


@dataclass(frozen=True, slots=True)
class PointRecord:
    point: Point
    startup: StartupOutcome
    measured: PointMeasurement | None
    parity: Parity | None
    repetitions_wanted: int
    min_repetitions: int
    loader: LoaderPath | None = None
    """A DLO point's loader path as its log shows it; None for a point without DLO."""

    @property
    def served(self) -> bool:
        return self.startup.became_ready and self.measured is not None

    def reasons(self, unit: MemoryUnit = "pss") -> list[str]:
        """Why the point's measurement is invalid in a sweep of ``unit``; empty when valid."""
        s = self.startup
        if not s.became_ready:
            if s.reason == "timeout":
                return [f"hung at startup: not ready within {s.elapsed_s:.0f} s; stopped"]
            # The line that says why, not the shutdown chatter after it.
            line = crash_line("\n".join(s.log_tail))
            return [f"refused at startup ({s.reason}, exit {s.exit_code}) after"
                    f" {s.elapsed_s:.1f} s: {line}"]  # fmt: skip
        m = self.measured
        if m is None:
            return ["served but not measured"]
        reasons: list[str] = []
        if len(m.latencies_s) < self.min_repetitions:
            why = f" ({m.latency_failures[0]})" if m.latency_failures else ""
            reasons.append(f"too few repetitions: {len(m.latencies_s)} of"
                           f" {self.repetitions_wanted} succeeded, {self.min_repetitions}"
                           f" needed{why}")  # fmt: skip
        for phase, memory in (("load", m.load), ("steady", m.steady)):
            if memory.peak_pss_bytes is None:
                reasons.append(f"memory series missing: no PSS reading in the {phase} phase"
                               f" ({memory.samples} samples)")  # fmt: skip
            if unit == "nvml" and not memory.gpu_bytes_per_device:
                reasons.append(f"memory series missing: no NVML reading in the {phase} phase of"
                               " a GPU sweep (its memory is NVML's, never PSS)")  # fmt: skip
        if self.parity is not None and self.parity.uncompared:
            reasons.append("not compared where the reference failed: "
                           + "; ".join(self.parity.uncompared[:3]))  # fmt: skip
        return reasons

    def valid(self, unit: MemoryUnit = "pss") -> bool:
        return not self.reasons(unit)

    def memory_bytes(self, unit: MemoryUnit = "pss") -> float | None:
        """The frontier's memory figure in the sweep's ``unit``: NVML, the per-device peaks over
        both phases summed over devices; PSS, the peak over both phases. None when either phase
        lacks a reading in that unit (never a figure of the other unit)."""
        m = self.measured
        if m is None:
            return None
        if unit == "nvml":
            load, steady = m.load.gpu_bytes_per_device, m.steady.gpu_bytes_per_device
            if not load or not steady:
                return None
            devices = set(load) | set(steady)
            return float(sum(max(load.get(d, 0), steady.get(d, 0)) for d in devices))
        pss = [p for p in (m.load.peak_pss_bytes, m.steady.peak_pss_bytes) if p is not None]
        return float(max(pss)) if len(pss) == 2 else None

    def as_json(self, unit: MemoryUnit = "pss") -> dict[str, Any]:
        m = self.measured
        load, steady = (m.load, m.steady) if m is not None else (None, None)
        gpus = _gpus(load, steady)
        message = None if self.startup.became_ready else self.reasons()[0]
        return {
            "name": self.point.name, "mode": _mode(self.point), "settings": self.point.settings,
            "refused": not self.startup.became_ready, "message": message,
            "startup_s": self.startup.elapsed_s if self.startup.became_ready else None,
            "startup_elapsed_s": self.startup.elapsed_s,
            "latency_median_s": m.median_s if m else None,
            "latency_min_s": min(m.latencies_s) if m and m.latencies_s else None,
            "latency_max_s": max(m.latencies_s) if m and m.latencies_s else None,
            "latency_samples_s": list(m.latencies_s) if m else [],
            "repetitions": len(m.latencies_s) if m else 0,
            "peak_pss_bytes_load": load.peak_pss_bytes if load else None,
            "peak_pss_bytes_steady": steady.peak_pss_bytes if steady else None,
            "peak_rss_bytes": _max(load.peak_rss_bytes if load else None,
                                   steady.peak_rss_bytes if steady else None),
            "gpu_bytes_per_device": gpus,
            "memory_bytes": self.memory_bytes(unit),
            "parity": self.parity.as_json() if self.parity else None,
            "loader_path": self.loader.as_json() if self.loader else None,
            "verdict": "valid" if self.valid(unit) else "invalid",
            "verdict_reasons": self.reasons(unit),
        }  # fmt: skip


def _max(a: int | None, b: int | None) -> int | None:
    values = [v for v in (a, b) if v is not None]
    return max(values) if values else None


def _gpus(load: PhaseMemory | None, steady: PhaseMemory | None) -> dict[str, int] | None:
    merged: dict[str, int] = {}
    seen = False
    for phase in (load, steady):
        if phase is not None and phase.gpu_bytes_per_device is not None:
            seen = True
            for index, used in phase.gpu_bytes_per_device.items():
                merged[str(index)] = max(merged.get(str(index), 0), used)
    return merged if seen else None


def _mode(point: Point) -> str:
    config = point.settings.get("diffusion_offload_config")
    if isinstance(config, dict) and isinstance(config.get("mode"), str):
        return str(config["mode"])
    flags = point.flags
    if flags.get("enable-distributed-layerwise-offload"):
        return "dlo"
    if flags.get("enable-layerwise-offload"):
        return "layerwise"
    if flags.get("enable-cpu-offload"):
        return "model"
    return "resident"
