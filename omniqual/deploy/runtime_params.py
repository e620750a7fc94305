"""The parameter list of the serving model, obtained without loading any weights.

:mod:`omniqual.deploy.runtime_param_dump` runs in a subprocess of the serving environment's
interpreter (torch never loads in the omniqual process): it builds vLLM-Omni's own pipeline
class for the checkpoint on the meta device, with every Hugging Face ``from_pretrained`` replaced
by a config-only construction, and writes the result as JSON. A deployment that cannot be
instantiated that way may instead ship the same JSON as a manifest (:func:`load_manifest`).
"""

import json
import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

DUMP_MODULE = "omniqual.deploy.runtime_param_dump"
_TAIL_LINES = 5


class RuntimeParam(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Name inside its component (``transformer_blocks.0.attn.to_qkv.weight``)."""
    shape: tuple[int, ...]
    dtype: str
    """torch dtype name without the ``torch.`` prefix (``bfloat16``)."""
    kind: Literal["parameter", "buffer"]
    optional: bool = False
    """vLLM-Omni's ``is_checkpoint_optional``: initialized in code, loaded only if present."""


class RuntimeComponent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Attribute name on the pipeline (``transformer``)."""
    subfolder: str | None
    """Checkpoint subfolder its weights come from; None if it is built without weights."""
    loader: str
    """``vllm-omni`` (its ``load_weights``), ``transformers`` or ``diffusers``."""
    class_name: str
    params: tuple[RuntimeParam, ...]


class RuntimeLinear(BaseModel):
    """One vLLM linear layer of the built pipeline and the quant method attached to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    """Full module name on the pipeline (``transformer.blocks.0.attn1.to_qkv``)."""
    layer: str
    quant_method: str
    """Class name of its ``quant_method`` (``UnquantizedLinearMethod``, ``Fp8...Method``)."""


class RuntimeParamList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["meta-instantiation", "manifest"]
    pipeline_class: str
    dtype: str
    vllm_omni_version: str = ""
    components: tuple[RuntimeComponent, ...]
    unowned: tuple[RuntimeParam, ...] = ()
    """Parameters on the pipeline outside every component (full names)."""
    linears: tuple[RuntimeLinear, ...] = ()
    """Every module with a ``quant_method`` (vLLM's linears), built with the serve's
    quantization flags: the module census of which linears a quantization reaches."""
    source_files: dict[str, str] = Field(default_factory=dict)
    """Source file of the pipeline class (``pipeline``) and of each component vLLM-Omni builds
    itself (by component name), as the serving environment resolved them."""

    def component(self, name: str) -> RuntimeComponent | None:
        return next((c for c in self.components if c.name == name), None)


class RuntimeParamsError(RuntimeError):
    """The parameter list could not be obtained (a harness fault, with the subprocess tail)."""


def dump_runtime_params(
    checkpoint_dir: Path,
    *,
    python: str | None = None,
    dtype: str = "bfloat16",
    model_class_name: str | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 600.0,
    log_path: Path | None = None,
    quantization: tuple[str, ...] = (),
) -> RuntimeParamList:
    """Run the dump script with ``python`` (default: this interpreter) and parse its output.

    Its stdout/stderr go to ``log_path`` (or a temporary file) so vLLM's logging is kept as
    evidence and never mixed with the JSON result. ``quantization`` holds the serve's
    quantization arguments as the dump takes them (``("--quantization", "fp8")``, or
    ``--diffusion-quantization-config JSON``), so the linear census shows what they reach.
    """
    interpreter = python or sys.executable
    # Building a pipeline on the meta device costs 15-25 s on 2 cores, and a campaign asks for
    # the same checkpoint once per row; bundled checkpoint directories are content-named, so
    # the answer for one directory cannot change within a process.
    key = (str(checkpoint_dir.resolve()), interpreter, dtype, model_class_name,
           tuple(sorted((env or {}).items())), quantization)  # fmt: skip
    cached = _DUMPS.get(key)
    if cached is not None:
        return cached
    result = _dump(checkpoint_dir, interpreter, dtype, model_class_name, env, timeout_s, log_path,
                   quantization)  # fmt: skip
    _DUMPS[key] = result
    return result


_DUMPS: dict[tuple[object, ...], RuntimeParamList] = {}


def _dump(
    checkpoint_dir: Path,
    interpreter: str,
    dtype: str,
    model_class_name: str | None,
    env: dict[str, str] | None,
    timeout_s: float,
    log_path: Path | None,
    quantization: tuple[str, ...] = (),
) -> RuntimeParamList:
    with tempfile.TemporaryDirectory(prefix="omniqual-params-") as scratch:
        out = Path(scratch) / "params.json"
        log = log_path or Path(scratch) / "dump.log"
        argv = [interpreter, "-m", DUMP_MODULE, str(checkpoint_dir), str(out), "--dtype", dtype]
        if model_class_name:
            argv += ["--model-class-name", model_class_name]
        argv += list(quantization)
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        logger.info("dumping runtime parameters of %s", checkpoint_dir)
        with log.open("ab") as handle:
            try:
                code = subprocess.run(
                    argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                    env=full_env, timeout=timeout_s, check=False,
                ).returncode  # fmt: skip
            except subprocess.TimeoutExpired:
                raise RuntimeParamsError(
                    f"{DUMP_MODULE} did not finish within {timeout_s:g}s"
                ) from None
        if code != 0 or not out.is_file():
            tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-_TAIL_LINES:]
            raise RuntimeParamsError(f"{DUMP_MODULE} exited with code {code}: " + " | ".join(tail))
        return RuntimeParamList.model_validate_json(out.read_bytes())


def load_manifest(path: Path) -> RuntimeParamList:
    """A parameter list written by the deployment itself (same schema, ``source: manifest``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data.setdefault("source", "manifest")
    return RuntimeParamList.model_validate(data)
