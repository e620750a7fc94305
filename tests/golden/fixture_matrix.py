"""The matrix definition behind the report golden files: its axes, its rows with what each one
requires, the gates' current versions and the revisions the evidence was measured at.

Only requirements live here, never a state: every row's state is derived from recorded results
by the real compiler (see report_fixtures).
"""

from pathlib import Path

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.matrix import LimitedSpec, LoadedMatrix, MatrixDefinition, PlannedRow, RowSpec
from omniqual.domain.outcomes import CellState
from omniqual.domain.provenance import Provenance
from omniqual.domain.rules import CurrentGate

AXES = (
    "model", "task", "api_mode", "execution", "shape", "attention", "layout", "cache",
    "quantization", "offload", "topology", "hardware", "dtype", "output",
)  # fmt: skip
BASE = {
    "model": "flux-dev",
    "task": "t2i",
    "api_mode": "images-generations",
    "execution": "serial/1",
    "shape": "1024x1024/28steps",
    "attention": "sdpa",
    "layout": "padded",
    "cache": "none",
    "quantization": "bf16",
    "offload": "resident",
    "topology": "1-device",
    "hardware": "1x H200 141GB",
    "dtype": "bf16",
    "output": "b64_json",
}
FP8 = {"quantization": "fp8-online-dit"}
HSDP = {"offload": "dlo-allgather", "topology": "hsdp-2"}
CACHE = {"cache": "cache-dit-high"}
TEA_CACHE = {**FP8, "cache": "tea-cache"}
WAN = {"model": "wan2.2-t2v", "task": "t2v", "api_mode": "videos-async",
       "shape": "832x480/81f/4steps", "output": "mp4"}  # fmt: skip
FP8_LIMITATION = "1024x1024 only; other sizes are rejected with HTTP 400"

PROVENANCE = Provenance(
    model="black-forest-labs/FLUX.1-dev",
    model_revision="0ef5fff",
    checkpoint_sha256="c" * 64,
    vllm_omni_version="0.30.0",
    vllm_omni_commit="1a2b3c4d",
    serve_config_sha256="e" * 64,
    serve_argv=("vllm", "serve", "black-forest-labs/FLUX.1-dev", "--omni", "--api-key", "***"),
    source="launched",
    target_host="harness-host",
    omniqual_version="0.1.0",
)
TARGET = Provenance(vllm_omni_version="0.30.0")
"""What the matrix pins: results of another vLLM-Omni release would be stale."""

SPEC_SHA = {"api-contract": "a1" * 32, "bf16-parity": "b2" * 32, "fp8-parity": "c3" * 32}
GATES: dict[str, CurrentGate] = {
    gate: CurrentGate(1, SPEC_SHA.get(gate))
    for gate in ("api-contract", "bf16-parity", "fp8-parity", "fp8-parity-sizes",
                 "hsdp-dlo-fail-fast", "cache-parity", "tea-cache-parity", "load-poisson",
                 "abort-mid-denoise", "gpu-probe", "offload-sweep")
}  # fmt: skip

SPECS: tuple[tuple[dict[str, str], RowSpec], ...] = (
    ({}, RowSpec(requires=("api-contract", "bf16-parity"))),
    # Parity holds at 1024x1024 and the contract proves other sizes are refused: limited, until
    # the parity gate over every size has run.
    (FP8, RowSpec(
        requires=("api-contract", "fp8-parity", "fp8-parity-sizes"),
        limited=LimitedSpec(limitation=FP8_LIMITATION, requires=("fp8-parity",),
                            rejection=("api-contract",)),
    )),
    (HSDP, RowSpec(unsupported_by=("hsdp-dlo-fail-fast",))),
    (CACHE, RowSpec(requires=("cache-parity",), declared=CellState.VALIDATED,
                    note="claimed in the model card | needs re-check\nat the target revision")),
    (WAN, RowSpec(requires=("load-poisson",))),
)  # fmt: skip
LATER_SPECS = (*SPECS[:4], (TEA_CACHE, RowSpec(requires=("tea-cache-parity",))))
"""The definition a day later: the Wan row dropped, a TeaCache FP8 row added."""


def row_key(changes: dict[str, str]) -> str:
    axes = {**BASE, **changes}
    return ";".join(f"{a}={axes[a]}" for a in AXES)


def catalog() -> AxisCatalog:
    return AxisCatalog.model_validate(
        {"axes": [{"name": a, "description": a, "open_ended": True} for a in AXES]}
    )


def loaded_matrix(
    specs: tuple[tuple[dict[str, str], RowSpec], ...] = SPECS, name: str = "flux-wan-h200"
) -> LoadedMatrix:
    axes = catalog()
    rows = tuple(PlannedRow(axes.row_key({**BASE, **c}), spec, None) for c, spec in specs)
    definition = MatrixDefinition(name=name, title="FLUX.1-dev and Wan2.2 on H200", target=TARGET)
    return LoadedMatrix(definition, axes, rows, Path(f"{name}.yaml"))
