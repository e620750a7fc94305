"""The perf gate's work read from a vLLM-Omni perf config (one of its benchmark cases), and the
result-template fields a run writes either way.

A case's ``width``/``height``/``num-frames``/``num-inference-steps`` become the one shape,
``num-prompts`` the requests per repetition, ``max-concurrency`` the concurrency and
``request-rate`` (when given) the open-loop arrival rate. Its absolute ``baseline`` numbers are
recorded, not judged (see :mod:`omniqual.specs.vllm_omni_perf`).
"""

from typing import Any

from omniqual.checks.base import CheckContext
from omniqual.checks.perf.params import PerfParams
from omniqual.checks.perf.record import build_url, row_template_fields
from omniqual.checks.soak.params import ShapeSpec
from omniqual.specs.vllm_omni_perf import BenchmarkCase, load_perf_config, select_case
from omniqual.specs.vllm_omni_perf import template_fields as upstream_fields


def params_from_case(params: PerfParams, case: BenchmarkCase) -> PerfParams:
    shape = ShapeSpec(name="case", width=case.width, height=case.height,
                      num_frames=case.num_frames, steps=case.num_inference_steps)  # fmt: skip
    return params.model_copy(update={
        "shapes": (shape,), "requests": case.num_prompts, "concurrency": case.max_concurrency,
        "arrival_rps": case.request_rate,
    })  # fmt: skip


def apply_config(params: PerfParams, ctx: CheckContext) -> tuple[PerfParams, dict[str, Any]]:
    """The params the run uses and the template fields its result carries."""
    commit = ctx.provenance.vllm_omni_commit if ctx.provenance is not None else None
    if params.vllm_omni_config is None:
        return params, row_template_fields(ctx.row, params, commit)
    tests = load_perf_config(ctx.project_root / params.vllm_omni_config)
    test, case = select_case(tests, params.vllm_omni_case)
    fields = upstream_fields(test, case, hardware=ctx.row.get("hardware") or "",
                             commit_sha=commit, build_url=build_url())  # fmt: skip
    return params_from_case(params, case), dict(fields)
