"""The official implementation, run offline on the served requests (SKILL Gate 1.2), or vLLM-Omni's
own offline engine on them (SKILL G0-08: the offline path normalizes as the served one does).

:mod:`omniqual.deploy.reference_pipeline` (the official pipeline) or
:mod:`omniqual.deploy.offline_pipeline` (``vllm_omni.Omni``, the job's ``engine``) runs in one
subprocess of the target's interpreter per
call (torch never loads in the omniqual process, and the pipeline loads once for all cases): it
builds the diffusers pipeline class the model's contract names from the local checkpoint, runs
each case with the served request's seed, steps, guidance, shape and dtype, and writes the media
plus a JSON result, validated here (:class:`ReferenceResult`). A run that cannot start, load or
finish raises :class:`ReferenceRunError` with the subprocess tail: the reference cannot run.
"""

import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from omniqual.domain.recipe import FlagValue

logger = logging.getLogger(__name__)

PIPELINE_MODULE = "omniqual.deploy.reference_pipeline"
OFFLINE_MODULE = "omniqual.deploy.offline_pipeline"
Engine = Literal["official", "offline"]
_TAIL_LINES = 6
_CLASS = re.compile(r"\b([A-Z][A-Za-z0-9]*Pipeline)\b")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReferenceCase(_Frozen):
    """One served request as the official pipeline takes it (diffusers argument names)."""

    id: str
    kind: Literal["image", "video", "audio"]
    prompt: str
    seed: int
    steps: int | None = None
    guidance: dict[str, float] = Field(
        default_factory=dict, description="guidance_scale / true_cfg_scale, as served."
    )
    negative_prompt: str | None = None
    width: int | None = None
    height: int | None = None
    num_frames: int | None = None
    fps: int | None = None
    audio_length_s: float | None = None
    count: int = 1
    image: str | None = Field(default=None, description="Path of the input image (edits).")


class ReferenceJob(_Frozen):
    checkpoint: str
    pipeline_class: str
    dtype: str = Field(description="torch dtype name: bfloat16, float32.")
    device: str = "cpu"
    out_dir: str
    cases: tuple[ReferenceCase, ...]
    engine: Engine = Field(
        default="official", description="official: the diffusers pipeline; offline: vLLM-Omni's "
        "Omni entrypoint in process, built with engine_args.",
    )  # fmt: skip
    engine_args: dict[str, JsonValue] = Field(
        default_factory=dict, description="Omni(model, **engine_args): the serve flags, as "
        "keyword arguments (offline only).",
    )  # fmt: skip


class ReferenceOutput(_Frozen):
    id: str
    files: tuple[str, ...] = ()
    media_type: str = ""
    fps: int | None = None
    sample_rate: int | None = None
    error: str | None = Field(default=None, description="Why this case raised, if it did.")
    seconds: float = 0.0


class ReferenceResult(_Frozen):
    pipeline_class: str
    scheduler: str
    dtype: str
    device: str
    generator: str
    versions: dict[str, str]
    threads: int
    load_s: float
    outputs: tuple[ReferenceOutput, ...]

    def output(self, case_id: str) -> ReferenceOutput | None:
        return next((o for o in self.outputs if o.id == case_id), None)


@dataclass(frozen=True, slots=True)
class ReferenceRun:
    result: ReferenceResult
    out_dir: Path
    """Where the media files named by the outputs are."""
    argv: tuple[str, ...]
    """The command that ran the official pipeline (its job file is a temporary path)."""
    seconds: float


class ReferenceRunError(RuntimeError):
    """The official pipeline could not run (the reason carries the subprocess tail)."""


class ReferenceRunner(Protocol):
    """What a reference check calls: tests inject a fake that writes synthetic media."""

    def __call__(
        self, job: ReferenceJob, *, python: str | None, env: dict[str, str], timeout_s: float
    ) -> ReferenceRun: ...


def official_class(official: str) -> str:
    """The pipeline class named by a contract's ``official:`` line
    (``diffusers==0.40.0 StableDiffusion3Pipeline (defaults …)`` → ``StableDiffusion3Pipeline``)."""
    found = _CLASS.search(official)
    if found is None:
        raise ValueError(f"the contract's official implementation names no pipeline: {official!r}")
    return found.group(1)


def offline_engine_args(flags: Mapping[str, FlagValue]) -> dict[str, JsonValue]:
    """A recipe's serve flags as ``Omni`` keyword arguments, the way vLLM's CLI maps them onto its
    engine arguments (``--model-class-name X`` -> ``model_class_name="X"``, a bare flag ->
    ``True``, an unset or false one left out). Raises ValueError for a flag holding a launch
    placeholder (``{port}``, ``{recipe_dir}``): the offline engine has no launch to fill it."""
    args: dict[str, JsonValue] = {}
    for name, value in flags.items():
        if value is None or value is False:
            continue
        if isinstance(value, str) and "{" in value:
            raise ValueError(f"the serve flag --{name} holds a launch placeholder ({value!r})")
        args[name.replace("-", "_")] = value
    return args


def torch_dtype(name: str) -> str:
    """A row or recipe dtype (``bf16``, ``fp32``, ``bfloat16``) as a torch attribute name."""
    aliases = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32",
               "float": "float32", "auto": "bfloat16"}  # fmt: skip
    return aliases.get(name, name)


def run_reference(
    job: ReferenceJob, *, python: str | None, env: dict[str, str], timeout_s: float
) -> ReferenceRun:
    """Run the job in a subprocess of ``python`` (default: this interpreter)."""
    interpreter = python or sys.executable
    out_dir = Path(job.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    job_path, result_path, log_path = (out_dir / n for n in ("job.json", "result.json", "run.log"))
    job_path.write_text(job.model_dump_json(indent=1), encoding="utf-8")
    module = OFFLINE_MODULE if job.engine == "offline" else PIPELINE_MODULE
    argv = (interpreter, "-m", module, str(job_path), str(result_path))
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", **env}  # fmt: skip
    logger.info("running the %s %s on %d case(s)", job.engine, job.pipeline_class, len(job.cases))
    started = time.monotonic()
    with log_path.open("ab") as handle:
        try:
            code = subprocess.run(
                argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                env=full_env, timeout=timeout_s, check=False,
            ).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ReferenceRunError(f"the reference did not finish within {timeout_s:g}s") from None
        except OSError as exc:
            raise ReferenceRunError(f"the reference could not start: {exc}") from None
    if code != 0 or not result_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-_TAIL_LINES:]
        raise ReferenceRunError(f"the reference exited with code {code}: " + " | ".join(tail))
    try:
        result = ReferenceResult.model_validate_json(result_path.read_bytes())
    except ValidationError as exc:
        raise ReferenceRunError(f"the reference wrote an unreadable result: {exc}") from None
    return ReferenceRun(result, out_dir, argv, round(time.monotonic() - started, 3))


def scratch_dir(prefix: str = "omniqual-reference-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def job_record(job: ReferenceJob) -> str:
    """The job as recorded evidence: every parameter except the prompt text (by index only)."""
    cases = [c.model_dump(mode="json", exclude={"prompt", "image"}) for c in job.cases]
    doc = {**job.model_dump(mode="json", exclude={"cases", "out_dir"}), "cases": cases}
    return json.dumps(doc, indent=1)
