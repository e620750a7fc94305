"""The offload sweep of the report golden files, judged by the offload-sweep check's own code:
point records as the check keeps them, the sweep block and the gate's verdict from the check.

A layerwise sweep with a real trade-off: frontier points, a dominated one, a point refused at
startup and one whose steady-phase memory series is missing, which makes the gate ``invalid``
(a served point's measurement must be complete).
"""

import math
from pathlib import Path

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.offload_sweep.check import _outcome as sweep_outcome
from omniqual.checks.offload_sweep.frontier_block import sweep_block
from omniqual.checks.offload_sweep.measure import PhaseMemory, PointMeasurement
from omniqual.checks.offload_sweep.params import OffloadSweepParams, Point
from omniqual.checks.offload_sweep.points import Parity, PointRecord
from omniqual.client import OmniClient
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.recipe import Expectation
from omniqual.evidence.store import RunWriter

GIB = 1024**3
PARAMS = OffloadSweepParams.model_validate({
    "requests": {"prompts": ["a red fox", "a lighthouse", "a bowl of fruit"], "seeds": [7, 8]},
    "reference": "resident",
    "points": [{"name": "resident"}, {"name": "layer-r8"}, {"name": "layer-r4"},
               {"name": "layer-r4-nopin"}, {"name": "layer-r0"}, {"name": "model"}],
    "tolerance": {"rationale": "offload moves weights, never changes the math",
                  "image": {"require_exact": True}},
    "memory_budget_bytes": 32.0 * GIB,
})  # fmt: skip
IDENTICAL = Parity("passed", 0.0, math.inf)


def _startup(name: str, ready: bool = True) -> StartupOutcome:
    tail = () if ready else ("loading transformer blocks",
                             "RuntimeError: CUDA out of memory pinning 24.0 GiB host buffer",
                             "shutting down")  # fmt: skip
    return StartupOutcome(
        recipe_id=f"flux-dev--{name}", expected=Expectation.SERVES, became_ready=ready,
        reason="ready" if ready else "exited", exit_code=None if ready else 1,
        elapsed_s=95.5 if ready else 41.0, log_path=None, log_tail=tail, command=(),
        expected_error_matched=None,
    )  # fmt: skip


def _measured(latency: float, gpu_gib: float | None, steady_pss_gib: float | None = 31.25,
              nvml: bool = True) -> PointMeasurement:  # fmt: skip
    gpus = {0: int(gpu_gib * GIB)} if gpu_gib is not None and nvml else None
    load = PhaseMemory(int(9.5 * GIB), int(33.0 * GIB), gpus, 40)
    steady = PhaseMemory(
        None if steady_pss_gib is None else int(steady_pss_gib * GIB),
        None if steady_pss_gib is None else int(33.0 * GIB), gpus,
        0 if steady_pss_gib is None else 120,
    )  # fmt: skip
    return PointMeasurement({}, {}, (latency - 0.25, latency, latency + 0.5), (), load, steady)


def _record(name: str, settings: dict[str, object], flags: dict[str, bool | int],
            measured: PointMeasurement | None, parity: Parity | None = IDENTICAL,
            ready: bool = True) -> PointRecord:  # fmt: skip
    point = Point(name, dict(flags), dict(settings), spec=name)
    return PointRecord(point, _startup(name, ready), measured, parity, 3, 3)


def records() -> dict[str, PointRecord]:
    layer = {"enable-layerwise-offload": True}
    return {
        "resident": _record("resident", {}, {}, _measured(11.5, 38.0, 6.0), parity=None),
        "layer-r8": _record("layer-r8", {"resident_layers": 8, "pin_memory": True}, layer,
                            _measured(13.75, 24.5)),
        "layer-r4": _record("layer-r4", {"resident_layers": 4, "pin_memory": True}, layer,
                            _measured(16.0, 17.25)),
        "layer-r4-nopin": _record("layer-r4-nopin", {"resident_layers": 4, "pin_memory": False},
                                  layer, _measured(21.0, 17.25)),
        "layer-r0": _record("layer-r0", {"resident_layers": 0, "pin_memory": True}, layer, None,
                            parity=None, ready=False),
        # NVML gave this point nothing and its steady phase no PSS reading: not measured.
        "model": _record("model", {"cpu_offload": True}, {"enable-cpu-offload": True},
                         _measured(29.5, None, steady_pss_gib=None, nvml=False)),
    }  # fmt: skip


def judged_sweep(writer: RunWriter, row: str) -> CheckOutcome:
    """The gate's outcome for these records, as the check gives it (its sweep artifact stored
    in ``writer``)."""

    def no_client() -> OmniClient:
        raise AssertionError("the sweep is judged from its records; nothing is served")

    ctx = CheckContext(
        gate=GateSpec(id="offload-sweep", kind="offload_sweep", version=1),
        row=RowKey.parse(row), target=TargetInfo(url=None, label="flux-dev"),
        artifacts=writer, project_root=Path("."), make_client=no_client,
    )  # fmt: skip
    return sweep_outcome(ctx, PARAMS, records(), None, [], {})


def sweep() -> dict[str, object]:
    """The sweep block alone (for views that read only it)."""
    return sweep_block(records(), PARAMS)
