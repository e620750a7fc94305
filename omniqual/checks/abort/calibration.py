"""The abort gate's calibration: the cut request is timed alone and resized to the host before
any cut, in up to ``ROUNDS`` rounds of timed solo runs.

A round's request grows until its solo run takes ``min_service_s`` (cuts land mid-denoise) and,
once two step counts were timed and their fit splits the run into steps and the work outside
them (``DenoiseSplit``), until the latest cut point leaves ``late_cut_headroom`` times that cut's
step bound: the steps a cut may still compute plus the work outside the steps, which an obeyed
cut may run out. Without that the late cut cannot tell an ignored cut from an obeyed one, and is
``invalid`` on every host whose request spends much of its time outside the steps. Past
``max_service_s`` it shrinks instead (a slow host cuts a shorter request), down to ``min_steps``.
"""

import math
import time

from omniqual.checks.abort.cases import AbortDriver, CallFactory
from omniqual.checks.abort.params import AbortParams
from omniqual.checks.abort.work import DenoiseSplit
from omniqual.checks.base import CheckContext
from omniqual.checks.load_binding import PATH_OF, wire_call
from omniqual.checks.soak.phases import solo_request
from omniqual.client import OmniClient
from omniqual.loadgen.workload import EndpointKind

ROUNDS = 5
"""Timed rounds at most. Three were not enough: on the stepwise qwen row a noisy second round
(1.06 s at 76 steps, its runs 0.41 s apart) sized a third that ran 0.997 s at 97 steps, short
of both min_service_s and the late cut's need, and the late cut was ``invalid``."""


def late_cut_service_s(split: DenoiseSplit | None, params: AbortParams) -> float:
    """The solo run the latest cut point needs: its work left at least ``late_cut_headroom``
    times its step bound (0 without a fit, or without a cut point)."""
    if split is None or not params.points:
        return 0.0
    left = 1.0 - max(params.points.values())
    if left <= 0:
        return 0.0
    bound = params.max_steps_after_cut * split.step_s + split.fixed_s
    return params.late_cut_headroom * bound / left


def resized_steps(steps: int | None, solo: float, params: AbortParams,
                  split: DenoiseSplit | None = None) -> int | None:  # fmt: skip
    """The steps the next calibration round tries, or None when ``solo`` is in the window:
    longer until ``min_service_s`` and the late cut's need (``late_cut_service_s``), shorter
    past ``max_service_s`` (a slow host cuts a shorter request; the cuts are timed from the
    calibrated solo run)."""
    if steps is None:
        return None
    longest = params.max_service_s
    if longest is not None and solo > longest and steps > params.min_steps:
        target = (params.min_service_s + longest) / 2
        return max(params.min_steps, math.floor(steps * target / solo))
    needed = max(params.min_service_s, late_cut_service_s(split, params))
    if longest is not None:
        needed = min(needed, longest)  # past it the late cut may stay undecided, as it says
    if solo >= needed or steps >= params.max_steps:
        return None
    aim = 1.1 * needed if longest is None else min(1.1 * needed, longest)
    if split is not None and aim > split.fixed_s:
        # The fit knows what a step costs: aim a tenth past the need (never past the longest a
        # run may take, which would shrink it again), not a fixed ratio.
        grown = math.ceil((aim - split.fixed_s) / split.step_s)
    else:
        grown = math.ceil(steps * needed / solo * 1.2)
    return min(params.max_steps, max(grown, steps + 1))


async def calibrate(
    ctx: CheckContext, params: AbortParams, endpoint: EndpointKind, client: OmniClient,
    side: OmniClient,
) -> tuple[AbortDriver | None, list[str], dict[str, object]]:  # fmt: skip
    """The driver timed on the calibrated request, or None with the reason a request failed;
    the info records every round (steps, median solo seconds, spread) and the last one timed."""
    shape = params.shape
    rounds: list[dict[str, float | int | None]] = []
    info: dict[str, object] = {}
    for _ in range(ROUNDS):
        calls = CallFactory(lambda seed, s=shape: wire_call(solo_request(s, endpoint, 0, seed)))
        driver = AbortDriver(client, side, params, endpoint, calls, 0.0)
        seen = []
        for _ in range(1 + params.calibration_repeats):  # the first one is warmup
            started = time.perf_counter()
            ok, what = await driver.complete_one()
            if not ok:
                return None, [f"calibration request on {PATH_OF[endpoint]} failed: {what}"], info
            seen.append(time.perf_counter() - started)
        timed = seen[1:]
        solo = sorted(timed)[len(timed) // 2]
        # The spread of the timed runs is the host's measured timing noise (the bounds use it).
        spread = max(timed) - min(timed) if len(timed) >= 2 else None
        rounds.append({"steps": shape.steps, "solo_s": solo, "solo_spread_s": spread})
        driver.solo_s = solo
        steps = resized_steps(shape.steps, solo, params, DenoiseSplit.fit(timed_steps(rounds)))
        if steps is None:
            break
        shape = shape.model_copy(update={"steps": steps})
    # The steps of the last round timed (a resize after the last round was never measured).
    info = {
        "calibration": rounds,
        "solo_s": driver.solo_s,
        "steps": rounds[-1]["steps"],
        "solo_spread_s": rounds[-1]["solo_spread_s"],
    }
    return driver, [], info


def timed_steps(rounds: object) -> list[tuple[int, float]]:
    """The calibration rounds' (steps, median solo seconds)."""
    found = []
    for r in rounds if isinstance(rounds, list) else ():
        steps, solo = r.get("steps"), r.get("solo_s")
        if isinstance(steps, int) and isinstance(solo, float):
            found.append((steps, solo))
    return found
