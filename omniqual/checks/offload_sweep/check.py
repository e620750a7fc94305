"""The ``offload_sweep`` check kind: launch each declared offload point of the row's model with
the target's own launcher, one at a time, measure it the same way, hold its outputs to the
resident reference point, and publish every point with the latency–memory frontier.

Which points run depends on the row. On the reference point's row (the resident baseline) the
whole sweep runs. On a row that a point stands for (``params.rows``), the reference and that
point run, so the row's evidence is its own point's, and a row whose point refused, hung, or
changed the output is never validated by it. A row no point stands for is ``invalid``.

Outcome: ``failed`` when a point's output differs from the reference beyond tolerance, the
row's own point does not serve, a DLO point's log shows a silent fallback or direct mmap where
it must not run (:mod:`omniqual.checks.offload_sweep.loader_path`), or the resident reference,
launched again after a DLO point served, answers other output than the first time (DL-02);
``invalid`` when the reference cannot be measured or a served point's measurement is invalid
(too few repetitions, a missing memory series); else ``passed``.
Another point refusing (the default layerwise offload on a host without pinned memory) is
recorded with its message and changes nothing else.
"""

import json
from dataclasses import replace
from typing import ClassVar, Literal

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.checks.offload_sweep.frontier_block import sweep_block
from omniqual.checks.offload_sweep.loader_path import judge_loader, read_log, uses_dlo
from omniqual.checks.offload_sweep.measure import measure_point
from omniqual.checks.offload_sweep.params import OffloadSweepParams, Point, expand
from omniqual.checks.offload_sweep.points import (
    Parity,
    PointRecord,
    memory_unit,
    parity_of,
    point_recipe,
)
from omniqual.checks.offload_sweep.shared import SharedPoint, keep_point, measured_point, point_key
from omniqual.checks.parity.requests import ParityCase, parity_cases
from omniqual.deploy.observer import ProcessObserver, samples_to_csv
from omniqual.domain.contract import EndpointContract
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from omniqual.specs.contracts import contract_path, load_contract


class OffloadSweepCheck:
    kind: ClassVar[str] = "offload_sweep"
    params_model: ClassVar[type[CheckParams]] = OffloadSweepParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True  # latency and peak memory per point
    # Its start-ups keep the host: each point's time to ready is a measurement (``.startup``,
    # ``startup_s`` in the sweep block) and the row's own point fails when it is not ready
    # within ``startup_deadline_s``; a busy host moves both.
    shares_start_ups: ClassVar[bool] = False

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, OffloadSweepParams)
        base = ctx.target.recipe
        if base is None or ctx.serve_point is None:
            why = "offload-sweep needs a launch recipe and a launcher for its points"
            return CheckOutcome(GateOutcome.INVALID, (why,))
        endpoint = _endpoint(ctx, params)
        if isinstance(endpoint, str):
            return CheckOutcome(GateOutcome.INVALID, (endpoint,))
        chosen = _points_for_row(ctx, params)
        if isinstance(chosen, str):
            return CheckOutcome(GateOutcome.INVALID, (chosen,))
        points, own = chosen
        cases = parity_cases(params.requests, endpoint)
        records: dict[str, PointRecord] = {}
        artifacts: list[Artifact] = []
        shared_from: dict[str, str] = {}
        dlo_served = False
        for number, point in enumerate(points):
            recipe = point_recipe(base, point, params.startup_deadline_s)
            key = point_key(recipe, ctx.target.checkpoint_dir, params, cases)
            shared = measured_point(ctx.artifacts, key)
            if shared is None:
                ctx.progress(f"sweep point {point.name} ({number + 1}/{len(points)})",
                             number / len(points))  # fmt: skip
                record, kept = await _run_point(ctx, params, recipe=recipe, point=point,
                                                cases=cases)  # fmt: skip
                keep_point(ctx.artifacts, key, SharedPoint(record, tuple(kept), str(ctx.row)))
            else:
                # The same deployment, measured by another row's sweep in this run.
                record, kept = replace(shared.record, point=point), list(shared.artifacts)
                shared_from[point.name] = shared.measured_for
            artifacts += kept
            reference = records.get(params.reference)
            ref_measured = reference.measured if reference is not None else None
            if point.name != params.reference and ref_measured is not None and (
                    record.measured is not None and record.served):  # fmt: skip
                kinds = {c.id: c.kind for c in cases}
                parity = parity_of(ref_measured, record.measured, kinds, params.tolerance)
                record = _with_parity(record, parity)
            records[point.name] = record
            dlo_served = dlo_served or (record.served and uses_dlo(recipe.flags))
        again = None
        if dlo_served:
            again = await _reference_again(ctx, params, records, points, cases, artifacts)
        return _outcome(ctx, params, records, own, artifacts, shared_from, again)


async def _reference_again(
    ctx: CheckContext, params: OffloadSweepParams, records: dict[str, PointRecord],
    points: list[Point], cases: tuple[ParityCase, ...], artifacts: list[Artifact],
) -> Parity | str | None:  # fmt: skip
    """After a DLO point served, the resident reference launched again (DLO off, a fresh
    server) and held to its first outputs (DL-02); a string says why it could not be."""
    assert ctx.target.recipe is not None
    first = records.get(params.reference)
    if first is None or first.measured is None:
        return None  # nothing to hold it to: the reference's own invalidity says why
    point = next(p for p in points if p.name == params.reference)
    recipe = point_recipe(ctx.target.recipe, point, params.startup_deadline_s)
    recipe = recipe.model_copy(update={"id": f"{recipe.id}-again"})
    ctx.progress(f"sweep point {point.name} again, after the DLO points", None)
    record, kept = await _run_point(ctx, params, recipe=recipe, point=point, cases=cases)
    artifacts += kept
    if record.measured is None:
        return "the resident reference relaunched after the DLO points did not serve: " + (
            "; ".join(record.reasons()) or "no measurement")
    kinds = {c.id: c.kind for c in cases}
    return parity_of(first.measured, record.measured, kinds, params.tolerance)


def _endpoint(ctx: CheckContext, params: OffloadSweepParams) -> EndpointContract | str:
    model, api_mode = ctx.row.get("model"), ctx.row.get("api_mode")
    if not model:
        return "the row has no model axis value"
    path = contract_path(ctx.project_root / params.contracts_dir, model)
    if not path.is_file():
        return f"no contract for model {model!r}: {path}"
    found = next((e for e in load_contract(path).endpoints if e.api_mode == api_mode), None)
    return found or f"contract {path.name} declares no endpoint for api_mode {api_mode!r}"


def _points_for_row(
    ctx: CheckContext, params: OffloadSweepParams
) -> tuple[list[Point], str | None] | str:
    """The points to launch for this row (the reference first) and the row's own point."""
    every = list(expand(params.points))
    if params.model_points:
        chosen = params.model_points.get(ctx.row.get("model") or "")
        if chosen is None:
            return f"no sweep declared for model {ctx.row.get('model')!r} (params.model_points)"
        every = [p for p in every if p.spec in chosen]
    reference = next(p for p in every if p.name == params.reference)
    others = [p for p in every if p.name != params.reference]
    if not params.rows:
        return [reference, *others], None
    names = {p.name for p in every}
    standing = [name for name, axes in params.rows.items() if name in names
                and all(ctx.row.get(axis) == value for axis, value in axes.items())]  # fmt: skip
    if not standing:
        return f"no sweep point stands for row {ctx.row} (params.rows names {sorted(params.rows)})"
    own = standing[0]
    if own == params.reference:
        return [reference, *others], own
    return [reference, next(p for p in others if p.name == own)], own


async def _run_point(
    ctx: CheckContext, params: OffloadSweepParams, *, recipe: LaunchRecipe, point: Point,
    cases: tuple[ParityCase, ...],
) -> tuple[PointRecord, list[Artifact]]:  # fmt: skip
    assert ctx.serve_point is not None
    timeouts = Timeouts(params.request_timeout_s, params.job_timeout_s, params.poll_interval_s)
    async with ctx.serve_point(recipe) as launched:
        measured = loader = None
        if launched.target is not None and launched.make_client is not None:
            target = launched.target
            measured = await measure_point(
                launched.make_client, target.pid, cases, timeouts=timeouts, warmup=params.warmup,
                repetitions=params.repetitions,
                observe=lambda pid: ProcessObserver(pid, interval_s=params.observer_interval_s),
            )  # fmt: skip
            if uses_dlo(recipe.flags):
                # Which loader path the DLO start took, from its own log (G4-05, DL-07).
                loader = judge_loader(recipe.flags, read_log(target.log_path))
    record = PointRecord(point, launched.startup, measured, None, params.repetitions,
                         params.min_repetitions, loader)  # fmt: skip
    kept = [launched.log_artifact] if launched.log_artifact is not None else []
    kept += launched.configs
    if measured is not None and measured.series:
        # The raw memory series behind the point's peaks, kept beside its log.
        kept.append(ctx.artifacts.put_artifact(
            samples_to_csv(measured.series), media_type="text/csv", role="observer-series",
            name=f"{point.name} memory series",
        ))  # fmt: skip
    return record, kept


def _with_parity(record: PointRecord, parity: Parity) -> PointRecord:
    return replace(record, parity=parity)


def _outcome(
    ctx: CheckContext, params: OffloadSweepParams, records: dict[str, PointRecord],
    own: str | None, artifacts: list[Artifact], shared_from: dict[str, str],
    again: Parity | str | None = None,
) -> CheckOutcome:  # fmt: skip
    failures: list[str] = []
    invalid: list[str] = []
    if isinstance(again, str):
        invalid.append(again)
    elif again is not None and again.outcome == "failed":
        failures.append(f"the resident reference {params.reference!r} relaunched after the DLO "
                        "points answers other output than before: "
                        + "; ".join(again.findings[:3]))  # fmt: skip
    elif again is not None and again.outcome == "unavailable":
        invalid.append("the resident reference relaunched after the DLO points could not be "
                       f"compared: {'; '.join(again.findings)}")  # fmt: skip
    unit = memory_unit(records.values())
    reference = records[params.reference]
    if not reference.valid(unit):
        # A refused or hung reference too: nothing was held to it, so nothing passes.
        invalid.append(f"the reference point {params.reference!r} could not be measured: "
                       + "; ".join(reference.reasons(unit)))  # fmt: skip
    for name, record in records.items():
        loader = record.loader
        if record.served and loader is not None and loader.failure:
            failures.append(f"point {name!r}: {loader.failure}")
        elif record.served and loader is not None and loader.path == "unreadable":
            invalid.append(f"point {name!r}: DLO loader path not shown: {loader.detail}")
        if name == params.reference:
            continue
        if not record.served:
            if name == own:
                failures.append(f"the row's point {name!r} did not serve: {record.reasons()[0]}")
            continue  # another point's refusal or hang is recorded, not judged here
        invalid += [f"point {name!r}: {r}" for r in record.reasons(unit)]
        parity = record.parity
        if parity is not None and parity.outcome == "failed":
            failures.append(f"point {name!r}: output differs from the reference "
                            f"{params.reference!r}: " + "; ".join(parity.findings[:3]))  # fmt: skip
        elif parity is not None and parity.outcome == "unavailable" and reference.valid(unit):
            invalid.append(f"point {name!r}: parity unavailable ({'; '.join(parity.findings)})")
    block = sweep_block(records, params)
    artifacts.insert(0, ctx.artifacts.put_artifact(
        json.dumps(block, indent=2, sort_keys=True).encode("utf-8"),
        media_type="application/json", role="offload-sweep", name="offload sweep points",
    ))  # fmt: skip
    measurements = _measurements(records)
    again_json = again.as_json() if isinstance(again, Parity) else again
    return CheckOutcome(
        verdict(failures, invalid=invalid), tuple(failures or invalid),
        measurements=measurements, artifacts=tuple(artifacts),
        requested={"reference": params.reference, "points": list(records), "row_point": own,
                   "repetitions": params.repetitions, "warmup": params.warmup,
                   "tolerance": params.tolerance.model_dump(mode="json", exclude_none=True)},
        # A point another row's sweep measured in this run names that row (same deployment).
        effective={"sweep": block, "points_measured_for": dict(shared_from),
                   "reference_again": again_json},
    )  # fmt: skip


def _measurements(records: dict[str, PointRecord]) -> tuple[Measurement, ...]:
    out: list[Measurement] = []
    for name, record in records.items():
        m = record.measured
        out.append(Measurement(name=f"{name}.startup", value=record.startup.elapsed_s, unit="s"))
        if m is None:
            continue
        if m.median_s is not None:
            out.append(Measurement(name=f"{name}.latency_median", value=m.median_s, unit="s",
                                   samples=len(m.latencies_s)))  # fmt: skip
        for phase, memory in (("load", m.load), ("steady", m.steady)):
            if memory.peak_pss_bytes is not None:
                out.append(Measurement(name=f"{name}.peak_pss_{phase}",
                                       value=float(memory.peak_pss_bytes), unit="bytes",
                                       samples=memory.samples))  # fmt: skip
    return tuple(out)
