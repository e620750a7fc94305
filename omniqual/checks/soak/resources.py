"""Judging a server's resources around load (soak) or cuts (abort): memory slope with its CI,
FD and temp-file growth, and GPU memory of the server's own processes (NVML per-tree usage, the
device-wide figure kept beside it). A resource signal that is absent (no memory figure, no or an
unreadable watch directory, NVML missing on a GPU row) makes the verdict ``invalid``, never a
pass: a check that could not look has not seen a clean server."""

from collections.abc import Sequence
from pathlib import Path

from omniqual.checks.soak.judge import Findings, measurement
from omniqual.checks.soak.params import Reliability
from omniqual.checks.soak.watch import MIB, ResourcePoint, memory_trend


def gpu_row(hardware: str | None) -> bool:
    """A row whose ``hardware`` axis names an accelerator (anything but ``cpu…``)."""
    return hardware is not None and not hardware.startswith("cpu")


def absent_signals(baseline: ResourcePoint, after: ResourcePoint, watch_dirs: Sequence[Path],
                   hardware: str | None, what: str) -> list[str]:  # fmt: skip
    """Why a cleanup/resource verdict cannot be given: each signal that was not there."""
    found: list[str] = []
    if baseline.memory_bytes is None or after.memory_bytes is None:
        found.append(f"{what}: no memory figure (source {after.source}): memory cleanup "
                     "cannot be judged")  # fmt: skip
    if baseline.open_fds is None or after.open_fds is None:
        found.append(f"{what}: no open-FD figure (source {after.source}): FD cleanup cannot be "
                     "judged")  # fmt: skip
    if not watch_dirs:
        found.append(f"{what}: no watch directory (the server's temp dir is unknown, e.g. a URL "
                     "target; set watch_dirs, or --watch-dir on its agent): temp-file residue "
                     "cannot be counted")  # fmt: skip
    elif baseline.temp_files is None or after.temp_files is None:
        found.append(f"{what}: a watched directory is missing or unreadable "
                     f"({', '.join(map(str, watch_dirs))}): its files cannot be counted")
    if gpu_row(hardware) and not (baseline.nvml and after.nvml):
        found.append(f"{what}: NVML is unavailable on a GPU row (hardware {hardware}): GPU "
                     "memory cannot be measured")  # fmt: skip
    elif gpu_row(hardware) and None in (baseline.gpu_device_bytes, after.gpu_device_bytes):
        found.append(f"{what}: NVML reported no GPU memory on a GPU row (hardware {hardware})")
    return found


def gpu_growth(baseline: ResourcePoint, after: ResourcePoint, bound_mib: float,
               what: str) -> Findings:  # fmt: skip
    """GPU memory of the server's own processes, back within ``bound_mib`` of the baseline;
    the device-wide growth is recorded beside it (on a shared device it is not the server's)."""
    found = Findings()
    if baseline.gpu_device_bytes is not None and after.gpu_device_bytes is not None:
        device = (after.gpu_device_bytes - baseline.gpu_device_bytes) / MIB
        found.measurements.append(measurement("gpu_device_memory_growth_mib", device, "MiB"))
    if not (baseline.nvml and after.nvml) or after.gpu_device_bytes is None:
        return found
    if baseline.gpu_tree_bytes is None or after.gpu_tree_bytes is None:
        found.invalid.append(f"{what}: NVML did not attribute GPU memory to the server's "
                             "processes (no per-process usage): its GPU cleanup cannot be judged")
        return found
    grew = (after.gpu_tree_bytes - baseline.gpu_tree_bytes) / MIB
    found.measurements.append(measurement("gpu_memory_growth_mib", grew, "MiB", bound=bound_mib,
                                          ok=grew <= bound_mib))  # fmt: skip
    if grew > bound_mib:
        found.failures.append(f"{what}: the server's GPU memory grew by {grew:.1f} MiB "
                              f"({baseline.gpu_tree_bytes / MIB:.0f} -> "
                              f"{after.gpu_tree_bytes / MIB:.0f} MiB), bound {bound_mib:g} MiB")
    return found


def _gpu_slope(points: Sequence[ResourcePoint], policy: Reliability, what: str) -> Findings:
    found = Findings()
    trend = memory_trend(points, confidence=policy.slope_confidence,
                         value=lambda p: p.gpu_tree_bytes)  # fmt: skip
    if trend is None:
        return found
    per_min = 60.0 / MIB
    slope, high = trend.slope * per_min, trend.ci_high * per_min
    bound = policy.max_gpu_memory_slope_mib_per_min
    found.measurements.append(measurement("gpu_memory_slope_mib_per_min", slope, "MiB/min",
                                          samples=trend.n, bound=bound,
                                          ok=high <= bound))  # fmt: skip
    text = (f"{what}: GPU memory slope of the server's processes {slope:+.2f} MiB/min "
            f"({trend.confidence:.0%} CI ..{high:+.2f}, n={trend.n}) vs bound {bound:g} MiB/min")
    if trend.ci_low * per_min > bound:
        found.failures.append(text)
    elif high > bound:
        found.invalid.append(text + ": the interval straddles the bound (inconclusive)")
    return found


def judge_resources(
    points: Sequence[ResourcePoint], baseline: ResourcePoint, after: ResourcePoint,
    policy: Reliability, what: str = "soak", *, watch_dirs: Sequence[Path] = (),
    hardware: str | None = None,
) -> Findings:  # fmt: skip
    found = Findings()
    found.invalid += absent_signals(baseline, after, watch_dirs, hardware, what)
    found.extend(gpu_growth(baseline, after, policy.max_gpu_memory_growth_mib, what))
    found.extend(_gpu_slope(points, policy, what))
    trend = memory_trend(points, confidence=policy.slope_confidence)
    bound = policy.max_memory_slope_mib_per_min
    if trend is None:
        found.invalid.append(f"{what}: memory slope: fewer than 3 memory samples")
    else:
        per_min = 60.0 / MIB
        slope, low, high = trend.slope * per_min, trend.ci_low * per_min, trend.ci_high * per_min
        kind = "PSS" if points and points[-1].pss_bytes is not None else "RSS"
        text = (f"{what}: {kind} memory slope {slope:+.2f} MiB/min "
                f"({trend.confidence:.0%} CI {low:+.2f}..{high:+.2f}, n={trend.n}) "
                f"vs bound {bound:g} MiB/min")  # fmt: skip
        if low > bound:
            found.failures.append(text)
        elif high > bound:
            found.invalid.append(text + ": the interval straddles the bound (inconclusive)")
        found.measurements.append(measurement("memory_slope_mib_per_min", slope, "MiB/min",
                                              samples=trend.n, bound=bound,
                                              ok=high <= bound))  # fmt: skip
        found.measurements.append(measurement("memory_slope_ci_high_mib_per_min", high, "MiB/min"))
    found.extend(growth_findings(baseline, after, policy.max_fd_growth,
                                 policy.max_temp_file_growth, what))  # fmt: skip
    return found


def growth_findings(
    baseline: ResourcePoint, after: ResourcePoint, max_fds: int, max_temp: int, what: str
) -> Findings:
    found = Findings()
    if baseline.open_fds is not None and after.open_fds is not None:
        grew = after.open_fds - baseline.open_fds
        found.measurements.append(measurement("open_fd_growth", grew, "count", bound=max_fds,
                                              ok=grew <= max_fds))  # fmt: skip
        if grew > max_fds:
            found.failures.append(f"{what}: open file descriptors grew by {grew} "
                                  f"({baseline.open_fds} -> {after.open_fds}), bound {max_fds}")
    if baseline.temp_files is not None and after.temp_files is not None:
        grew = after.temp_files - baseline.temp_files
        found.measurements.append(measurement("temp_file_growth", grew, "count", bound=max_temp,
                                              ok=grew <= max_temp))  # fmt: skip
        if grew > max_temp:
            found.failures.append(f"{what}: files in watched temp dirs grew by {grew} "
                                  f"({baseline.temp_files} -> {after.temp_files}), "
                                  f"bound {max_temp}")  # fmt: skip
    return found
