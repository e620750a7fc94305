"""The ``lora`` gate on a fake that applies per-request adapters as vLLM-Omni 0.30 does, broken
in one place per test: an adapter silently ignored, one still acting at scale 0, two adapters
giving one output, an adapter reloaded into another output, an adapter left applied to the next
request, a missing adapter answered 500 (a failure, or the row's limitation where the release
declares it, and stale once refused) or served without it; a server that does not reproduce its
own output is invalid, and the faithful fake passes every case."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.lora import LoraCheck, LoraParams
from omniqual.client import OmniClient
from omniqual.deploy.embedded.adapters import bundled_adapters, bundled_broken_adapters
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.check_context import Harness, row
from tests.unit.checks.field_effect.field_fake import CONTRACTS
from tests.unit.checks.lora.lora_fake import ADAPTERS, BROKEN, LoraFake, LoraFaults

ADAPTER_PARAMS = [{"name": name, "path": path} for name, path in ADAPTERS.items()]


def _run(fake: LoraFake, api_mode: str = "images-generations", *, contracts: Path = CONTRACTS,
         target: TargetInfo | None = None, **params: object) -> CheckOutcome:  # fmt: skip
    harness = Harness()
    ctx = CheckContext(
        gate=GateSpec(id="lora", kind="lora", version=1),
        row=row(api_mode),
        target=target or TargetInfo(url="http://fake.invalid", label="fake"),
        artifacts=harness.sink,
        project_root=Path("."),
        make_client=lambda: OmniClient("http://fake.invalid", transport=fake.transport()),
        progress=harness.on_progress,
    )
    parsed = LoraParams.model_validate({"contracts_dir": str(contracts), "adapters": ADAPTER_PARAMS,
                                        "broken_adapters": BROKEN, "release": "0.30.0",
                                        **params})  # fmt: skip
    return asyncio.run(LoraCheck().run(ctx, parsed))


def _cases(outcome: CheckOutcome) -> Mapping[str, GateOutcome]:
    prefix = "images-generations/lora/"
    return {case.id.removeprefix(prefix): case.outcome for case in outcome.cases}


def _failed(outcome: CheckOutcome) -> set[str]:
    return {name for name, result in _cases(outcome).items() if result is GateOutcome.FAILED}


def test_the_faithful_fake_passes_every_case() -> None:
    fake = LoraFake()
    outcome = _run(fake)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert set(_cases(outcome)) == {
        "baseline", "active", "reproducible", "scale-0", "active-b", "distinct", "churn",
        "base-after", "together/a", "together/b", "together/no adapter", "missing-path",
        "no-name", "no-layer", "malformed", "bad-scale", "bad-int-id", "base-after-refusals",
        "churn-memory",
        *(f"churn-{turn}/{name}" for turn in range(1, 5) for name in "ab")}  # fmt: skip
    assert all(result is GateOutcome.PASSED for result in _cases(outcome).values())
    figures = {m.name: m.value for m in outcome.measurements}
    assert figures["requests"] == 26
    assert (figures["churn_adapter_loads"], figures["churn_memory_growth"]) == (8, 0)
    # Evidence: the contract and every output compared, by sha256 (a pass without is none).
    roles = {artifact.role for artifact in outcome.artifacts}
    assert roles == {"contract", "lora-output"}
    assert all(len(artifact.sha256) == 64 for artifact in outcome.artifacts)
    assert {"path": "/adapters/a", "name": "a", "scale": 0.0} in fake.lora_bodies


@pytest.mark.parametrize(
    ("faults", "code", "failed"),
    [
        (LoraFaults(ignores=True), "lora_ignored", {"active"}),
        (LoraFaults(scale_zero_acts=True), "lora_scale_zero", {"scale-0"}),
        (LoraFaults(indistinct=True), "lora_indistinct", {"distinct"}),
        (LoraFaults(churn=True), "lora_churn", {"churn"}),
        (LoraFaults(leaks=True), "lora_left_applied",
         {"base-after", "together/no adapter", "base-after-refusals"}),
        (LoraFaults(missing_status=500), "lora_bad_adapter_not_refused", {"missing-path"}),
        (LoraFaults(missing_status=200), "lora_bad_adapter_not_refused", {"missing-path"}),
        (LoraFaults(keeps_per_load_mib=16), "lora_churn_memory", {"churn-memory"}),
        (LoraFaults(broken_status=200), "lora_bad_adapter_not_refused", {"no-layer", "malformed"}),
        (LoraFaults(broken_status=500), "lora_bad_adapter_not_refused", {"no-layer", "malformed"}),
        (LoraFaults(accepts_bad_numbers=True), "lora_bad_adapter_not_refused",
         {"bad-scale", "bad-int-id"}),
    ],
)  # fmt: skip
def test_each_fault_fails_the_gate_naming_it(faults: LoraFaults, code: str,
                                             failed: set[str]) -> None:  # fmt: skip
    outcome = _run(LoraFake(faults))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any(reason.startswith(code) for reason in outcome.reasons), outcome.reasons
    assert failed <= _failed(outcome), _cases(outcome)


def test_churn_memory_within_its_bound_passes_and_an_unknown_figure_is_invalid() -> None:
    # 8 loads of 4 MiB each: 32 MiB, within the 64 MiB bound; the figure is recorded.
    kept = _run(LoraFake(LoraFaults(keeps_per_load_mib=4)))
    assert kept.outcome is GateOutcome.PASSED, kept.reasons
    assert {m.name: m.value for m in kept.measurements}["churn_memory_growth"] == 32
    blind = LoraFake()
    blind.metrics_text = lambda: "# no process gauges\n"  # type: ignore[method-assign]
    unknown = _run(blind)
    assert unknown.outcome is GateOutcome.INVALID, unknown.reasons
    assert any(r.startswith("churn_memory_unknown") for r in unknown.reasons)
    assert _cases(unknown)["churn-memory"] is GateOutcome.INVALID


def test_an_ignored_adapter_stops_the_gate_before_steps_it_would_pass_trivially() -> None:
    outcome = _run(LoraFake(LoraFaults(ignores=True)))
    assert set(_cases(outcome)) == {"baseline", "active"}


def test_a_missing_adapter_served_without_it_says_so() -> None:
    outcome = _run(LoraFake(LoraFaults(missing_status=200)))
    (reason,) = [r for r in outcome.reasons if r.startswith("lora_bad_adapter_not_refused")]
    assert "served it" in reason


DECLARED_500 = """
deviations:
  - release: "0.30.*"
    cases: [images-generations/lora/missing-path]
    observed_status: 500
    observed_error: "No such file or directory"
    reason: a LoRA path that does not exist fails in the worker and is answered 500
"""


def _declaring(tmp: Path) -> Path:
    (tmp / "fake.yaml").write_text((CONTRACTS / "fake.yaml").read_text() + DECLARED_500)
    return tmp


def test_a_declared_500_is_the_rows_limitation(tmp_path: Path) -> None:
    outcome = _run(LoraFake(LoraFaults(missing_status=500)), contracts=_declaring(tmp_path))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    (limitation,) = outcome.limitations
    assert limitation.startswith("declared deviation: images-generations/lora/missing-path")
    (case,) = [c for c in outcome.cases if c.id.endswith("/missing-path")]
    assert case.deviation and case.outcome is GateOutcome.FAILED


def test_a_declared_500_that_is_now_refused_fails_as_stale(tmp_path: Path) -> None:
    outcome = _run(LoraFake(), contracts=_declaring(tmp_path))
    assert outcome.outcome is GateOutcome.FAILED
    assert any(r.startswith("stale deviation") for r in outcome.reasons), outcome.reasons


def test_a_server_that_does_not_reproduce_is_invalid() -> None:
    outcome = _run(LoraFake(reproducible=False))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("not_reproducible")


def test_without_adapters_or_on_another_endpoint_it_is_skipped() -> None:
    no_adapters = _run(LoraFake(), adapters=None)
    assert no_adapters.outcome is GateOutcome.SKIPPED
    assert "params.adapters" in no_adapters.reasons[0]
    chat = _run(LoraFake(), "chat-completions")
    assert chat.outcome is GateOutcome.SKIPPED and "images-generations only" in chat.reasons[0]


SD3 = {"_class_name": "SD3Transformer2DModel", "num_attention_heads": 4,
       "attention_head_dim": 8, "num_layers": 2}  # fmt: skip


def _sd3_checkpoint(tmp_path: Path) -> Path:
    checkpoint = tmp_path / "sd3"
    (checkpoint / "transformer").mkdir(parents=True)
    (checkpoint / "transformer" / "config.json").write_text(json.dumps(SD3))
    return checkpoint


KIND_FIELDS = {"url": {"url": "http://x.invalid"}, "command": {"command": ["serve"]},
               "embedded": {"pipeline": "sd3-tiny"}}  # fmt: skip


def _target(checkpoint: Path, kind: str) -> TargetInfo:
    recipe = LaunchRecipe.model_validate({"id": "r", "description": "d", "kind": kind,
                                          **KIND_FIELDS[kind]})  # fmt: skip
    return TargetInfo(url="http://fake.invalid", recipe=recipe, checkpoint_dir=checkpoint)


def test_the_bundled_adapters_are_used_and_recorded_by_sha256_on_the_embedded_target(
    tmp_path: Path,
) -> None:
    checkpoint = _sd3_checkpoint(tmp_path)
    paths = tuple(str(a.path) for a in bundled_adapters(checkpoint))
    fake = LoraFake(known=paths)
    outcome = _run(fake, target=_target(checkpoint, "embedded"), adapters=None, broken_adapters={})
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    adapters = {a.name: a for a in outcome.artifacts if a.role == "lora-adapter"}
    assert set(adapters) == {f"{name}/{part}" for name in ("omniqual-a", "omniqual-b")
                             for part in ("adapter_config.json", "adapter_model.safetensors")}
    # The bundled broken adapters are the ones sent for the no-layer and malformed refusals.
    sent = {str(b["path"]) for b in fake.lora_bodies if isinstance(b, dict) and "path" in b}
    broken = bundled_broken_adapters(checkpoint)
    assert {str(broken["no-layer"].path), str(broken["malformed"].path)} <= sent
    assert outcome.effective["refusals_not_sent"] == []


def test_without_broken_adapters_on_the_servers_host_those_refusals_are_not_sent() -> None:
    outcome = _run(LoraFake(), broken_adapters={})
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["refusals_not_sent"] == ["no-layer", "malformed"]
    assert not {"no-layer", "malformed"} & set(_cases(outcome))


@pytest.mark.parametrize("kind", ["command", "url"])
def test_no_adapters_are_written_beside_a_users_own_checkpoint(tmp_path: Path, kind: str) -> None:
    checkpoint = _sd3_checkpoint(tmp_path)
    outcome = _run(LoraFake(), target=_target(checkpoint, kind), adapters=None)
    assert outcome.outcome is GateOutcome.SKIPPED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sd3"]  # nothing written beside it
