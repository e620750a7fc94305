"""What CPU-time accounting can resolve bounds the abort gate's noise from below: each process's
user + system time counts in whole clock ticks, so one reading of the server's tree is off by up
to a tick per process, and the idle rate (taken over the idle window) by that much spread over
the idle window. The measured idle noise never goes below that floor; a queued bound below it
says so instead of being judged on noise the readings cannot show. The idle parts' spread that
their own ticks explain is a fixed error per reading, not a rate: it is not scaled with the
window (it was, and a 3.6 s queued-cancel window got ten times the ticks' error as noise)."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace

import pytest

from omniqual.checks.abort.bounds import CutVerdict, judge_cut
from omniqual.checks.abort.gate import _work_baseline
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.work import Boundary, WorkBaseline, WorkMeter, WorkWindow
from omniqual.deploy.observer import ObserverSample

IDLE, BUSY = 0.05, 1.05  # CPU s per s: one core busy serving, a little polling when idle
TICK = 0.01  # 100 Hz: USER_HZ on Linux


def _base(solo_s: float, spread: float, *, processes: int = 4, idle_s: float = 1.0,
          part_s: float = 1.0 / 3, solo_spread_s: float = 0.04) -> WorkBaseline:  # fmt: skip
    return WorkBaseline(IDLE, BUSY, solo_s, 64, idle_rate_spread=spread,
                        solo_spread_s=solo_spread_s, processes=processes, clock_tick_s=TICK,
                        idle_s=idle_s, idle_part_s=part_s)  # fmt: skip


def _window(seconds: float, service_s: float) -> WorkWindow:
    """A window in which the server served ``service_s`` seconds (CPU time only)."""
    return WorkWindow(seconds, IDLE * seconds + (BUSY - IDLE) * service_s, None, 0.0, None)


def _judge(queued: bool, win: WorkWindow, base: WorkBaseline, *, left_s: float,
           shared_s: float = 0.0) -> CutVerdict:  # fmt: skip
    return judge_cut(queued, win, base, Boundary.STEP, max_steps_after_cut=2,
                     max_queued_work_x_service=0.25, left_s=left_s, extra_executions=0.0,
                     gauges_prove_stop=False, shared_s=shared_s)  # fmt: skip


def test_idle_noise_is_never_below_what_cpu_time_accounting_can_resolve() -> None:
    # The idle ticks never moved in any part (spread 0), yet 4 processes read at 10 ms ticks
    # cannot resolve less than 40 ms of CPU on one reading: the floor. Over 1.3 s against an
    # idle rate taken over 1 s, the idle rate's own reading adds 40 ms x 1.3.
    base = _base(0.8, 0.0)
    assert base.cpu_resolution_s == pytest.approx(4 * TICK)
    assert base.cpu_noise_s(1.3) >= 4 * TICK / (BUSY - IDLE)
    assert base.cpu_noise_s(1.3) == pytest.approx(0.04 * (1 + 1.3 / 1.0))
    step = _judge(False, _window(0.62, 0.0), base, left_s=0.12)
    assert step.noise_s >= 4 * TICK / (BUSY - IDLE)


def test_a_queued_bound_below_the_resolution_says_so_rather_than_judge() -> None:
    # A 0.12 s solo run: the queued bound is 0.03 s, below the 40 ms one reading of 4
    # processes can be off by. Zero measured spread must not pass the window on no noise.
    base = _base(0.12, 0.0)
    verdict = _judge(True, _window(0.62, 0.0), base, left_s=0.12)
    assert verdict.failure is None
    assert verdict.invalid is not None
    assert verdict.invalid.startswith("the queued bound (0.030 s")
    assert "below what CPU-time accounting can resolve" in verdict.invalid
    assert "10 ms tick on each of 4 processes" in verdict.invalid


def test_the_ticks_in_the_idle_parts_spread_are_not_scaled_with_the_window() -> None:
    # The live queued-cancel case: a 1.48 s solo run (bound 0.37 s), idle parts of 1/3 s whose
    # rates spread by 0.164 CPU s/s, a 3.6 s window with a 1.5 s peer tail taken off. 4
    # processes at 10 ms let two 1/3 s parts differ by 0.24 CPU s/s with no change in the
    # rate: the spread is ticks. Scaled with the window as a rate it made 0.590 s of the
    # 0.69 s noise that was not below the 0.37 s bound.
    base = _base(1.48, 0.164, solo_spread_s=0.1)
    assert base.cpu_noise_s(3.6) == pytest.approx(0.04 * (1 + 3.6 / 1.0))
    clean = _judge(True, _window(3.6, 1.5), base, left_s=1.48, shared_s=1.5)
    assert (clean.failure, clean.invalid) == (None, None)
    assert clean.noise_s < 0.37
    ran = _judge(True, _window(3.6, 1.5 + 1.48), base, left_s=1.48, shared_s=1.5)
    assert ran.failure is not None and "queued work must never run" in ran.failure


def test_idle_rate_variation_beyond_the_ticks_still_grows_with_the_window() -> None:
    # 0.4 CPU s/s of spread between 1/3 s parts: 0.24 of it the ticks can make, 0.16 they
    # cannot. That much is the idle rate's own variation and counts over the whole window.
    base = _base(1.48, 0.4)
    assert base.cpu_noise_s(3.6) == pytest.approx(0.04 * (1 + 3.6) + 0.16 * 3.6)


class _Tree:
    """A server tree of 5 processes whose CPU time moves 10 ms a reading."""

    source = "process-tree"
    watch_dirs = ()

    def __init__(self) -> None:
        self.cpu = 100.0

    def open(self) -> None:
        return None

    def sample(self, started: float) -> ObserverSample:
        return ObserverSample(0.0, 0.0, processes=5, rss_bytes=0, pss_bytes=None,
                              uss_bytes=None, open_fds=None, threads=9, cpu_s=self.cpu)  # fmt: skip

    def cpu_seconds(self) -> float:
        self.cpu += 0.01
        return self.cpu


class _NoMetrics:
    async def send_raw(self, *_args: object, **_kw: object) -> SimpleNamespace:
        return SimpleNamespace(ok=False)


def test_the_baseline_records_the_trees_processes_and_the_clock_tick() -> None:
    tree = _Tree()

    async def complete_one() -> tuple[bool, str]:
        tree.cpu += 0.5
        return True, "ok"

    driver = SimpleNamespace(meter=WorkMeter(_NoMetrics(), tree, 0.02),  # type: ignore[arg-type]
                             solo_s=0.5, complete_one=complete_one)  # fmt: skip
    params = AbortParams(idle_window_s=0.2, calibration_repeats=2, work_poll_s=0.02)
    timed = [(8, 0.3), (16, 0.5)]  # the calibration's rounds: 25 ms a step, 0.1 s besides
    base = asyncio.run(_work_baseline(driver, params, 16, 0.05, timed))  # type: ignore[arg-type]
    assert base.split is not None and base.step_s == pytest.approx(0.025)
    assert base.outside_loop_s == pytest.approx(0.1)
    assert base.processes == 5
    assert base.clock_tick_s == pytest.approx(1.0 / os.sysconf("SC_CLK_TCK"))
    assert base.cpu_resolution_s == pytest.approx(5 * base.clock_tick_s)
    assert base.idle_s is not None and base.idle_s >= 0.2
    assert base.idle_part_s is not None and 0.1 <= base.idle_part_s <= base.idle_s / 2
