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

A host that reads slower or faster than when the baseline was set does not stop the baseline
from judging: :class:`HostRatio` is the ratio of the two readings with its own interval, which
the comparison takes as a term of its own (:mod:`omniqual.loadgen.regression`), counting only a
host beyond what the baseline's own launches were read on. A host that changed speed during the
measurement, or that the hypervisor stole more CPU time from than the baseline saw, is another
matter (:func:`unsteady_reason`, :func:`steal_reason`): one ratio cannot describe the first, and
the second hits the server's requests between the readings.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import psutil

from omniqual.loadgen.trend import student_t_quantile

CHANGED_DURING = "host speed changed during the measurement"
CONTENDED = "host contended"
DIFFERS = "the host's reference workload"
"""How a comparison names a host that read slower or faster than the baseline's (a term of the
interval, never a reason on its own)."""
MEDIAN_SE = math.sqrt(math.pi / 2)
"""The standard error of a median over that of a mean (normal readings): readings are summed up
by their median, so that one neighbour's burst does not move them."""

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


OPENBLAS_CORE_OF_CAP: dict[str, str] = {"avx2": "Haswell"}
"""The OpenBLAS kernel family that computes as a server capped to an ISA class does
(``ATEN_CPU_CAPABILITY``): the probe must read the speed of what the server runs, and on an
AVX512 or AMX host an uncapped probe reads ~45 % faster than its AVX2-capped server works."""


def capped_reference_workload(caps: Mapping[str, str]) -> Callable[[], float]:
    """The reference workload timed in a child process under ``caps`` (the server's ISA caps,
    OpenBLAS held to the same class); the plain in-process workload where no cap applies.

    A child, because OpenBLAS reads its kernel family once, when it loads."""
    core = OPENBLAS_CORE_OF_CAP.get(caps.get("ATEN_CPU_CAPABILITY", "").lower())
    if core is None:
        return reference_workload_s
    env = {**os.environ, **caps, "OPENBLAS_CORETYPE": core, "OPENBLAS_NUM_THREADS": "1"}
    code = "from omniqual.loadgen.host_speed import reference_workload_s as w; print(w())"

    def probe() -> float:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True, timeout=120)  # fmt: skip
        return float(done.stdout.strip())

    return probe


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """System-wide CPU seconds: all of them, and those stolen by the hypervisor."""

    total: float
    steal: float
    busy: float = 0.0
    """Seconds some process or the kernel ran (not idle, not waiting on I/O, not stolen)."""

    @classmethod
    def now(cls) -> CpuTimes:
        times = psutil.cpu_times()
        total, steal = sum(times), float(getattr(times, "steal", 0.0))
        idle = times.idle + float(getattr(times, "iowait", 0.0))
        return cls(total=total, steal=steal, busy=total - idle - steal)

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
    cpu_class: str | None = None
    """The host's CPU class (:mod:`omniqual.loadgen.cpu_class`): the readings stand for the
    server only against a baseline read on the same one."""
    others_fraction: float | None = None
    """The share of the host's CPU time that processes other than the server's tree and the
    measuring process took during the repetitions (None: the server's tree was not readable)."""

    @classmethod
    def of(cls, readings: Sequence[float], steal_fraction: float, cpu_class: str | None = None,
           others_fraction: float | None = None) -> HostSpeed:  # fmt: skip
        if len(readings) < 2:
            raise ValueError(f"a host speed needs a reading before and after, got {len(readings)}")
        half = len(readings) // 2
        return cls(statistics.median(readings[:half]), statistics.median(readings[half:]),
                   steal_fraction, readings=tuple(readings), cpu_class=cpu_class,
                   others_fraction=others_fraction)  # fmt: skip

    @property
    def probe_s(self) -> float:
        if self.readings:
            return statistics.median(self.readings)
        return (self.probe_before_s + self.probe_after_s) / 2

    def as_json(self) -> dict[str, float | str | list[float] | None]:
        return {"probe_before_s": self.probe_before_s, "probe_after_s": self.probe_after_s,
                "probe_s": self.probe_s, "steal_fraction": self.steal_fraction,
                "workload": self.workload, "readings": list(self.readings),
                "cpu_class": self.cpu_class, "others_fraction": self.others_fraction}  # fmt: skip


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


def steal_reason(speed: HostSpeed, baseline_steal: float | None,
                 steal_tolerance: float) -> str | None:  # fmt: skip
    """Why the hypervisor's steal keeps the baseline from judging, or None.

    Steal is read against the baseline's own (a host the baseline was set on with some steal
    stays comparable), and a few percent of it matter: on a 2-vCPU guest, 8 % steal came with
    latencies a third longer than on the same guest without it. It stays a veto where a host's
    speed does not: the readings are taken between repetitions, while steal lands on the
    requests themselves, unevenly, and nothing bounds how much of it they took."""
    if speed.steal_fraction - (baseline_steal or 0.0) > steal_tolerance:
        return _contended(speed, baseline_steal or 0.0, steal_tolerance)
    return None


@dataclass(frozen=True, slots=True)
class HostRatio:
    """This run's host against the baseline's: the ratio of their reference workloads (above 1:
    slower here), the standard error of its logarithm and that error's degrees of freedom (None:
    no spread on either side)."""

    ratio: float
    log_se: float
    df: int | None

    @classmethod
    def of(cls, readings: Sequence[float], baseline_probe_s: float,
           baseline_launch_probes: Sequence[float], per_run: int) -> HostRatio:  # fmt: skip
        """The run's ``readings`` (their median) against ``baseline_probe_s`` (the median of
        the baseline's launches' readings, ``baseline_launch_probes`` where known).

        The error holds the run's own readings' (their median's) and, with two or more of the
        baseline's launch readings, how far those differed from launch to launch, as the mean
        of ``per_run`` new launches would from them: a host read as the baseline's launches
        were is one of theirs, and their launch spread already holds what it did to them (the
        committed CPU baseline's nine launch readings spread 6 %, uncorrelated with its launch
        means). A baseline without launch readings counts as exact."""
        if len(readings) < 2 or baseline_probe_s <= 0 or min(readings) <= 0:
            raise ValueError("a host ratio needs two positive readings and the baseline's")
        logs = [math.log(r) for r in readings]
        run_var = (MEDIAN_SE * statistics.stdev(logs)) ** 2 / len(logs)
        terms = [(run_var, len(logs) - 1)]
        known = [math.log(p) for p in baseline_launch_probes if p > 0]
        if len(known) >= 2:
            terms.append((statistics.variance(known) * (1 / per_run + 1 / len(known)),
                          len(known) - 1))  # fmt: skip
        total = sum(v for v, _ in terms)
        denominator = sum(v**2 / df for v, df in terms)
        df = None if denominator == 0 else max(1, math.floor(total**2 / denominator))
        ratio = statistics.median(readings) / baseline_probe_s
        return cls(ratio, math.sqrt(total), df)

    def interval(self, confidence: float) -> tuple[float, float]:
        """The ratio's two-sided ``confidence`` interval."""
        if self.df is None:
            return self.ratio, self.ratio
        half = student_t_quantile((1 + confidence) / 2, self.df) * self.log_se
        return self.ratio * math.exp(-half), self.ratio * math.exp(half)

    def differs(self, confidence: float) -> bool:
        """Whether the host is beyond its readings' noise of the baseline's at ``confidence``."""
        low, high = self.interval(confidence)
        return low > 1.0 or high < 1.0

    def bounds(self, confidence: float) -> tuple[float, float]:
        """The factor the host may have put on the server: from none (1) to all that its ratio
        may be at ``confidence``."""
        low, high = self.interval(confidence)
        return min(1.0, low), max(1.0, high)

    def effect(self, confidence: float) -> tuple[float, float]:
        """:meth:`bounds` for a host that differs at ``confidence``; (1, 1) for one that does
        not."""
        return self.bounds(confidence) if self.differs(confidence) else (1.0, 1.0)


def _contended(speed: HostSpeed, baseline_steal: float | None, allowed: float) -> str:
    against = ("" if baseline_steal is None else
               f" against {baseline_steal:.1%} when the baseline was set")  # fmt: skip
    more = "" if baseline_steal is None else " more"
    return (f"{CONTENDED}: the hypervisor stole {speed.steal_fraction:.1%} of CPU time during "
            f"the measurement{against} (tolerance {allowed:.0%}{more})")
