"""The measuring host around a perf run: its readings, and what they let the baseline do (see
:mod:`omniqual.loadgen.host_speed`).

Only a server on the measuring host (launched by omniqual, or given by pid) is probed, and only
on a CPU row: the reference workload then runs on the same CPUs as the server. A baseline set
that way records its reference workload and the hypervisor steal it saw. A run whose host reads
slower or faster than that is still judged, its interval widened by the host's term
(:func:`host_ratio`); what keeps the baseline from judging (:func:`host_reason`) is a host that
changed speed during the run, more steal than the baseline saw, or readings that cannot be set
against each other: a baseline without that reading, or one set on a probed host judging a
server elsewhere, cannot tell a slower host from a slower build.
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

from omniqual.checks.perf.params import PerfParams
from omniqual.deploy.observer import tree_cpu_seconds
from omniqual.loadgen.host_speed import (
    CpuTimes,
    HostRatio,
    HostSpeed,
    steal_reason,
    unsteady_reason,
)
from omniqual.specs.perf_baseline import PerfBaseline

NOT_PROBED = "host speed not probed"
OTHER_CPU = "baseline set on another CPU class"
SHARED = "host shared"


def own_cpu_seconds() -> float:
    """User + system CPU seconds of this process and the children it waited for (the capped
    reference workload runs in one)."""
    times = psutil.Process().cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def tolerance(params: PerfParams, baseline: PerfBaseline | None) -> float:
    if params.host_speed_tolerance is not None:
        return params.host_speed_tolerance
    return baseline.threshold if baseline is not None else 0.10


@dataclass
class HostReadings:
    """The host speed readings of one run, across its launches (server on this host only).

    Steal is counted over each launch's measurement (from its first reading to the end of its
    repetitions), never over the start-ups between them: a baseline's steal was read over its
    repetitions alone, and a start-up loads every core as no repetition does."""

    probe: Callable[[], float]
    cpu_times: Callable[[], CpuTimes]
    settle_s: float
    cpu_class: str | None = None
    server_pid: int | None = None
    """The server being measured (its tree's CPU time is its own, not a neighbour's)."""
    tree_cpu: Callable[[int], float | None] = tree_cpu_seconds
    own_cpu: Callable[[], float] = lambda: own_cpu_seconds()
    readings: list[float] = field(default_factory=list)
    window: CpuTimes | None = None
    spent: float = 0.0
    stolen: float = 0.0
    windows: int = 0
    others: float | None = 0.0
    """CPU seconds neither the server's tree nor this process took (None once unreadable)."""
    _mine: tuple[float, float] | None = None

    async def read(self, into: list[float]) -> None:
        """One reading, once the server's workers are idle, kept in the run's and in ``into``
        (its launch's). Blocking on purpose (~0.1 s): no request is in flight, and the probe
        must not share the CPU with this process's own event loop work."""
        if self.window is None:
            self.window = self.cpu_times()
            self._mine = self._ours()
        await asyncio.sleep(self.settle_s)
        value = self.probe()
        self.readings.append(value)
        into.append(value)

    def close(self) -> None:
        """The end of one launch's measurement: its CPU time and steal are counted."""
        if self.window is None:
            return
        now, mine = self.cpu_times(), self._ours()
        if self.others is not None and mine is not None and self._mine is not None:
            ours = (mine[0] - self._mine[0]) + (mine[1] - self._mine[1])
            self.others += max(0.0, now.busy - self.window.busy - ours)
        else:
            self.others = None
        self.spent += now.total - self.window.total
        self.stolen += max(0.0, now.steal - self.window.steal)
        self.windows += 1
        self.window = None

    def _ours(self) -> tuple[float, float] | None:
        """CPU seconds of the server's tree and of this process (its probes included)."""
        tree = self.tree_cpu(self.server_pid) if self.server_pid is not None else None
        return None if tree is None else (tree, self.own_cpu())

    def finish(self) -> HostSpeed | None:
        self.close()
        if not self.windows or len(self.readings) < 2:
            return None
        share = (self.others / self.spent if self.others is not None and self.spent > 0
                 else None)  # fmt: skip
        return HostSpeed.of(self.readings, self.stolen / self.spent if self.spent > 0 else 0.0,
                            self.cpu_class, share)  # fmt: skip


def _comparable(speed_workload: str, baseline: PerfBaseline) -> bool:
    return (baseline.evidence.host_probe_s is not None
            and baseline.evidence.host_probe_workload == speed_workload)  # fmt: skip


def host_ratio(readings: list[float], workload: str, baseline: PerfBaseline | None,
               per_run: int) -> HostRatio | None:  # fmt: skip
    """This run's host against the baseline's, when both were read with the same reference
    workload (else None: :func:`host_reason` says why that judges nothing)."""
    if baseline is None or len(readings) < 2 or not _comparable(workload, baseline):
        return None
    recorded = baseline.evidence.host_probe_s
    assert recorded is not None
    launch_probes = [x.host_probe_s for x in baseline.evidence.launches if x.host_probe_s]
    return HostRatio.of(readings, recorded, launch_probes, per_run)


def cpu_class_reason(speed: HostSpeed, baseline: PerfBaseline) -> str | None:
    """Why a probed baseline cannot judge a run on this CPU class, or None: across classes the
    server's libraries pick other kernels, which the reference workload does not see
    (:mod:`omniqual.loadgen.cpu_class`)."""
    theirs, mine = baseline.evidence.host_cpu_class, speed.cpu_class
    if theirs is not None and theirs == mine:
        return None
    fix = ("set one on this class of host with `omniqual perf baseline update` (it is kept "
           "beside the others)")
    if theirs is None:
        return (f"{OTHER_CPU}: the baseline does not record the CPU class it was set on, this "
                f"host is {mine or 'of an unknown class'}; {fix}")
    return f"{OTHER_CPU}: the baseline was set on {theirs}, this host is {mine or 'unknown'}; {fix}"


def shared_reason(speed: HostSpeed, allowed: float) -> str | None:
    """Why the host was shared during the repetitions, or None: other processes of this guest
    (idle servers of other launches, a user's jobs) took CPU time the server would have had,
    which neither the reference workload (read between repetitions) nor steal shows. Measured
    here: an unchanged server ran 21 % slower beside four idle servers while both read as
    when its baseline was set."""
    share = speed.others_fraction
    if share is None or share <= allowed:
        return None
    return (f"{SHARED}: processes other than the server and the measurement took {share:.1%} "
            f"of the host's CPU time during the repetitions (tolerance {allowed:.0%}); measure "
            "with the host to the server alone")


def host_reason(speed: HostSpeed | None, baseline: PerfBaseline | None,
                params: PerfParams) -> str | None:  # fmt: skip
    """Why the host keeps the baseline from judging this run, or None (it may judge; a host
    steadily slower or faster than the baseline's widens the interval instead)."""
    allowed = tolerance(params, baseline)
    if speed is not None and (shared := shared_reason(speed, params.shared_tolerance)):
        return shared
    if baseline is None:
        return unsteady_reason(speed, allowed, params.steal_tolerance) if speed else None
    recorded = baseline.evidence.host_probe_s
    if speed is None:
        if recorded is None:
            return None  # neither side on a probed host (a remote target and its baseline)
        return (f"{NOT_PROBED}: the baseline was set with the server on the measuring host, "
                "this run's server is not on this host")
    if recorded is None:
        return (f"{NOT_PROBED} when the baseline was set: it cannot tell a slower host from a "
                "slower build (re-set it with `omniqual perf baseline update`)")
    if not _comparable(speed.workload, baseline):
        return (f"{NOT_PROBED} with this run's reference workload when the baseline was set "
                f"(it timed {baseline.evidence.host_probe_workload or 'an unnamed one'}, this "
                f"run {speed.workload}): re-set it with `omniqual perf baseline update`")
    if (foreign := cpu_class_reason(speed, baseline)) is not None:
        return foreign
    # A host that changed speed under the run: one ratio to the baseline's reading cannot
    # describe which launches ran at which speed, so no term can stand for it.
    if (unsteady := unsteady_reason(speed, allowed, 1.0)) is not None:
        return unsteady
    return steal_reason(speed, baseline.evidence.host_steal_fraction, params.steal_tolerance)
