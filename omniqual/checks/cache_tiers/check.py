"""The ``cache_tiers`` check kind: sweep a row's cache configuration against its lossless
baseline and publish the speed/quality frontier, the tier mapping and where the cache engages.

The lossless baseline (the row's recipe without its cache flags) and then each declared point
(the same recipe with ``--cache-backend``/``--cache-config`` set and the cache summary logged) are
launched one at a time with the target's launcher and measured the same way
(:mod:`omniqual.checks.cache_tiers.work`). Per point: fixed-work latency, the worst PSNR/SSIM of
its outputs against the lossless ones (the parity metrics), and its cache hits from the log.

Outcome:

* ``failed`` when an alternation shows a leaked policy: a point's request after another is not
  its own first answer, or its uncached request at the changed step count is not the lossless
  output (held to ``restore``);
* ``invalid`` when the lossless baseline does not serve or a request fails, or no point is shown
  active (no cache hits read from its log: such a point is ``inactive``, never a speedup);
* else ``passed``, with the frontier, the mapping and the plot.
"""

import json
import math
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.checks.cache_tiers.params import LOSSLESS, CacheTiersParams
from omniqual.checks.cache_tiers.plot import frontier_svg
from omniqual.checks.cache_tiers.recipes import lossless_recipe, point_recipe
from omniqual.checks.cache_tiers.tiers import TierPoint, frontier, mapping
from omniqual.checks.cache_tiers.work import Ask, LaunchRun, ask_image, measure_launch
from omniqual.checks.load_binding import endpoint_for
from omniqual.compare import MediaDecodeError
from omniqual.compare.image import compare_image_bytes
from omniqual.compare.tolerance import ParityTolerance, judge
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.loadgen.workload import EndpointKind

Restore = Callable[[bytes, bytes], tuple[str, ...]]


class CacheTiersCheck:
    kind: ClassVar[str] = "cache_tiers"
    params_model: ClassVar[type[CheckParams]] = CacheTiersParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # fixed-work latency per point
    # Its point launches may start beside other groups' work: latency, PSNR/SSIM and cache hits
    # are all taken after readiness with the host held, and of a start-up only whether it
    # served is used (its seconds only in a refusal's reason); no start-up memory is read.
    shares_start_ups: ClassVar[bool] = True

    def __init__(self, ask: Ask = ask_image) -> None:
        self.ask = ask

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, CacheTiersParams)
        endpoint = endpoint_for(ctx.row.get("api_mode"))
        base = ctx.target.recipe
        if endpoint is None or endpoint is not EndpointKind.IMAGE or base is None or (
                ctx.serve_point is None):  # fmt: skip
            why = "cache-tiers needs an image row, its launch recipe and a launcher for points"
            return CheckOutcome(GateOutcome.INVALID, (why,))
        recipes = [(LOSSLESS, lossless_recipe(base, params))]
        recipes += [(p.name, point_recipe(base, params, p)) for p in params.points]
        runs: dict[str, LaunchRun | str] = {}
        logs: list[Artifact] = []
        for number, (name, recipe) in enumerate(recipes):
            ctx.progress(f"cache-tiers: {name} ({number + 1}/{len(recipes)})",
                         number / len(recipes))  # fmt: skip
            runs[name] = await self._launch(ctx, params, endpoint, recipe, logs)
            if name == LOSSLESS and isinstance(runs[name], str):
                break
        return outcome(ctx, params, runs, logs)

    async def _launch(self, ctx: CheckContext, params: CacheTiersParams, endpoint: EndpointKind,
                      recipe: LaunchRecipe, logs: list[Artifact]) -> LaunchRun | str:  # fmt: skip
        assert ctx.serve_point is not None
        async with ctx.serve_point(recipe) as launched:
            if launched.make_client is None or launched.target is None:
                s = launched.startup
                found: LaunchRun | str = f"did not serve: {s.reason} after {s.elapsed_s:.1f} s"
            else:
                found = await measure_launch(launched.make_client, launched.target.log_path,
                                             params, endpoint, self.ask)  # fmt: skip
        if launched.log_artifact is not None:
            logs.append(launched.log_artifact)
        return found


def _quality(reference: LaunchRun, run: LaunchRun) -> tuple[float | None, float | None, list[str]]:
    psnrs, ssims, problems = [], [], []
    for seed, image in reference.outputs.items():
        other = run.outputs.get(seed)
        if other is None:
            problems.append(f"seed {seed}: no output to compare")
            continue
        try:
            c = compare_image_bytes(image, other)
        except MediaDecodeError as exc:
            problems.append(f"seed {seed}: undecodable output: {exc}")
            continue
        psnrs.append(c.psnr_db if c.psnr_db is not None else -math.inf)
        ssims.append(c.ssim if c.ssim is not None else -1.0)
    return (min(psnrs) if psnrs else None), (min(ssims) if ssims else None), problems


def _restore(params: CacheTiersParams, a: bytes | None, b: bytes | None) -> tuple[str, ...]:
    if a is None or b is None:
        return ("no output to compare",)
    tolerance = ParityTolerance(rationale="restore", image=params.restore)
    return judge(compare_image_bytes(a, b), tolerance)


def outcome(ctx: CheckContext, params: CacheTiersParams, runs: dict[str, LaunchRun | str],
            logs: list[Artifact]) -> CheckOutcome:  # fmt: skip
    failures: list[str] = []
    invalid: list[str] = []
    reference = runs[LOSSLESS]
    if isinstance(reference, str):
        return CheckOutcome(GateOutcome.INVALID, (f"the lossless baseline {reference}",),
                            artifacts=tuple(logs))  # fmt: skip
    table: list[dict[str, Any]] = []
    judged: list[TierPoint] = []
    for name, run in runs.items():
        row: dict[str, Any] = {"name": name, "settings": _settings(params, name)}
        table.append(row)
        if isinstance(run, str):
            row.update(status="refused", why=run)
            continue
        invalid += [f"{name}: {p}" for p in run.problems]
        psnr, ssim, problems = _quality(reference, run)
        invalid += [f"{name}: {p}" for p in problems]
        spread = (min(run.latencies_s), max(run.latencies_s)) if run.latencies_s else None
        mean = sum(run.latencies_s) / len(run.latencies_s) if run.latencies_s else None
        steps = sorted({s for h in run.hits if h is not None for s in h.steps})
        diffs = next((h.diffs for h in run.hits if h is not None and h.diffs), ())
        active = name == LOSSLESS or bool(run.cached)
        row.update(latency_s=mean, latency_range=spread, psnr_db=_finite(psnr), ssim=ssim,
                   identical=psnr is not None and math.isinf(psnr), cached_steps=run.cached,
                   cached_step_indices=steps, first_cached_step=steps[0] if steps else None,
                   residual_diffs=list(diffs), active=active,
                   status="lossless" if name == LOSSLESS else "active" if active else
                   "inactive" if run.cached == 0 else "unproven")  # fmt: skip
        if name != LOSSLESS:
            again = _restore(params, run.outputs.get(params.seeds[0]), run.again)
            failures += [
                f"{name}: leaked policy: the request after a {params.alternate_steps}"
                f"-step one differs from its own first answer: {f}"
                for f in again
            ]
            if run.middle_hits is not None and run.middle_hits.cached == 0:
                middle = _restore(params, reference.middle, run.middle)
                failures += [
                    f"{name}: leaked policy: an uncached {params.alternate_steps}-step "
                    f"request differs from the lossless output: {f}"
                    for f in middle
                ]
            row["alternation"] = {"again": list(again), "middle_cached": None if
                                  run.middle_hits is None else run.middle_hits.cached}  # fmt: skip
        if active and mean is not None and spread is not None:
            judged.append(TierPoint(name, mean, spread, psnr, ssim))
    if not any(r.get("status") == "active" for r in table):
        invalid.append("no cache point was shown active (no cache hits in its log): "
                       + "; ".join(f"{r['name']} {r.get('status')} (cached steps "
                                   f"{r.get('cached_steps')})" for r in table[1:]))  # fmt: skip
    front = frontier(judged, params.quality_resolution) if judged else ()
    tiers = mapping(judged, front, params.tiers) if judged else {}
    block = {"points": table, "frontier": list(front), "tiers": tiers,
             "engages": _engages(table), "steps": params.steps,
             "alternate_steps": params.alternate_steps}  # fmt: skip
    put = ctx.artifacts.put_artifact
    artifacts = [put(json.dumps(block, indent=1).encode(), media_type="application/json",
                     role="summary", name="cache-tiers.json"),
                 put(frontier_svg(table, front), media_type="image/svg+xml", role="plot",
                     name="cache-tiers frontier.svg"), *logs]  # fmt: skip
    measurements = [Measurement(name=f"{r['name']}.latency_mean", value=r["latency_s"], unit="s",
                                samples=params.repetitions)
                    for r in table if r.get("latency_s") is not None]  # fmt: skip
    reasons = failures or invalid
    return CheckOutcome(verdict(failures, invalid=invalid), tuple(reasons), tuple(measurements),
                        tuple(artifacts),
                        requested={"points": [p.name for p in params.points],
                                   "tiers": [t.name for t in params.tiers],
                                   "steps": params.steps, "repetitions": params.repetitions},
                        effective={"cache_tiers": json.loads(json.dumps(block))})  # fmt: skip


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isinf(value) else value


def _settings(params: CacheTiersParams, name: str) -> dict[str, Any]:
    point = next((p for p in params.points if p.name == name), None)
    return {} if point is None else {"backend": params.backend, **point.cache_config}


def _engages(table: list[dict[str, Any]]) -> str:
    active = [r for r in table if r.get("status") == "active"]
    if not active:
        return "the cache never engaged at these settings and sizes"
    return "; ".join(f"{r['name']} ({r['settings']}): first cached step "
                     f"{r['first_cached_step']}, {r['cached_steps']} cached steps"
                     for r in active)  # fmt: skip
