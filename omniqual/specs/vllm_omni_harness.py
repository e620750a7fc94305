"""What vLLM-Omni's diffusion perf harness accepts, held against a perf config before it is used:
the task names its resolver knows, the endpoint each task family resolves to, real media for an
image-conditioned task, and a pre-serialized ``extra_params`` in a video case's ``extra-body``.

The tables are the harness's at the target revision as the production skill records them
(``benchmarks/diffusion/backends.py`` and ``tests/dfx/perf/scripts/run_diffusion_benchmark.py``):
the resolver takes ``t2i, i2i, ti2i`` (image family: ``/v1/chat/completions`` by default, or
``/v1/images/generations``) and ``t2v, i2v, ti2v`` (video family: ``/v1/videos``); it rejects
``v2v``. Returned as (field path, message) pairs; :mod:`omniqual.specs.vllm_omni_perf` locates
them in the file.
"""

import json
from collections.abc import Mapping

from pydantic import JsonValue

IMAGE_TASKS = ("t2i", "i2i", "ti2i")
VIDEO_TASKS = ("t2v", "i2v", "ti2v")
CONDITIONED_TASKS = ("i2i", "ti2i", "i2v", "ti2v")
"""Tasks whose requests carry an image: without one the run is a t2x run labelled i2x (BS-04)."""
ENDPOINTS: Mapping[str, tuple[str, ...]] = {
    "image": ("/v1/chat/completions", "/v1/images/generations"),
    "video": ("/v1/videos",),
}
"""Per task family, the endpoints the harness serves it through; the first is its default."""
LEGACY_ENDPOINTS: Mapping[str, str] = {
    "vllm-omni": "/v1/chat/completions",
    "openai": "/v1/images/generations",
}
MEDIA_DATASETS = ("vbench", "trace")
"""Datasets that bring their own images (``random`` only does with ``num-input-images``)."""

Problem = tuple[str, str]


def normalize_endpoint(value: str) -> str:
    """The harness's spelling: a legacy backend name mapped, a leading ``/`` optional."""
    stripped = value.strip()
    if stripped in LEGACY_ENDPOINTS:
        return LEGACY_ENDPOINTS[stripped]
    return stripped if stripped.startswith("/") else f"/{stripped}"


def _family(task: str) -> str | None:
    return "image" if task in IMAGE_TASKS else "video" if task in VIDEO_TASKS else None


def entry_problems(test: Mapping[str, JsonValue], index: int) -> list[Problem]:
    """Every way one test entry of the config (already typed) asks what the harness refuses."""
    problems: list[Problem] = []
    key = next((k for k in ("benchmark_endpoint", "benchmark_backend") if k in test), None)
    raw = test.get(key) if key else None
    endpoint = normalize_endpoint(raw) if isinstance(raw, str) else None
    cases = test.get("benchmark_params")
    for at, case in enumerate(cases if isinstance(cases, list) else []):
        if isinstance(case, dict):
            where = f"{index}.benchmark_params.{at}"
            problems += _case_problems(case, where, endpoint, f"{index}.{key}")
    return problems


def _case_problems(
    case: Mapping[str, JsonValue], where: str, endpoint: str | None, endpoint_at: str
) -> list[Problem]:
    task = str(case.get("task", "t2i"))
    family = _family(task)
    if family is None:
        known = ", ".join((*IMAGE_TASKS, *VIDEO_TASKS))
        why = " (the harness's resolver rejects v2v)" if task == "v2v" else ""
        return [(f"{where}.task", f"task {task!r} is not one the harness resolves ({known})"
                 f"{why}")]  # fmt: skip
    problems: list[Problem] = []
    if endpoint is not None and endpoint not in ENDPOINTS[family]:
        problems.append((endpoint_at, f"endpoint {endpoint!r} does not serve task {task!r} "
                         f"(its family is served by {', '.join(ENDPOINTS[family])})"))  # fmt: skip
    if task in CONDITIONED_TASKS and not _carries_media(case):
        problems.append((f"{where}.dataset", f"task {task!r} needs real input images: dataset "
                         f"{case.get('dataset', 'random')!r} without dataset-path or "
                         "num-input-images gets placeholder images, a text-only run labelled "
                         f"{task}"))  # fmt: skip
    if "extra-body" in case:
        problem = _extra_body_problem(case["extra-body"], family)
        if problem:
            problems.append((f"{where}.extra-body", problem))
    return problems


def _carries_media(case: Mapping[str, JsonValue]) -> bool:
    images = case.get("num-input-images")
    has_images = isinstance(images, int) and not isinstance(images, bool) and images > 0
    return bool(case.get("dataset-path")) or has_images or case.get("dataset") in MEDIA_DATASETS


def _extra_body_problem(value: JsonValue, family: str) -> str | None:
    body = value
    if isinstance(value, str):
        try:
            body = json.loads(value)
        except ValueError:
            body = None
    if not isinstance(body, dict):
        return "extra-body must be a JSON object"
    nested = body.get("extra_params")
    if family == "video" and isinstance(nested, dict | list):
        # The video backend stringifies each multipart value: a nested object arrives as its
        # Python repr, which the server cannot parse as the task's parameters.
        return ("extra_params must be a JSON string in a video case (pre-serialize it: "
                "'{\"extra_params\": \"{\\\"task\\\": ...}\"}'), the video backend "
                "stringifies each multipart value")  # fmt: skip
    return None
