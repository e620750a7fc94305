"""The abort gate's calibration sizes the cut request to the host: longer until it takes
min_service_s, shorter (down to min_steps) past max_service_s, else as it is."""

from omniqual.checks.abort.gate import _resized_steps
from omniqual.checks.abort.params import AbortParams

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
