"""vLLM-Omni's perf-runner config (a JSON list of tests, each with ``server_params`` and a list
of ``benchmark_params`` cases carrying an absolute ``baseline``), read as input to the perf gate,
and the fields of its diffusion result template that a perf result carries.

Only the keys the perf gate uses are typed; the runner's other keys are kept as given, and the
whole entry is held to what the harness accepts (:mod:`omniqual.specs.vllm_omni_harness`). Its
``baseline`` numbers are recorded beside omniqual's verdict but never judge: a single number
without a spread cannot separate a regression from night-to-night noise.
"""

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from omniqual.specs.source import SpecError, SpecProblem
from omniqual.specs.vllm_omni_harness import entry_problems


class _Upstream(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class BenchmarkCase(_Upstream):
    name: str
    dataset: str = "random"
    task: str = "t2i"
    width: int | None = Field(default=None, gt=0)
    height: int | None = Field(default=None, gt=0)
    num_frames: int | None = Field(default=None, gt=0, alias="num-frames")
    num_inference_steps: int | None = Field(default=None, gt=0, alias="num-inference-steps")
    num_prompts: int = Field(default=10, ge=2, alias="num-prompts")
    max_concurrency: int = Field(default=1, ge=1, alias="max-concurrency")
    request_rate: float | None = Field(default=None, gt=0, alias="request-rate")
    baseline: dict[str, float] = Field(default_factory=dict)


class ServerParams(_Upstream):
    model: str
    serve_args: dict[str, JsonValue] = Field(default_factory=dict)


class PerfTest(_Upstream):
    test_name: str
    description: str = ""
    server_type: str = "vllm-omni"
    server_params: ServerParams
    benchmark_params: tuple[BenchmarkCase, ...] = Field(min_length=1)


def load_perf_config(path: Path) -> tuple[PerfTest, ...]:
    """Read a vLLM-Omni perf config; SpecError naming the file and the failing field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError([SpecProblem(str(path), None, "", "file not found")]) from None
    except (OSError, ValueError) as exc:
        raise SpecError([SpecProblem(str(path), None, "", f"not JSON: {exc}")]) from None
    if not isinstance(data, list):
        raise SpecError([SpecProblem(str(path), None, "", "expected a list of tests")])
    tests: list[PerfTest] = []
    problems: list[SpecProblem] = []
    for index, item in enumerate(data):
        try:
            tests.append(PerfTest.model_validate(item))
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                where = ".".join(str(p) for p in (index, *err["loc"]))
                problems.append(SpecProblem(str(path), None, where, err["msg"]))
            continue
        # What the schema allows but the harness at the target revision refuses or mislabels.
        problems += [SpecProblem(str(path), None, where, message)
                     for where, message in entry_problems(item, index)]  # fmt: skip
    if problems:
        raise SpecError(problems)
    return tuple(tests)


def select_case(tests: tuple[PerfTest, ...], name: str | None) -> tuple[PerfTest, BenchmarkCase]:
    """``test_name/benchmark name`` (or just ``test_name``: its first case); None: the first."""
    if name is None:
        return tests[0], tests[0].benchmark_params[0]
    test_name, _, case_name = name.partition("/")
    for test in tests:
        if test.test_name != test_name:
            continue
        for case in test.benchmark_params:
            if not case_name or case.name == case_name:
                return test, case
    known = [f"{t.test_name}/{c.name}" for t in tests for c in t.benchmark_params]
    raise SpecError([SpecProblem("vllm_omni_case", None, "", f"no case {name!r}; known: "
                                 f"{', '.join(known)}")])  # fmt: skip


def _parallelism(args: dict[str, JsonValue]) -> str:
    names = ("tensor-parallel-size", "ulysses-degree", "ring-degree", "cfg-parallel-size",
             "vae-patch-parallel-size", "usp")  # fmt: skip
    found = [f"{n}={args[n]}" for n in names if n in args]
    return ",".join(found) or "none"


def template_fields(
    test: PerfTest, case: BenchmarkCase, *, hardware: str, commit_sha: str | None,
    build_url: str | None,
) -> dict[str, JsonValue]:  # fmt: skip
    """The descriptive fields of vLLM-Omni's diffusion result template for one case."""
    args = test.server_params.serve_args
    size = f"{case.width}x{case.height}" if case.width and case.height else ""
    return {
        "test_name": test.test_name, "Model": test.server_params.model,
        "Framework": "vllm-omni", "Hardware": hardware, "Task": case.task,
        "Dataset": case.dataset, "resolution": size, "Parallelism": _parallelism(args),
        "max_concurrency": case.max_concurrency,
        "Cache": str(args.get("cache-backend", "none")),
        "Quantization": str(args.get("quantization", "none")),
        "offload": str(args.get("cpu-offload", args.get("enable-cpu-offload", "none"))),
        "compile": str(not bool(args.get("enforce-eager", False))).lower(),
        "Attn_backend": str(args.get("attention-backend", "default")),
        "num_inference_steps": case.num_inference_steps or 0,
        "commit_sha": commit_sha or "", "build_url": build_url or "",
        "upstream_baseline": dict(case.baseline),
    }  # fmt: skip
