"""The abort gate against the real embedded target: sd3-tiny (request mode) and
qwen-image-tiny-step (QwenImagePipeline with --step-execution, where a cut can stop the denoise
loop mid-way). Runs `gates/abort.yaml` as written and prints each case (`pytest -s`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

import pytest
from test_soak_embedded import MISSING, embedded_context, gate_spec, served  # noqa: F401

from omniqual.checks.abort import AbortCheck
from omniqual.checks.abort.params import AbortParams
from omniqual.deploy.launcher import LaunchedTarget
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.memory_sink import MemorySink

pytestmark = [
    pytest.mark.integration, pytest.mark.embedded, pytest.mark.slow,
    pytest.mark.skipif(MISSING, reason="vllm_omni is not importable here"),
]  # fmt: skip


def _tmp_census(target: LaunchedTarget) -> str:
    """Where the server's temp files live (top-level entries and their file counts)."""
    root = target.log_path.parent / "server-tmp"
    counts: Counter[str] = Counter()
    for path in root.rglob("*"):
        if path.is_file():
            counts[path.relative_to(root).parts[0]] += 1
    return ", ".join(f"{name}: {n}" for name, n in counts.most_common(6))


@pytest.mark.parametrize("served", ["sd3-tiny", "qwen-image-tiny-step"], indirect=True)
def test_abort_gate_on_embedded(
    served: LaunchedTarget,  # noqa: F811 (the fixture imported above)
    record_property: pytest.RecordProperty,
) -> None:
    gate = gate_spec("abort")
    sink = MemorySink()
    started = time.monotonic()
    ctx = embedded_context(served, gate, "images-generations", sink)
    outcome = asyncio.run(AbortCheck().run(ctx, AbortParams.model_validate(gate.params)))
    took = time.monotonic() - started
    summary = json.loads(sink.blobs["abort-summary.json"])
    print(
        f"\nabort on {served.recipe_id}: {outcome.outcome.value} in {took:.1f} s; "
        f"calibration {summary['calibration']}"
    )
    print("reasons:", *outcome.reasons, sep="\n  ")
    for case in outcome.cases:
        print(f"  {case.id}: {case.outcome.value} | {case.observed_status} | {case.note}")
    for m in outcome.measurements:
        print(f"  {m.name} = {m.value} {m.unit} (bound={m.bound}, ok={m.ok})")
    print("server temp dir:", _tmp_census(served))
    record_property("abort_outcome", outcome.outcome.value)
    record_property("abort_duration_s", round(took, 1))
    assert outcome.outcome in (GateOutcome.PASSED, GateOutcome.FAILED, GateOutcome.INVALID)
    assert len(outcome.cases) >= 6
    assert summary["resource_source"] == "process-tree"
