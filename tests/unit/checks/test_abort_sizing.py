"""The abort gate's calibration sizes the cut request to the host: longer until it takes
min_service_s and, once its fit splits a run into steps and the work outside them, until the
late cut leaves late_cut_headroom times its step bound; shorter (down to min_steps) past
max_service_s, else as it is; the steps it reports are the last ones it timed."""

import asyncio
from pathlib import Path

from omniqual.checks.abort.calibration import ROUNDS, calibrate, late_cut_service_s, resized_steps
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.work import DenoiseSplit
from omniqual.loadgen.workload import EndpointKind
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_serial import SerialFakeOmni

SIZED = AbortParams(min_service_s=0.6, max_service_s=3.0, min_steps=8)
# sd3-tiny at 64x64 as CI measured it: 7.9 ms a step, 0.197 s outside the steps.
SD3 = DenoiseSplit(step_s=0.0079, fixed_s=0.197)


def test_a_short_request_grows_until_it_takes_min_service() -> None:
    assert resized_steps(16, 0.2, SIZED) == 58  # 16 * 0.6 / 0.2 * 1.2, rounded up
    assert resized_steps(190, 0.2, SIZED) == 200  # capped at max_steps


def test_a_request_in_the_window_stays_as_it_is() -> None:
    assert resized_steps(16, 1.4, SIZED) is None
    assert resized_steps(None, 0.1, SIZED) is None


def test_a_slow_host_cuts_a_shorter_request_down_to_min_steps() -> None:
    assert resized_steps(40, 6.0, SIZED) == 12  # 40 * 1.8 / 6.0, rounded down
    assert resized_steps(16, 30.0, SIZED) == 8
    assert resized_steps(8, 30.0, SIZED) is None  # already at min_steps: kept, not waited on


def test_without_max_service_a_long_request_is_kept() -> None:
    assert resized_steps(16, 30.0, AbortParams()) is None


def test_a_calibration_cut_short_reports_the_steps_it_timed(tmp_path: Path) -> None:
    # A request that never reaches min_service_s grows for every round; the steps the judge
    # divides the solo run by are the last round's, not a resize that was never timed.
    server = SerialFakeOmni(FakeConfig(image_work_s=0.01, max_steps=10**9, temp_dir=tmp_path))
    ctx, _ = context("abort", "images-generations", fake=server)
    params = AbortParams(min_service_s=1.0, max_steps=10**9)

    async def calibrated() -> dict[str, object]:
        async with ctx.make_client() as client, ctx.make_client() as side:
            driver, problems, info = await calibrate(ctx, params, EndpointKind.IMAGE, client,
                                                      side)  # fmt: skip
        assert driver is not None and not problems
        return info

    info = asyncio.run(calibrated())
    rounds = info["calibration"]
    assert isinstance(rounds, list) and 2 <= len(rounds) <= ROUNDS == 5
    # It grew every round until the rounds ran out or it reached max_steps.
    assert len(rounds) == ROUNDS or rounds[-1]["steps"] == params.max_steps
    steps = [r["steps"] for r in rounds]
    assert steps == sorted(steps) and steps[0] == 16
    assert info["steps"] == steps[-1]


def test_the_late_cut_needs_twice_its_bound_left() -> None:
    # Late at 0.75: (2 * 0.0079 + 0.197) * 2.0 / 0.25 = 1.70 s; the shipped 0.85 needed 2.84 s.
    params = AbortParams(points={"late": 0.75})
    assert abs(late_cut_service_s(SD3, params) - 1.7024) < 1e-3
    assert late_cut_service_s(None, params) == 0.0
    assert late_cut_service_s(SD3, AbortParams(points={})) == 0.0


def test_a_request_long_enough_for_min_service_grows_for_its_late_cut() -> None:
    params = AbortParams(min_service_s=1.2, max_service_s=3.0, max_steps=400, points={"late": 0.75})
    # CI's 1.29 s run (138 steps) passed min_service_s but left its late cut undecidable.
    assert resized_steps(138, 1.29, params) is None  # no fit yet: min_service_s alone
    grown = resized_steps(138, 1.29, params, SD3)
    assert grown == 213  # (1.1 * 1.7024 - 0.197) / 0.0079, rounded up
    assert resized_steps(grown, 1.87, params, SD3) is None  # long enough: kept
    assert resized_steps(138, 1.29, params.model_copy(update={"max_steps": 200}), SD3) == 200


def test_the_late_cut_never_grows_a_request_past_max_service() -> None:
    heavy = DenoiseSplit(step_s=0.02, fixed_s=0.5)  # needs 2 * 0.54 / 0.25 = 4.3 s
    params = AbortParams(min_service_s=1.2, max_service_s=3.0, points={"late": 0.75})
    grown = resized_steps(40, 1.3, params, heavy)
    assert grown == 125  # (3.0 - 0.5) / 0.02: aimed at the cap, not past it
    assert resized_steps(grown, 3.0, params, heavy) is None  # at the cap: kept as it is


def test_a_fit_that_says_fewer_steps_still_grows_the_request() -> None:
    params = AbortParams(min_service_s=1.2, points={"late": 0.75})
    assert resized_steps(100, 1.0, params, DenoiseSplit(step_s=0.1, fixed_s=0.0)) == 101
