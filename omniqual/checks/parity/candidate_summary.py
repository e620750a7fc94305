"""What a candidate parity run records: measurements (per output, latency and memory deltas),
one case result per request, and the structured ``effective`` block the run report draws its
side-by-side table from (file hashes, metrics, signals; never a prompt or a payload)."""

import math
from collections.abc import Sequence

from pydantic import JsonValue

from omniqual.checks.parity.candidate_collect import Latency, Memory, SideRun
from omniqual.checks.parity.candidate_media import OutputPair
from omniqual.checks.parity.candidate_proof import Signal
from omniqual.compare import AudioComparison, Comparison, ImageComparison, VideoComparison
from omniqual.domain.evidence import Measurement


def _number(value: float | None) -> JsonValue:
    """JSON has no infinity: identical media (infinite PSNR/SNR) read "inf"."""
    if value is None:
        return None
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def pair_metrics(comparison: Comparison | None) -> dict[str, JsonValue]:
    if isinstance(comparison, ImageComparison):
        return {
            "psnr_db": _number(comparison.psnr_db),
            "ssim": _number(comparison.ssim),
            "max_abs_error": _number(comparison.max_abs_error),
            "mean_abs_error": _number(comparison.mean_abs_error),
            "exact_pixels": comparison.exact_pixels,
            "exact_bytes": comparison.exact_bytes,
        }
    if isinstance(comparison, VideoComparison):
        return {
            "min_psnr_db": _number(comparison.min_psnr_db),
            "mean_ssim": _number(comparison.mean_ssim),
            "worst_frame": comparison.worst_frame,
            "temporal_difference": _number(comparison.temporal_difference),
            "frames": f"{comparison.candidate_frames}/{comparison.reference_frames}",
            "exact_frames": comparison.exact_frames,
        }
    if isinstance(comparison, AudioComparison):
        return {
            "snr_db": _number(comparison.snr_db),
            "log_spectral_distance_db": _number(comparison.log_spectral_distance_db),
            "max_abs_error": _number(comparison.max_abs_error),
            "exact_samples": comparison.exact_samples,
        }
    return {}


def pair_entry(pair: OutputPair, kind: str) -> dict[str, JsonValue]:
    return {
        "case": pair.case_id,
        "index": pair.index,
        "label": pair.label,
        "kind": kind,
        "identical": pair.identical,
        "frame": pair.frame,
        "files": dict(pair.files),
        "metrics": pair_metrics(pair.comparison),
        "failures": list(pair.failures),
    }


def pair_measurements(pairs: Sequence[OutputPair]) -> tuple[Measurement, ...]:
    found: list[Measurement] = []
    for pair in pairs:
        if pair.comparison is not None:
            found += pair.comparison.to_measurements(prefix=f"{pair.label}: ")
    psnrs = [
        p.comparison.psnr_db
        for p in pairs
        if isinstance(p.comparison, ImageComparison) and p.comparison.psnr_db is not None
    ]
    finite = [v for v in psnrs if math.isfinite(v)]
    if finite:
        found.append(Measurement(name="worst_psnr", value=min(finite), unit="dB",
                                 samples=len(finite)))  # fmt: skip
    ssims = [
        p.comparison.ssim
        for p in pairs
        if isinstance(p.comparison, ImageComparison) and p.comparison.ssim is not None
    ]
    if ssims:
        found.append(Measurement(name="min_ssim", value=min(ssims), unit="1", samples=len(ssims)))
    found.append(Measurement(name="outputs_compared", value=len(pairs), unit="count"))
    identical = sum(p.identical for p in pairs)
    found.append(Measurement(name="outputs_identical", value=identical, unit="count"))
    return tuple(found)


def _latency(side: str, latency: Latency) -> list[Measurement]:
    n = len(latency.samples_s)
    figures = (("median", latency.median_s), ("min", latency.min_s), ("max", latency.max_s))
    return [
        Measurement(name=f"{side}_latency_{name}", value=value, unit="s", samples=n)
        for name, value in figures
        if value is not None
    ]


def latency_measurements(reference: Latency, candidate: Latency) -> tuple[Measurement, ...]:
    found = _latency("reference", reference) + _latency("candidate", candidate)
    if reference.median_s is not None and candidate.median_s is not None:
        samples = min(len(reference.samples_s), len(candidate.samples_s))
        delta = candidate.median_s - reference.median_s
        found.append(Measurement(name="latency_delta_median", value=delta, unit="s",
                                 samples=samples))  # fmt: skip
        if reference.median_s > 0:
            ratio = candidate.median_s / reference.median_s
            found.append(Measurement(name="latency_ratio_median", value=ratio, unit="x",
                                     samples=samples))  # fmt: skip
    return tuple(found)


def memory_measurements(reference: Memory, candidate: Memory) -> tuple[Measurement, ...]:
    found: list[Measurement] = []
    for side, memory in (("reference", reference), ("candidate", candidate)):
        if memory.peak_pss_bytes is not None:
            found.append(Measurement(name=f"{side}_peak_pss", value=memory.peak_pss_bytes,
                                     unit="bytes", samples=memory.samples))  # fmt: skip
        for index, used in sorted(memory.gpu_tree_peak_bytes.items()):
            found.append(Measurement(name=f"{side}_gpu{index}_tree_peak", value=used,
                                     unit="bytes", samples=memory.samples))  # fmt: skip
        for index, used in sorted(memory.gpu_device_peak_bytes.items()):
            found.append(Measurement(name=f"{side}_gpu{index}_device_peak", value=used,
                                     unit="bytes", samples=memory.samples))  # fmt: skip
    if reference.peak_pss_bytes is not None and candidate.peak_pss_bytes is not None:
        delta = candidate.peak_pss_bytes - reference.peak_pss_bytes
        found.append(Measurement(name="peak_pss_delta", value=delta, unit="bytes"))
    for index in sorted(set(reference.gpu_tree_peak_bytes) & set(candidate.gpu_tree_peak_bytes)):
        delta = candidate.gpu_tree_peak_bytes[index] - reference.gpu_tree_peak_bytes[index]
        found.append(Measurement(name=f"gpu{index}_tree_peak_delta", value=delta, unit="bytes"))
    return tuple(found)


def memory_note(side: str, memory: Memory) -> str | None:
    """Why a memory figure is missing (recorded, never read as zero)."""
    if memory.samples == 0:
        return f"{side}: no server process to observe (pid unknown), so no memory figures"
    if memory.peak_pss_bytes is None:
        return f"{side}: PSS unreadable (smaps access denied)"
    return None


def side_block(run: SideRun) -> dict[str, JsonValue]:
    latency = run.latency
    return {
        "latency_s": list(latency.samples_s),
        "latency_failures": list(latency.failures),
        "peak_pss_bytes": run.memory.peak_pss_bytes,
        "gpu_tree_peak_bytes": {str(k): v for k, v in run.memory.gpu_tree_peak_bytes.items()},
        "nvml": run.memory.nvml,
    }


def signal_entries(signals: Sequence[Signal]) -> list[JsonValue]:
    return [
        {"feature": s.feature, "source": s.source, "active": s.active, "detail": s.detail}
        for s in signals
    ]
