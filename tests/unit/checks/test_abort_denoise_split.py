"""A step row's cut is held to the next denoise step plus the request's work that is no step
(set-up, prompt encoding, decoding, tear-down), which no step boundary can cut short. The
calibration's solo runs at several step counts tell that fixed part from the steps; without
them every second counts as steps, as before."""

import pytest

from omniqual.checks.abort.bounds import judge_cut
from omniqual.checks.abort.work import Boundary, DenoiseSplit, WorkBaseline, WorkWindow

IDLE, BUSY = 0.12, 1.13  # as measured on qwen-image-tiny-step on a 2-core host
# The calibration seen there: 16, 124 and 176 steps took 0.186, 1.019 and 1.420 s.
TIMED = [(16, 0.186), (124, 1.019), (176, 1.420)]


def base(split: DenoiseSplit | None) -> WorkBaseline:
    return WorkBaseline(IDLE, BUSY, 1.42, 176, idle_rate_spread=0.02, solo_spread_s=0.07,
                        split=split)  # fmt: skip


def judged(b: WorkBaseline, service_s: float, left_s: float) -> tuple[str | None, str | None]:
    seconds = 1.75
    cpu = IDLE * seconds + (BUSY - IDLE) * service_s
    verdict = judge_cut(False, WorkWindow(seconds, cpu, None, 0.0, None), b, Boundary.STEP,
                        max_steps_after_cut=2, max_queued_work_x_service=0.25, left_s=left_s,
                        extra_executions=0.0, gauges_prove_stop=False)  # fmt: skip
    return verdict.failure, verdict.invalid


def test_the_fit_tells_the_steps_from_the_fixed_part() -> None:
    split = DenoiseSplit.fit(TIMED)
    assert split is not None
    assert split.step_s == pytest.approx(0.00771, abs=2e-4)
    assert split.fixed_s == pytest.approx(0.063, abs=0.01)


def test_no_fit_from_one_step_count_or_from_more_steps_taking_no_longer() -> None:
    assert DenoiseSplit.fit([(16, 0.2), (16, 0.21)]) is None
    assert DenoiseSplit.fit([(16, 0.3), (64, 0.2)]) is None
    # A negative intercept is noise: no fixed part, never below zero.
    split = DenoiseSplit.fit([(10, 0.09), (20, 0.2)])
    assert split is not None and split.fixed_s == 0.0


def test_work_besides_the_steps_is_not_a_missed_step_boundary() -> None:
    # Measured: an early cut was followed by 0.066 s of work, above the 0.065 s two steps and
    # the noise allow when every second of a solo run counts as steps.
    assert judged(base(None), 0.066, left_s=1.21)[0] is not None
    failure, invalid = judged(base(DenoiseSplit.fit(TIMED)), 0.066, left_s=1.21)
    assert failure is None and invalid is None


def test_an_ignored_cut_still_fails_with_the_fixed_part_allowed() -> None:
    # A middle cut the server ignored computes all 0.71 s it had left.
    failure, _ = judged(base(DenoiseSplit.fit(TIMED)), 0.71, left_s=0.71)
    assert failure is not None and "outside its steps" in failure


def test_a_fixed_part_as_long_as_the_work_left_cannot_judge() -> None:
    # Work besides the steps as long as a late cut's remaining work: obeyed and ignored look
    # alike.
    heavy = base(DenoiseSplit(0.006, 0.25))
    failure, invalid = judged(heavy, 0.2, left_s=0.21)
    assert failure is None and invalid is not None and "outside its steps" in invalid
