"""The soak gate against the real embedded target (vLLM-Omni 0.30 on CPU, bundled sd3-tiny).

Runs `gates/soak.yaml` as written, with the server launched by omniqual's launcher under a
private TMPDIR (so the temp-file count sees only the server's files) and its pid observed: a
fresh server of its own (the soak, and the abort gate that borrows this fixture, measure the
server's time and memory, and may leave it unhealthy), from the session's checkpoint cache.
Prints the figures (`pytest -s`) and stores them as junit properties. Skipped without vllm_omni.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.checks.soak import SoakCheck
from omniqual.checks.soak.params import SoakParams
from omniqual.client import OmniClient
from omniqual.deploy.launcher import LaunchedTarget, launched
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import load_yaml
from tests.fakes.memory_sink import MemorySink
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = EMBEDDED_MARKS


def gate_spec(name: str) -> GateSpec:
    return GateSpec.model_validate(load_yaml(ROOT / "gates" / f"{name}.yaml").data)


@pytest.fixture
def served(
    tmp_path: Path, request: pytest.FixtureRequest, checkpoint_cache: Path
) -> Iterator[LaunchedTarget]:
    from omniqual.deploy.embedded.catalog import build_checkpoint

    recipe_id = getattr(request, "param", "sd3-tiny")
    recipes = load_recipes(ROOT / "runners")
    recipe = recipes[recipe_id].recipe
    assert recipe.pipeline is not None
    built = build_checkpoint(recipe.pipeline, checkpoint_cache)
    private_tmp = tmp_path / "server-tmp"
    private_tmp.mkdir()
    with launched(
        recipe,
        model=str(built.path),
        log_path=tmp_path / "server.log",
        state_dir=tmp_path / "state",
        extra_env={"TMPDIR": str(private_tmp)},
    ) as target:
        yield target


def embedded_context(target: LaunchedTarget, gate: GateSpec, api_mode: str,
                     sink: MemorySink) -> CheckContext:  # fmt: skip
    return CheckContext(
        gate=gate, row=RowKey((("model", target.recipe_id), ("api_mode", api_mode))),
        target=TargetInfo(url=target.url, pid=target.pid, log_path=target.log_path,
                          temp_dirs=(target.log_path.parent / "server-tmp",),  # the served TMPDIR
                          label=target.recipe_id),
        artifacts=sink, project_root=ROOT, make_client=lambda: OmniClient(target.url), seed=3,
    )  # fmt: skip


# The soak spec's budget_s (1200 s) after a launch (readiness up to 240 s) and a checkpoint build.
@pytest.mark.timeout(1800)
def test_soak_gate_on_sd3_tiny(
    served: LaunchedTarget, record_property: pytest.RecordProperty
) -> None:
    import time

    gate = gate_spec("soak")
    sink = MemorySink()
    started = time.monotonic()
    outcome = asyncio.run(
        SoakCheck().run(
            embedded_context(served, gate, "images-generations", sink),
            SoakParams.model_validate(gate.params),
        )
    )
    took = time.monotonic() - started
    summary = json.loads(sink.blobs["soak-summary.json"])
    print(f"\nsoak on sd3-tiny: {outcome.outcome.value} in {took:.1f} s")
    print("reasons:", *outcome.reasons, sep="\n  ")
    for m in outcome.measurements:
        print(f"  {m.name} = {m.value} {m.unit} (n={m.samples}, bound={m.bound}, ok={m.ok})")
    print("saturation:", json.dumps(summary.get("saturation"))[:800])
    record_property("soak_outcome", outcome.outcome.value)
    record_property("soak_duration_s", round(took, 1))
    # The shipped spec on the bundled model passes; on a 2-core host whose load the soak's own
    # client shares, it may honestly end invalid, but only for noise it names (a percentile
    # inconclusive at its confidence, a schedule the client fell behind, a near phase run past
    # a capacity the saturation estimate missed, a phase the hypervisor stole the host
    # during). Never failed: the server is sound, so a
    # failure here is the gate judging noise as a finding.
    honest = ("inconclusive", "client-limited", "known only to", "host too slow",
              "schedule_fell_behind", "could not issue on schedule", "too_few_samples",
              "the faults were not tested", "host contended")  # fmt: skip
    if outcome.outcome is GateOutcome.INVALID:
        assert all(any(h in r for h in honest) for r in outcome.reasons), outcome.reasons
    else:
        assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert {"soak-requests.jsonl", "soak-resources.jsonl", "soak-summary.json"} <= set(sink.blobs)
    assert summary["resource_source"] == "process-tree"
    if "phases" in summary:  # the phases ran: the known-good request after them must succeed
        assert summary["known_good_after"]["status"] == "ok"
