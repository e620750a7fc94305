"""The abort gate's calibration sizes the cut request to the host: longer until it takes
min_service_s, shorter (down to min_steps) past max_service_s, else as it is; the steps it
reports are the last ones it timed."""

import asyncio
from pathlib import Path

from omniqual.checks.abort.gate import _calibrate, _resized_steps
from omniqual.checks.abort.params import AbortParams
from omniqual.loadgen.workload import EndpointKind
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_serial import SerialFakeOmni

SIZED = AbortParams(min_service_s=0.6, max_service_s=3.0, min_steps=8)


def test_a_short_request_grows_until_it_takes_min_service() -> None:
    assert _resized_steps(16, 0.2, SIZED) == 58  # 16 * 0.6 / 0.2 * 1.2, rounded up
    assert _resized_steps(190, 0.2, SIZED) == 200  # capped at max_steps


def test_a_request_in_the_window_stays_as_it_is() -> None:
    assert _resized_steps(16, 1.4, SIZED) is None
    assert _resized_steps(None, 0.1, SIZED) is None


def test_a_slow_host_cuts_a_shorter_request_down_to_min_steps() -> None:
    assert _resized_steps(40, 6.0, SIZED) == 12  # 40 * 1.8 / 6.0, rounded down
    assert _resized_steps(16, 30.0, SIZED) == 8
    assert _resized_steps(8, 30.0, SIZED) is None  # already at min_steps: kept, not waited on


def test_without_max_service_a_long_request_is_kept() -> None:
    assert _resized_steps(16, 30.0, AbortParams()) is None


def test_a_calibration_cut_short_reports_the_steps_it_timed(tmp_path: Path) -> None:
    # A request that never reaches min_service_s grows for three rounds; the steps the judge
    # divides the solo run by are the last round's, not a resize that was never timed.
    server = SerialFakeOmni(FakeConfig(image_work_s=0.01, max_steps=10**7, temp_dir=tmp_path))
    ctx, _ = context("abort", "images-generations", fake=server)
    params = AbortParams(min_service_s=1.0, max_steps=10**7)

    async def calibrate() -> dict[str, object]:
        async with ctx.make_client() as client, ctx.make_client() as side:
            driver, problems, info = await _calibrate(ctx, params, EndpointKind.IMAGE, client,
                                                      side)  # fmt: skip
        assert driver is not None and not problems
        return info

    info = asyncio.run(calibrate())
    rounds = info["calibration"]
    assert isinstance(rounds, list) and len(rounds) == 3
    steps = [r["steps"] for r in rounds]
    assert steps == sorted(steps) and steps[0] == 16
    assert info["steps"] == steps[-1]
