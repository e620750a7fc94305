"""How fast the measuring host is right now, so that measurements taken on it at different times
are only compared when the host itself did not change speed.

A server's latency on a shared host moves with the host: a neighbour on the same physical
machine, hypervisor steal, a slower instance of the "same" hardware class. Compared against a
baseline set on another day, that shift reads as a regression of the build. Two readings tell
the two apart, both taken in the measuring process while the server (on this host) is idle:

* the **reference workload** (:data:`REFERENCE_WORKLOAD`): a fixed float32 matrix product and
  ``tanh`` (the same BLAS and vector units the server's kernels use), timed several times; its
  median in seconds. The matrices are small enough that BLAS keeps it on one thread: a
  multi-threaded reading waits for its slowest thread, so any thread on the other core (the
  server's own workers still spinning after a request) moved it by up to 2x while the server's
  latency held within a few percent. On a steady 2-core host it repeats within a few percent; a
  slower host or a busy neighbour moves it with the server. A baseline records which workload
  its reading is of: another one's seconds are not comparable.
* the **steal fraction**: the share of all CPU time the hypervisor gave to other guests over an
  interval (``/proc/stat`` steal through psutil; 0 where the platform does not report it).

:func:`drift_reason` reads them against the baseline's reference workload.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import psutil

CHANGED_DURING = "host speed changed during the measurement"
CONTENDED = "host contended"
DIFFERS = "host speed differs from the baseline's"

_SIDE = 64
"""Below OpenBLAS's threading threshold (a 72-wide product already uses a second thread)."""
_ROUNDS = 400
REFERENCE_WORKLOAD = f"float32 matmul {_SIDE}x{_SIDE} + tanh, x{_ROUNDS}, one thread"
"""What :func:`reference_workload_s` times; a reading of another workload is not comparable."""
SETTLE_S = 0.5
"""Idle time before a reading: a server's worker threads keep spinning briefly after a
request, and the reading must not share the CPUs with them."""


def reference_workload_s(repeats: int = 15) -> float:
    """The median wall time of the fixed reference workload (one untimed warm-up first)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((_SIDE, _SIDE), dtype=np.float32)
    b = rng.standard_normal((_SIDE, _SIDE), dtype=np.float32)

    def once() -> float:
        started = time.perf_counter()
        for _ in range(_ROUNDS):
            np.tanh(a @ b)
        return time.perf_counter() - started

    once()
    return statistics.median(once() for _ in range(repeats))


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """System-wide CPU seconds: all of them, and those stolen by the hypervisor."""

    total: float
    steal: float

    @classmethod
    def now(cls) -> CpuTimes:
        times = psutil.cpu_times()
        return cls(total=sum(times), steal=float(getattr(times, "steal", 0.0)))

    def steal_fraction_since(self, earlier: CpuTimes) -> float:
        spent = self.total - earlier.total
        return max(0.0, self.steal - earlier.steal) / spent if spent > 0 else 0.0


@dataclass(frozen=True, slots=True)
class HostSpeed:
    """The host readings of one measurement: the reference workload in its first and second
    half, and the steal fraction during it."""

    probe_before_s: float
    """The reference workload in the first half of the measurement (the median of its readings
    there)."""
    probe_after_s: float
    """... and in the second half."""
    steal_fraction: float
    workload: str = REFERENCE_WORKLOAD
    readings: tuple[float, ...] = ()
    """Every reading, in order: one before the measured work and one after each part of it.
    A single short reading catches a neighbour's burst as often as the host's speed: spread
    over the measurement, their medians read the host the work ran on."""

    @classmethod
    def of(cls, readings: Sequence[float], steal_fraction: float) -> HostSpeed:
        if len(readings) < 2:
            raise ValueError(f"a host speed needs a reading before and after, got {len(readings)}")
        half = len(readings) // 2
        return cls(statistics.median(readings[:half]), statistics.median(readings[half:]),
                   steal_fraction, readings=tuple(readings))  # fmt: skip

    @property
    def probe_s(self) -> float:
        if self.readings:
            return statistics.median(self.readings)
        return (self.probe_before_s + self.probe_after_s) / 2

    def as_json(self) -> dict[str, float | str | list[float]]:
        return {"probe_before_s": self.probe_before_s, "probe_after_s": self.probe_after_s,
                "probe_s": self.probe_s, "steal_fraction": self.steal_fraction,
                "workload": self.workload, "readings": list(self.readings)}  # fmt: skip


def unsteady_reason(speed: HostSpeed, tolerance: float, steal_tolerance: float) -> str | None:
    """Why the host was not steady during the measurement itself, or None: the reference
    workload moved by more than ``tolerance``, or steal took more than ``steal_tolerance`` of
    the CPU time."""
    moved = speed.probe_after_s / speed.probe_before_s - 1
    if abs(moved) > tolerance:
        return (f"{CHANGED_DURING}: the reference workload took "
                f"{speed.probe_before_s * 1e3:.1f} ms in the first half of the measurement and "
                f"{speed.probe_after_s * 1e3:.1f} ms in the second ({moved:+.0%}, tolerance "
                f"{tolerance:.0%})")  # fmt: skip
    if speed.steal_fraction > steal_tolerance:
        return _contended(speed, None, steal_tolerance)
    return None


def drift_reason(speed: HostSpeed, baseline_probe_s: float, baseline_steal: float | None,
                 tolerance: float, steal_tolerance: float) -> str | None:  # fmt: skip
    """Why this host's speed does not let the baseline judge the measurement, or None.

    Steal is read against the baseline's own (a host the baseline was set on with some steal
    stays comparable), and a few percent of it matter: on a 2-vCPU guest, 8 % steal came with
    latencies a third longer than on the same guest without it."""
    if (unsteady := unsteady_reason(speed, tolerance, 1.0)) is not None:
        return unsteady
    for when, value in (("first", speed.probe_before_s), ("second", speed.probe_after_s)):
        moved = value / baseline_probe_s - 1
        if abs(moved) > tolerance:
            return (f"{DIFFERS}: the reference workload took "
                    f"{value * 1e3:.1f} ms in the {when} half of the measurement against "
                    f"{baseline_probe_s * 1e3:.1f} ms when the baseline was set ({moved:+.0%}, "
                    f"tolerance {tolerance:.0%})")  # fmt: skip
    if speed.steal_fraction - (baseline_steal or 0.0) > steal_tolerance:
        return _contended(speed, baseline_steal or 0.0, steal_tolerance)
    return None


def _contended(speed: HostSpeed, baseline_steal: float | None, allowed: float) -> str:
    against = ("" if baseline_steal is None else
               f" against {baseline_steal:.1%} when the baseline was set")  # fmt: skip
    more = "" if baseline_steal is None else " more"
    return (f"{CONTENDED}: the hypervisor stole {speed.steal_fraction:.1%} of CPU time during "
            f"the measurement{against} (tolerance {allowed:.0%}{more})")
