"""Whether the measuring host let the baseline judge a perf run (see
:mod:`omniqual.loadgen.host_speed`).

Only a server on the measuring host (launched by omniqual, or given by pid) is probed: the
reference workload then runs on the same CPUs as the server. A baseline set that way records its
reference workload and the hypervisor steal it saw, and judges only a run whose host was within
the tolerance of both and steady during the run. A baseline without that reading, or one set on
a probed host judging a server elsewhere, cannot tell a slower host from a slower build: the run
is invalid.
"""

from omniqual.checks.perf.params import PerfParams
from omniqual.loadgen.host_speed import HostSpeed, drift_reason, unsteady_reason
from omniqual.specs.perf_baseline import PerfBaseline

NOT_PROBED = "host speed not probed"


def tolerance(params: PerfParams, baseline: PerfBaseline | None) -> float:
    if params.host_speed_tolerance is not None:
        return params.host_speed_tolerance
    return baseline.threshold if baseline is not None else 0.10


def host_reason(speed: HostSpeed | None, baseline: PerfBaseline | None,
                params: PerfParams) -> str | None:  # fmt: skip
    """Why the host keeps the baseline from judging this run, or None (it may judge)."""
    allowed = tolerance(params, baseline)
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
    if baseline.evidence.host_probe_workload != speed.workload:
        return (f"{NOT_PROBED} with this run's reference workload when the baseline was set "
                f"(it timed {baseline.evidence.host_probe_workload or 'an unnamed one'}, this "
                f"run {speed.workload}): re-set it with `omniqual perf baseline update`")
    return drift_reason(speed, recorded, baseline.evidence.host_steal_fraction, allowed,
                        params.steal_tolerance)
