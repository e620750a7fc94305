"""The work-after-cut bounds with controlled figures (no clock): a step cut may compute the
declared steps of the measured step time plus the measured noise, a queued cut a quarter of a
solo run; a measurement that cannot carry the verdict (CPU estimate dropped, zero-work noise
above the bound, a full run that could hide under it, a bound above the work left) is invalid,
never passed."""

from omniqual.checks.abort.bounds import CutVerdict, judge_cut
from omniqual.checks.abort.work import Boundary, WorkBaseline, WorkWindow

IDLE, BUSY = 0.05, 1.05  # CPU s per s: one core busy serving, a little polling when idle
# 0.8 s solo runs of 64 steps (12.5 ms a step) that spread by 40 ms; idle rate spread 0.02.
BASE = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.02, solo_spread_s=0.04)


def window(seconds: float, service_s: float, base: WorkBaseline = BASE) -> WorkWindow:
    """A window in which the server served ``service_s`` seconds (CPU time only)."""
    idle, busy = base.idle_cpu_rate or 0.0, base.busy_cpu_rate or 0.0
    cpu = idle * seconds + (busy - idle) * service_s
    return WorkWindow(seconds, cpu, None, 0.0, None)


def judge(queued: bool, win: WorkWindow, base: WorkBaseline = BASE, *, left_s: float,
          boundary: Boundary = Boundary.STEP, shared_s: float = 0.0,
          gauges_prove_stop: bool = False) -> CutVerdict:  # fmt: skip
    return judge_cut(queued, win, base, boundary, max_steps_after_cut=2,
                     max_queued_work_x_service=0.25, left_s=left_s, extra_executions=0.0,
                     gauges_prove_stop=gauges_prove_stop, shared_s=shared_s)  # fmt: skip


def test_a_step_row_that_ignores_a_late_cut_fails() -> None:
    # Cut at 85 %: 0.12 s left, all of it computed. Two steps are 25 ms; the measured noise
    # (5 % of them + 0.02 CPU/s over 0.62 s) is ~14 ms, so the bound is ~39 ms, not 0.2 s + 25 ms.
    verdict = judge(False, window(0.62, 0.12), left_s=0.12)
    assert verdict.ran_on_s is not None and abs(verdict.ran_on_s - 0.12) < 1e-9
    assert verdict.allowed_s < 0.04
    assert verdict.failure is not None
    assert verdict.failure.startswith("step execution: the cut request kept computing")


def test_a_step_cut_that_stops_within_two_steps_passes() -> None:
    verdict = judge(False, window(0.62, 0.02), left_s=0.12)
    assert (verdict.failure, verdict.invalid, verdict.limitation) == (None, None, None)


def test_a_request_row_that_runs_on_is_a_limitation() -> None:
    verdict = judge(False, window(0.62, 0.12), left_s=0.12, boundary=Boundary.REQUEST)
    assert verdict.failure is None and verdict.limitation is not None


def test_a_step_bound_not_below_the_work_left_is_invalid() -> None:
    # 8 steps of 0.1 s: two of them are more than the 0.12 s a late cut leaves.
    coarse = WorkBaseline(IDLE, BUSY, 0.8, 8, idle_rate_spread=0.02, solo_spread_s=0.04)
    verdict = judge(False, window(0.62, 0.12, coarse), coarse, left_s=0.12)
    assert verdict.failure is None
    assert verdict.invalid is not None and "could not be told from one it obeyed" in verdict.invalid


def test_a_queued_cut_is_allowed_a_quarter_of_a_solo_run_not_half() -> None:
    # 0.3 s of work after a queued cancel is 3/8 of the 0.8 s solo run: above the quarter.
    verdict = judge(True, window(1.3, 0.3), left_s=0.8)
    assert verdict.allowed_s == 0.2
    assert verdict.failure is not None and "queued work must never run" in verdict.failure


def test_a_queued_window_takes_off_the_peers_measured_tail() -> None:
    # 0.35 s served after the cancel, 0.3 s of it the peer finishing: 0.05 s is the queued job's.
    verdict = judge(True, window(1.6, 0.35), left_s=0.8, shared_s=0.3)
    assert verdict.ran_on_s is not None and abs(verdict.ran_on_s - 0.05) < 1e-9
    assert (verdict.failure, verdict.invalid) == (None, None)


def test_idle_noise_at_or_above_the_queued_bound_is_invalid() -> None:
    # The idle rate spreads by 0.16 CPU s/s: over 1.3 s that fakes 0.208 s of service, above
    # the 0.2 s bound, so a clean-looking window proves nothing and a busy one proves no run.
    noisy = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.16, solo_spread_s=0.04)
    for served in (0.0, 0.25):
        verdict = judge(True, window(1.3, served, noisy), noisy, left_s=0.8)
        assert verdict.failure is None
        assert verdict.invalid is not None
        assert verdict.invalid.startswith("the measured noise (0.208 s: idle CPU spread 0.208 s)")
        assert "cannot be told from noise" in verdict.invalid


def test_the_solo_spread_is_no_noise_on_a_queued_window_in_which_nothing_ran() -> None:
    # sd3-tiny on a 2-core host: solo runs spread by a quarter of a run, the idle rate by 0.02.
    # A window in which nothing ran idles within 0.026 s, far below the 0.2 s bound: judged.
    wide = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.02, solo_spread_s=0.2)
    clean = judge(True, window(1.3, 0.01, wide), wide, left_s=0.8, gauges_prove_stop=True)
    assert (clean.failure, clean.invalid) == (None, None)
    assert abs(clean.noise_s - 0.026) < 1e-9
    # The same host with a queued cancel ignored: the run, however short, stands above the bound.
    ran = judge(True, window(1.3, 0.8 - 0.2, wide), wide, left_s=0.8)
    assert ran.failure is not None and "queued work must never run" in ran.failure


def test_a_full_run_that_could_hide_under_the_queued_bound_is_invalid() -> None:
    # Solo runs spread by 0.58 s around 0.8 s: the shortest may be 0.22 s, which less the idle
    # noise is not above the 0.2 s bound, so a clean window cannot tell a run from none.
    wild = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.02, solo_spread_s=0.58)
    verdict = judge(True, window(1.3, 0.0, wild), wild, left_s=0.8, gauges_prove_stop=True)
    assert verdict.failure is None
    assert verdict.invalid is not None
    assert verdict.invalid.startswith("a queued request that ran in full would show 0.220 s")
    assert "cannot be told from noise" in verdict.invalid


def test_a_peer_tail_taken_off_adds_the_solo_spread_on_it() -> None:
    # A 0.6 s peer tail varies like any run (25 % here): 0.15 s of noise on top of the idle
    # CPU's 0.032 s is still below the 0.2 s bound; a 0.9 s tail (0.225 s) is not.
    wide = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.02, solo_spread_s=0.2)
    near = judge(True, window(1.6, 0.6, wide), wide, left_s=0.8, shared_s=0.6,
                 gauges_prove_stop=True)  # fmt: skip
    assert (near.failure, near.invalid) == (None, None)
    assert abs(near.noise_s - (0.032 + 0.15)) < 1e-9
    far = judge(True, window(1.6, 0.9, wide), wide, left_s=0.8, shared_s=0.9)
    assert far.invalid is not None and "solo spread on the 0.900 s peer tail" in far.invalid


def test_a_dropped_cpu_estimate_leaves_gauges_alone_and_is_invalid() -> None:
    # Serving burnt no more CPU per second than idling: the CPU estimate is dropped, and a clean
    # gauge window proves nothing.
    flat = WorkBaseline(0.5, 0.45, 0.8, 64, idle_rate_spread=0.02, solo_spread_s=0.04)
    win = WorkWindow(0.62, 0.5, 0.0, 0.0, None)
    verdict = judge(False, win, flat, left_s=0.12)
    assert verdict.failure is None
    assert verdict.invalid is not None
    assert "cannot tell serving from idling (0.450 CPU s/s serving" in verdict.invalid
    queued = judge(True, WorkWindow(1.3, 0.7, 0.0, 0.0, None), flat, left_s=0.8)
    assert queued.invalid is not None and "CPU estimate was dropped" in queued.invalid


def test_gauges_declared_proof_still_pass_without_cpu() -> None:
    win = WorkWindow(0.62, None, 0.0, 0.0, None)
    verdict = judge(False, win, left_s=0.12, gauges_prove_stop=True)
    assert (verdict.failure, verdict.invalid) == (None, None)


def test_without_a_measured_spread_nothing_is_judged() -> None:
    unmeasured = WorkBaseline(IDLE, BUSY, 0.8, 64, idle_rate_spread=0.02)
    verdict = judge(False, window(0.62, 0.0, unmeasured), unmeasured, left_s=0.12)
    assert verdict.invalid is not None and "fewer than two solo runs" in verdict.invalid
