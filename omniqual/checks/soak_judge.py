"""Judging soak evidence: per phase (validity, errors, accounting, latency SLO at certifiable
percentiles, injected faults, async job terminal states) and across the run (memory slope with
CI, FD and temp-file growth, GPU memory of the server's own processes). Each function returns
``Findings``: failures, invalidity reasons and measurements; reasons name the phase, the metric,
the observed value and the bound. A resource signal that is absent (no memory figure, no or an
unreadable watch directory, NVML missing on a GPU row) makes the verdict ``invalid``, never a
pass: a check that could not look has not seen a clean server."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from omniqual.checks.load_binding import JobTrace
from omniqual.checks.soak_params import InjectionSpec, PhaseSpec, Reliability, Validity
from omniqual.checks.soak_phases import is_injected
from omniqual.checks.soak_watch import MIB, ResourcePoint, memory_trend
from omniqual.domain.evidence import Measurement
from omniqual.loadgen.records import LoadRun, RecordStatus
from omniqual.loadgen.stats import RunSummary, ValidityPolicy, summarize_run
from omniqual.loadgen.sufficiency import certify_slo


@dataclass(slots=True)
class Findings:
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)

    def extend(self, other: "Findings") -> None:
        self.failures += other.failures
        self.invalid += other.invalid
        self.measurements += other.measurements


@dataclass(frozen=True, slots=True)
class PhaseEvidence:
    spec: PhaseSpec
    offered_rps: float
    run: LoadRun
    jobs: tuple[JobTrace, ...]
    bound_s: float | None


def _m(name: str, value: float, unit: str, **kw: object) -> Measurement:
    return Measurement(name=name, value=round(value, 6), unit=unit, **kw)


def plain_summary(evidence: PhaseEvidence, validity: Validity) -> RunSummary:
    """Statistics over the plain (non-injected) requests; schedule fidelity over all of them."""
    run = evidence.run
    plain = tuple(r for r in run.records if not is_injected(r.entry))
    policy = ValidityPolicy(
        claimed_percentiles=evidence.spec.claimed_percentiles,
        confidence=validity.confidence,
        max_p99_issue_lag_s=validity.max_p99_issue_lag_s,
        min_issue_fidelity=validity.min_issue_fidelity,
    )
    return summarize_run(replace(run, records=plain), policy)


def judge_phase(evidence: PhaseEvidence, validity: Validity) -> tuple[Findings, RunSummary]:
    found = Findings()
    spec, run, name = evidence.spec, evidence.run, f"phase {evidence.spec.name}"
    summary = plain_summary(evidence, validity)
    found.invalid += [f"{name}: {r.code.value}: {r.detail}" for r in summary.validity.reasons]
    plain = [r for r in run.records if not is_injected(r.entry)]
    injected = [r for r in run.records if is_injected(r.entry)]
    if len(plain) < validity.min_phase_requests:
        found.invalid.append(
            f"{name}: {len(plain)} measured requests, policy minimum is "
            f"{validity.min_phase_requests} (a short burst is not a soak)"
        )
    hung = [r for r in run.records if r.status is RecordStatus.CANCELLED and r.sent_s is not None]
    if hung:
        found.failures.append(
            f"{name}: {len(hung)} request(s) had no terminal result before the phase deadline "
            f"({run.requested.deadline_s:.1f} s): requests {[r.index for r in hung[:5]]}"
        )
    bad = [r for r in plain if r.status in (RecordStatus.ERROR, RecordStatus.TIMEOUT)]
    issued = sum(1 for r in plain if r.sent_s is not None)
    rate = len(bad) / issued if issued else 0.0
    if rate > spec.max_error_rate:
        kinds = Counter(r.error_kind or r.status.value for r in bad).most_common(4)
        found.failures.append(
            f"{name}: error rate {rate:.1%} ({len(bad)}/{issued}) exceeds "
            f"{spec.max_error_rate:.1%}: " + ", ".join(f"{k} x{n}" for k, n in kinds)
        )
    aborted = sum(1 for r in injected if r.status is RecordStatus.ABORTED)
    missed = sum(1 for r in injected if r.status is RecordStatus.OK)
    broken = [r for r in injected if r.status in (RecordStatus.ERROR, RecordStatus.TIMEOUT)]
    if broken:
        kinds = Counter(r.error_kind or r.status.value for r in broken).most_common(3)
        found.failures.append(f"{name}: {len(broken)} injected fault(s) ended in an error: "
                              + ", ".join(f"{k} x{n}" for k, n in kinds))  # fmt: skip
    found.failures += _job_failures(name, evidence.jobs)
    found.extend(_slo(evidence, summary, len(bad), validity))
    rates = summary.rates
    found.measurements += [
        _m(f"{spec.name}.offered_rps", evidence.offered_rps, "1/s"),
        _m(f"{spec.name}.achieved_issue_rps", rates.achieved_issue, "1/s"),
        _m(f"{spec.name}.achieved_completion_rps", rates.achieved_completion, "1/s"),
        _m(f"{spec.name}.throughput_ok_rps", rates.throughput_ok, "1/s"),
        _m(f"{spec.name}.errors", len(bad), "count", samples=issued, bound=spec.max_error_rate,
           ok=rate <= spec.max_error_rate),
        _m(f"{spec.name}.injected_aborted", aborted, "count", samples=len(injected)),
        _m(f"{spec.name}.injected_answered_before_cut", missed, "count", samples=len(injected)),
    ]  # fmt: skip
    found.measurements += _server_times(spec.name, run)
    return found, summary


def client_limited(evidence: PhaseEvidence, summary: RunSummary, validity: Validity) -> str | None:
    """Why the phase's schedule fell behind on the client side, if it did: then latency from
    schedule holds the client's lateness too, and an SLO miss cannot be blamed on the server."""
    lag = evidence.run.effective.p99_issue_lag_s
    if lag is not None and lag > validity.max_p99_issue_lag_s:
        return (f"p99 issue lag {lag * 1e3:.1f} ms > {validity.max_p99_issue_lag_s * 1e3:.1f} ms")
    if summary.rates.issue_fidelity < validity.min_issue_fidelity:
        return (f"issue fidelity {summary.rates.issue_fidelity:.3f} < "
                f"{validity.min_issue_fidelity:g}")  # fmt: skip
    return None


def _slo(evidence: PhaseEvidence, summary: RunSummary, failures: int,
         validity: Validity) -> Findings:  # fmt: skip
    found = Findings()
    spec, bound = evidence.spec, evidence.bound_s
    latency = summary.latency_from_schedule
    for value in latency.percentiles:
        if value.value_s is None or not value.supported:
            continue  # unsupported claims are already invalidity reasons
        is_slo = value.percentile == spec.slo_percentile and bound is not None
        found.measurements.append(_m(
            f"{spec.name}.latency_p{value.percentile:g}_s", value.value_s, "s",
            samples=value.samples, bound=bound if is_slo else None,
            ok=(value.value_s <= bound) if is_slo and bound is not None else None,
        ))  # fmt: skip
    if spec.slo_percentile is None or bound is None:
        return found
    claim = latency.at(spec.slo_percentile)
    if not claim.supported or claim.value_s is None:
        return found
    oks = [r.latency_from_schedule_s for r in evidence.run.records
           if r.status is RecordStatus.OK and not is_injected(r.entry)]  # fmt: skip
    cert = certify_slo([v for v in oks if v is not None], spec.slo_percentile, bound,
                       failures=failures, confidence=claim.confidence)  # fmt: skip
    if cert.certified:
        return found
    what = (f"phase {spec.name}: p{spec.slo_percentile:g} latency from schedule "
            f"{claim.value_s:.3f} s (n={claim.samples}) vs SLO bound {bound:.3f} s: "
            f"{cert.overlatency} of {cert.samples} over the bound")  # fmt: skip
    behind = client_limited(evidence, summary, validity)
    if behind is not None:
        found.invalid.append(f"{what}; client-limited: the schedule had already fallen behind "
                             f"({behind}), so the miss is not attributable to the server")
    elif claim.value_s > bound:
        found.failures.append(what)
    else:
        found.invalid.append(f"{what}; certifying needs >= {cert.required} samples")
    return found


def judge_injections(runs: Sequence[LoadRun], spec: InjectionSpec) -> Findings:
    """Injected faults must have happened: one answered before its cut was no fault at all, so
    a soak whose injections mostly did not happen has not tested what it claims."""
    found = Findings()
    injected = [r for run in runs for r in run.records if is_injected(r.entry)]
    happened = sum(1 for r in injected if r.status is RecordStatus.ABORTED)
    answered = sum(1 for r in injected if r.status is RecordStatus.OK)
    found.measurements += [
        _m("injected_planned", len(injected), "count"),
        _m("injected_happened", happened, "count", samples=len(injected)),
        _m("injected_answered_before_cut", answered, "count", samples=len(injected)),
    ]
    if spec.rate <= 0:
        return found
    if not injected:
        found.invalid.append(f"injections: rate {spec.rate:g} but the mix drew no injected "
                             "request: no fault was tested")  # fmt: skip
    elif happened < spec.min_happened_fraction * len(injected):
        found.invalid.append(
            f"injections: only {happened} of {len(injected)} injected faults happened "
            f"({answered} answered before the cut), fewer than "
            f"{spec.min_happened_fraction:.0%}: the faults were not tested")
    return found


def _server_times(phase: str, run: LoadRun) -> list[Measurement]:
    """Mean server-reported inference time and the rest of the latency (queue + transport)."""
    pairs = [
        (dict(r.server_timings_s).get("inference"), r.latency_from_send_s)
        for r in run.records if r.status is RecordStatus.OK and not is_injected(r.entry)
    ]  # fmt: skip
    usable = [(inf, lat) for inf, lat in pairs if inf is not None and lat is not None]
    if not usable:
        return []
    service = sum(inf for inf, _ in usable) / len(usable)
    rest = sum(lat - inf for inf, lat in usable) / len(usable)
    return [
        _m(f"{phase}.server_inference_mean_s", service, "s", samples=len(usable)),
        _m(f"{phase}.queue_and_transport_mean_s", rest, "s", samples=len(usable)),
    ]


def _job_failures(name: str, jobs: Sequence[JobTrace]) -> list[str]:
    found: list[str] = []
    for job in jobs:
        if len(job.terminal_states) > 1:
            found.append(f"{name}: job {job.job_id} reported {len(job.terminal_states)} terminal "
                         f"states ({' then '.join(job.terminal_states)}); expected exactly one")
        if job.served_after_cancel:
            found.append(f"{name}: job {job.job_id} served content (HTTP 200) after DELETE "
                         f"answered {job.delete_status}")  # fmt: skip
        elif job.cancelled and "completed" in job.terminal_states:
            found.append(f"{name}: job {job.job_id} reached 'completed' after DELETE "
                         f"answered {job.delete_status}")  # fmt: skip
    return found


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
                     "target; set watch_dirs): temp-file residue cannot be counted")  # fmt: skip
    elif baseline.temp_files is None or after.temp_files is None:
        found.append(f"{what}: a watched directory is missing or unreadable "
                     f"({', '.join(map(str, watch_dirs))}): its files cannot be counted")
    if gpu_row(hardware) and not (baseline.nvml and after.nvml):
        found.append(f"{what}: NVML is unavailable on a GPU row (hardware {hardware}): GPU "
                     "memory cannot be measured")  # fmt: skip
    return found


def gpu_growth(baseline: ResourcePoint, after: ResourcePoint, bound_mib: float,
               what: str) -> Findings:  # fmt: skip
    """GPU memory of the server's own processes, back within ``bound_mib`` of the baseline;
    the device-wide growth is recorded beside it (on a shared device it is not the server's)."""
    found = Findings()
    if baseline.gpu_device_bytes is not None and after.gpu_device_bytes is not None:
        device = (after.gpu_device_bytes - baseline.gpu_device_bytes) / MIB
        found.measurements.append(_m("gpu_device_memory_growth_mib", device, "MiB"))
    if not (baseline.nvml and after.nvml) or after.gpu_device_bytes is None:
        return found
    if baseline.gpu_tree_bytes is None or after.gpu_tree_bytes is None:
        found.invalid.append(f"{what}: NVML did not attribute GPU memory to the server's "
                             "processes (no per-process usage): its GPU cleanup cannot be judged")
        return found
    grew = (after.gpu_tree_bytes - baseline.gpu_tree_bytes) / MIB
    found.measurements.append(_m("gpu_memory_growth_mib", grew, "MiB", bound=bound_mib,
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
    found.measurements.append(_m("gpu_memory_slope_mib_per_min", slope, "MiB/min",
                                 samples=trend.n, bound=bound, ok=high <= bound))  # fmt: skip
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
        found.measurements.append(_m("memory_slope_mib_per_min", slope, "MiB/min",
                                     samples=trend.n, bound=bound, ok=high <= bound))  # fmt: skip
        found.measurements.append(_m("memory_slope_ci_high_mib_per_min", high, "MiB/min"))
    found.extend(growth_findings(baseline, after, policy.max_fd_growth,
                                 policy.max_temp_file_growth, what))  # fmt: skip
    return found


def growth_findings(
    baseline: ResourcePoint, after: ResourcePoint, max_fds: int, max_temp: int, what: str
) -> Findings:
    found = Findings()
    if baseline.open_fds is not None and after.open_fds is not None:
        grew = after.open_fds - baseline.open_fds
        found.measurements.append(_m("open_fd_growth", grew, "count", bound=max_fds,
                                     ok=grew <= max_fds))  # fmt: skip
        if grew > max_fds:
            found.failures.append(f"{what}: open file descriptors grew by {grew} "
                                  f"({baseline.open_fds} -> {after.open_fds}), bound {max_fds}")
    if baseline.temp_files is not None and after.temp_files is not None:
        grew = after.temp_files - baseline.temp_files
        found.measurements.append(_m("temp_file_growth", grew, "count", bound=max_temp,
                                     ok=grew <= max_temp))  # fmt: skip
        if grew > max_temp:
            found.failures.append(f"{what}: files in watched temp dirs grew by {grew} "
                                  f"({baseline.temp_files} -> {after.temp_files}), "
                                  f"bound {max_temp}")  # fmt: skip
    return found
