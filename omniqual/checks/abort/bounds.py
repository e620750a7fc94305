"""The abort boundary as a bound on measured work: how much service a cut may still take, and
whether one window's measurement is sharp enough to hold it to that.

Every bound is scaled to what the calibration measured, never to a fixed slack:

- a step-execution cut may compute ``max_steps_after_cut`` steps of the measured step time (the
  step in flight plus one for the abort to land) and the request's work that is no denoise
  step (set-up, prompt encoding, decoding, tear-down: a cut landing in a stage runs it out, and
  an aborted request is still torn down; the calibration's runs at several step counts tell it
  from the steps, ``DenoiseSplit``), plus the measured noise: the solo runs' relative spread
  on that work and the CPU the idle rate's spread can fake over the window;
- a queued cut may show at most ``max_queued_work_x_service`` of a solo run (anything above is
  work that ran). The window must tell "did not run" from "ran": its noise when nothing ran (the
  CPU the idle rate's spread can fake over the window, plus the solo runs' relative spread on a
  peer's tail taken off it) must lie below the bound, and a request that ran in full (at least
  the shortest solo run, bounded by the median less the solo runs' range) must stand above the
  bound by more than that noise.

The solo runs' spread is how much the work of a request varies on the host; it is noise only on
work that is there (steps after a cut, a peer's tail), never on a window in which nothing ran.

The CPU noise never goes below what CPU-time accounting can resolve (a clock tick per process
of the server's tree, on the window's reading and on the idle rate's); a queued bound below that
resolution is ``invalid`` for that stated reason, never judged on noise the readings cannot show.

A verdict the evidence cannot carry is ``invalid``: a queued window that cannot tell a run from
none (its bound below the CPU time's resolution, or its noise not below the bound), a step
bound not below the work the cut request had left (an ignored cut would pass), no usable CPU
estimate where gauges are not taken as proof, or no measured spread at all.
"""

from dataclasses import dataclass

from omniqual.checks.abort.work import Boundary, WorkBaseline, WorkWindow

GAUGES_PROVE_NOTHING = (
    "its gauges drop at abort whether or not the worker stops (seen on vLLM-Omni 0.30 in "
    "request mode)"
)


@dataclass(frozen=True, slots=True)
class CutVerdict:
    ran_on_s: float | None
    allowed_s: float
    noise_s: float
    failure: str | None = None
    limitation: str | None = None
    invalid: str | None = None


def _unproven(window: WorkWindow, base: WorkBaseline, gauges_prove_stop: bool) -> str | None:
    """Why a clean-looking window proves nothing, or None when its CPU estimate speaks."""
    if gauges_prove_stop or (window.cpu_s is not None and base.cpu_usable):
        return None
    if window.cpu_s is None:
        return ("no sign of work after the cut on /metrics, but without the server's CPU time "
                f"that proves nothing: {GAUGES_PROVE_NOTHING}")  # fmt: skip
    idle, busy = base.idle_cpu_rate, base.busy_cpu_rate
    rates = ("not measured" if idle is None or busy is None
             else f"{busy:.3f} CPU s/s serving one request alone, {idle:.3f} idle")  # fmt: skip
    return ("no sign of work after the cut on /metrics, and the server's CPU time cannot tell "
            f"serving from idling ({rates}), so the CPU estimate was dropped and the gauges "
            f"alone prove nothing: {GAUGES_PROVE_NOTHING}")  # fmt: skip


def _resolution(base: WorkBaseline) -> str:
    """Where the CPU time's resolution comes from, for a reason that names it."""
    tick, processes = base.clock_tick_s or 0.0, base.processes
    idle = f" and on the idle rate's over {base.idle_s:.2f} s of idle" if base.idle_s else ""
    return (f"a {tick * 1e3:g} ms tick on each of {processes} processes' user + system time, on "
            f"the window's reading{idle}")  # fmt: skip


def judge_cut(
    queued: bool, window: WorkWindow, base: WorkBaseline, boundary: Boundary, *,
    max_steps_after_cut: float, max_queued_work_x_service: float, left_s: float,
    extra_executions: float | None, gauges_prove_stop: bool, shared_s: float = 0.0,
) -> CutVerdict:  # fmt: skip
    """Hold one cut to its abort boundary. ``left_s``: the service the cut request had left at
    the cut (what an ignored cut would still compute); ``shared_s``: service in the window that
    belongs to a peer the case ran (measured, taken off); ``extra_executions``: finished
    executions beyond the peers (a cut request that is counted ran to its end)."""
    measured = base.ran_on_s(window)
    ran_on = None if measured is None else max(0.0, measured - shared_s)
    finished = extra_executions is not None and extra_executions >= 1
    seen = "" if ran_on is None else f"~{ran_on:.3f} s of work after the cut"
    if finished:
        seen += (", " if seen else "") + f"{extra_executions:g} extra finished execution(s)"
    if base.solo_spread_s is None:
        return CutVerdict(ran_on, 0.0, 0.0, invalid=(
            "the calibration timed fewer than two solo runs: no measured noise to hold the cut "
            "work to"))  # fmt: skip
    spread = base.solo_spread_s / base.solo_s if base.solo_s > 0 else 0.0
    cpu_noise = base.cpu_noise_s(window.seconds)
    resolution = base.resolution_s(window.seconds)
    if queued:
        bound = max_queued_work_x_service * base.solo_s
        # Zero-work noise: a peer's tail is work that varies like any run, the rest is idling.
        noise = cpu_noise + spread * shared_s
        floor = base.solo_s - base.solo_spread_s  # at most the shortest timed solo run
        if finished or (noise < bound and ran_on is not None and ran_on > bound):
            return CutVerdict(ran_on, bound, noise, failure=(
                f"a request cancelled while queued ran after its cancel ({seen}; bound "
                f"{max_queued_work_x_service:g} of a {base.solo_s:.3f} s solo run = {bound:.3f} s, "
                f"measured noise {noise:.3f} s): queued work must never run"))  # fmt: skip
        if resolution >= bound:
            return CutVerdict(ran_on, bound, noise, invalid=(
                f"the queued bound ({bound:.3f} s, {max_queued_work_x_service:g} of a "
                f"{base.solo_s:.3f} s solo run) is below what CPU-time accounting can resolve "
                f"over the {window.seconds:.2f} s window ({resolution:.3f} s: "
                f"{_resolution(base)}): queued work cannot be told from none"))  # fmt: skip
        if noise >= bound:
            tail = f" + {spread:.0%} solo spread on the {shared_s:.3f} s peer tail" if (
                shared_s) else ""  # fmt: skip
            resolved = f" + CPU-time resolution {resolution:.3f} s" if resolution else ""
            return CutVerdict(ran_on, bound, noise, invalid=(
                f"the measured noise ({noise:.3f} s: idle CPU spread "
                f"{cpu_noise - resolution:.3f} s{resolved}{tail}) is not below the queued bound "
                f"({bound:.3f} s): queued work cannot be told from noise"))  # fmt: skip
        if floor - noise <= bound:
            return CutVerdict(ran_on, bound, noise, invalid=(
                f"a queued request that ran in full would show {floor:.3f} s (the median solo "
                f"run less the runs' {base.solo_spread_s:.3f} s range) less {noise:.3f} s of "
                f"noise, not above the queued bound ({bound:.3f} s): queued work cannot be "
                "told from noise"))  # fmt: skip
        return CutVerdict(ran_on, bound, noise, invalid=_unproven(window, base, gauges_prove_stop))
    step_s = base.step_s if base.step_s is not None else 0.1 * base.solo_s
    outside = base.outside_loop_s
    steps_s = max_steps_after_cut * step_s + outside
    noise = spread * steps_s + cpu_noise
    allowed = steps_s + noise
    stages = f" + {outside:.4f} s of the request's work outside its steps" if outside else ""
    if finished or (ran_on is not None and ran_on > allowed):
        if boundary is Boundary.STEP:
            return CutVerdict(ran_on, allowed, noise, failure=(
                f"step execution: the cut request kept computing ({seen}); its abort boundary is "
                f"the next step: at most {max_steps_after_cut:g} step(s) of {step_s:.4f} s"
                f"{stages} + {noise:.4f} s measured noise = {allowed:.3f} s"))  # fmt: skip
        return CutVerdict(ran_on, allowed, noise, limitation=(
            f"request-level execution: cut work ran on after the cut ({seen}); in-denoise "
            "preemption is unavailable by design, the request is the abort boundary"))  # fmt: skip
    if allowed >= left_s:
        return CutVerdict(ran_on, allowed, noise, invalid=(
            f"the bound ({allowed:.3f} s: {max_steps_after_cut:g} step(s) of {step_s:.4f} s"
            f"{stages} + {noise:.4f} s measured noise) is not below the {left_s:.3f} s the cut "
            "request had left: a cut it ignored could not be told from one it obeyed"))  # fmt: skip
    return CutVerdict(ran_on, allowed, noise, invalid=_unproven(window, base, gauges_prove_stop))
