"""reference-parity against the fake server (no sockets) and synthetic references: every way the
gate must fail or go invalid, each with its reason, next to the faithful deployment that passes."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from pydantic import JsonValue, TypeAdapter

from omniqual.checks.base import CheckContext, CheckOutcome
from omniqual.checks.parity.reference import ReferenceParityCheck, ReferenceParityParams
from omniqual.checks.parity.reference_dir import MANIFEST_NAME, load_reference_dir
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.engine.targets.reference_build import build_reference_dir
from tests.fakes.check_context import context, row
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.fake_reference import FakeReferenceRunner

ROOT = Path(__file__).resolve().parents[4]
SPEC = yaml.safe_load((ROOT / "gates/reference-parity.yaml").read_text(encoding="utf-8"))
PARAMS = ReferenceParityParams.model_validate(SPEC["params"])


def make_ctx(
    tmp_path: Path, faults: FakeFaults | None = None, *, local: bool = True
) -> CheckContext:
    fake = FakeOmni(FakeConfig(faults=faults or FakeFaults()))
    ctx, _ = context("abort", "images-generations", fake=fake, root=ROOT)
    gate = GateSpec(id="reference-parity", kind="reference_parity", version=1)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir(exist_ok=True)
    target = dataclasses.replace(ctx.target, checkpoint_dir=checkpoint if local else None)
    return dataclasses.replace(
        ctx, gate=gate, row=row("images-generations", model="sd3-tiny"), target=target
    )


def run(
    ctx: CheckContext,
    runner: FakeReferenceRunner | None = None,
    params: ReferenceParityParams = PARAMS,
) -> CheckOutcome:
    check = ReferenceParityCheck(runner=runner or FakeReferenceRunner())
    return asyncio.run(check.run(ctx, params))


def test_faithful_deployment_passes_with_media_and_metrics(tmp_path: Path) -> None:
    runner = FakeReferenceRunner()
    outcome = run(make_ctx(tmp_path), runner)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert len(outcome.cases) == 6  # 3 prompts x 2 seeds x the probe's one shape
    # One run per gate, for every endpoint of the contract (images and chat: 2 x 6 cases), so
    # a campaign's second row of the same recipe can reuse it.
    assert len(runner.jobs) == 1 and len(runner.jobs[0].cases) == 12
    job = runner.jobs[0]
    assert job.pipeline_class == "StableDiffusion3Pipeline" and job.dtype == "bfloat16"
    assert {c.seed for c in job.cases} == {1234, 20251130}
    assert all(c.steps == 2 and c.guidance == {"guidance_scale": 7.0} for c in job.cases)
    roles = [a.role for a in outcome.artifacts]
    assert roles.count("served-image") == 6 and roles.count("reference-image") == 6
    assert "reference-job" in roles and "parity-metrics" in roles
    exact = [m for m in outcome.measurements if m.name.endswith("/exact_pixels")]
    assert len(exact) == 6 and all(m.value == 1.0 for m in exact)
    assert outcome.effective["reference_command"] == ["fake-reference", "StableDiffusion3Pipeline"]


def _failed_with(outcome: CheckOutcome, text: str) -> None:
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert outcome.reasons and all(text in reason for reason in outcome.reasons), outcome.reasons


def test_wrong_seed_fails_below_psnr(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path, FakeFaults(seed_offset=1)))
    _failed_with(outcome, "below the minimum")
    assert "below the minimum 30 dB" in outcome.reasons[0]
    assert len(outcome.reasons) >= 6  # every case: psnr and ssim


def test_wrong_steps_fails(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path, FakeFaults(steps_offset=3)))
    _failed_with(outcome, "below the minimum")
    assert all(c.outcome is GateOutcome.FAILED for c in outcome.cases)


def test_noise_beyond_tolerance_fails(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path), FakeReferenceRunner(noise_sigma=25.0))
    _failed_with(outcome, "below the minimum")
    psnr = [m.value for m in outcome.measurements if m.name.endswith("/psnr")]
    assert len(psnr) == 6 and max(psnr) < 30.0


def test_noise_within_tolerance_passes(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path), FakeReferenceRunner(noise_sigma=1.0))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    psnr = [m.value for m in outcome.measurements if m.name.endswith("/psnr")]
    assert len(psnr) == 6 and min(psnr) > 40.0


def test_another_size_fails(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path, FakeFaults(size_offset=16)))
    _failed_with(outcome, "80x80")


def test_another_count_fails(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path, FakeFaults(extra_outputs=1)))
    _failed_with(outcome, "served 2 output(s), the official pipeline 1")


def test_reference_that_crashes_is_invalid(tmp_path: Path) -> None:
    runner = FakeReferenceRunner(crash="RuntimeError: expected scalar type BFloat16")
    outcome = run(make_ctx(tmp_path), runner)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons == (
        "reference cannot run: the reference exited with code 1:"
        " RuntimeError: expected scalar type BFloat16",
    )


def test_reference_subprocess_crash_is_invalid_with_its_tail(tmp_path: Path) -> None:
    """The real runner: a target interpreter that dies is a reference that cannot run."""
    from omniqual.deploy.reference_runner import run_reference

    crash = tmp_path / "python"
    crash.write_text("#!/bin/sh\necho 'Traceback (most recent call last):'\n"
                     "echo 'OSError: no file named model_index.json'\nexit 3\n")  # fmt: skip
    crash.chmod(0o755)
    params = PARAMS.model_copy(update={"python": str(crash)})
    outcome = asyncio.run(ReferenceParityCheck(run_reference).run(make_ctx(tmp_path), params))
    assert outcome.outcome is GateOutcome.INVALID
    (reason,) = outcome.reasons
    assert reason.startswith("reference cannot run: the reference exited with code 3:")
    assert "OSError: no file named model_index.json" in reason


def test_reference_case_that_raises_is_invalid_not_passed(tmp_path: Path) -> None:
    case_id = "images-generations/64x64/p1-s1234"
    outcome = run(make_ctx(tmp_path), FakeReferenceRunner(case_errors={case_id: "ValueError: x"}))
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons == (f"{case_id}: reference cannot run: ValueError: x",)
    assert [c.outcome for c in outcome.cases].count(GateOutcome.PASSED) == 5


def _reference_dir(tmp_path: Path) -> Path:
    out = tmp_path / "refs" / "sd3-tiny"
    build_reference_dir(
        model="sd3-tiny", checkpoint=tmp_path / "checkpoint", out=out, root=ROOT,
        runner=FakeReferenceRunner(),
    )  # fmt: skip
    return out


def test_url_target_against_reference_directory_passes(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").mkdir()
    directory = _reference_dir(tmp_path)
    params = PARAMS.model_copy(update={"reference": str(directory)})
    runner = FakeReferenceRunner()
    outcome = run(make_ctx(tmp_path, local=False), runner, params)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert runner.jobs == []  # nothing ran: the directory is the reference
    assert str(outcome.effective["reference_source"]).startswith("directory ")
    # What the check says it used must be JSON as it is: a result is built from it (the
    # manifest's command once came back a tuple and the URL path crashed recording it).
    TypeAdapter(dict[str, JsonValue]).validate_python(dict(outcome.effective))
    assert isinstance(outcome.effective["reference_command"], list)


def test_reference_directory_whose_hashes_do_not_match_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").mkdir()
    directory = _reference_dir(tmp_path)
    manifest = json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    tampered = directory / manifest["cases"][0]["media"][0]["file"]
    tampered.write_bytes(tampered.read_bytes() + b"\0")
    params = PARAMS.model_copy(update={"reference": str(directory)})
    outcome = run(make_ctx(tmp_path, local=False), params=params)
    assert outcome.outcome is GateOutcome.INVALID
    (reason,) = outcome.reasons
    assert "does not match its manifest" in reason and tampered.name in reason


def test_reference_directory_made_with_another_seed_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").mkdir()
    directory = _reference_dir(tmp_path)
    requests = PARAMS.requests.model_copy(update={"seeds": (1234, 7)})
    params = PARAMS.model_copy(update={"reference": str(directory), "requests": requests})
    outcome = run(make_ctx(tmp_path, local=False), params=params)
    assert outcome.outcome is GateOutcome.INVALID
    assert "has no such case" in outcome.reasons[0]


def test_reference_directory_verifies_when_intact(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").mkdir()
    loaded = load_reference_dir(_reference_dir(tmp_path))
    assert len(loaded.manifest.cases) == 12  # both sd3 endpoints: images and chat
    assert loaded.manifest.pipeline_class == "StableDiffusion3Pipeline"
    assert len(loaded.references.media) == 12


def test_no_local_checkpoint_and_no_reference_directory_is_invalid(tmp_path: Path) -> None:
    params = PARAMS.model_copy(update={"references_dir": str(tmp_path / "none")})
    outcome = run(make_ctx(tmp_path, local=False), params=params)
    assert outcome.outcome is GateOutcome.INVALID
    assert "no reference directory exists" in outcome.reasons[0]


@pytest.mark.parametrize("prompts", [("a", "b"), ()])
def test_request_set_needs_three_prompts(prompts: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="at least 3"):
        ReferenceParityParams.model_validate({**SPEC["params"], "requests": {
            "prompts": list(prompts), "seeds": [1, 2]}})  # fmt: skip


def test_live_reference_runs_once_per_checkpoint_and_request_set(tmp_path: Path) -> None:
    """A campaign's second row of the same recipe reuses the run; other requests do not."""
    from omniqual.checks.parity.reference_live import LiveReference, run_live
    from omniqual.checks.parity.requests import ParityRequests
    from omniqual.specs.contracts import load_contract

    contract = load_contract(ROOT / "gates/contracts/sd3-tiny.yaml")
    runner = FakeReferenceRunner()
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()

    def live(requests: ParityRequests) -> LiveReference:
        return asyncio.run(run_live(
            runner, contract, requests, checkpoint=checkpoint, dtype="bfloat16",
            device="cpu", python=None, env={}, timeout_s=60, reuse=True,
        ))  # fmt: skip

    first, second = live(PARAMS.requests), live(PARAMS.requests)
    assert len(runner.jobs) == 1
    assert not first.reused and second.reused
    assert second.references.media == first.references.media
    live(PARAMS.requests.model_copy(update={"seeds": (1, 2)}))
    assert len(runner.jobs) == 2


def test_each_output_gets_official_served_and_difference_pictures(tmp_path: Path) -> None:
    outcome = run(make_ctx(tmp_path), FakeReferenceRunner(noise_sigma=1.0))
    gallery = outcome.effective["parity"]
    assert isinstance(gallery, dict) and "official implementation" in str(gallery["reference_row"])
    pairs = gallery["pairs"]
    assert isinstance(pairs, list) and len(pairs) == 6
    # Content-addressed: a 64x64 thumbnail may be the very bytes of a stored output.
    stored = {a.sha256 for a in outcome.artifacts}
    for pair in pairs:
        assert isinstance(pair, dict) and pair["kind"] == "image" and pair["identical"] is False
        files = pair["files"]
        assert isinstance(files, dict)
        roles = ("reference_thumb", "candidate_thumb", "difference")
        assert {str(files[role]) for role in roles} <= stored
        assert len({str(files[role]) for role in roles}) == 3
        metrics = pair["metrics"]
        assert isinstance(metrics, dict) and float(str(metrics["psnr_db"])) > 40.0


def test_no_case_to_compare_is_invalid_not_passed(tmp_path: Path) -> None:
    """A contract probe without a size (and no sizes in the request set) makes no case at all:
    nothing was compared, so nothing passed."""
    contracts = tmp_path / "contracts"
    contracts.mkdir()
    text = (ROOT / "gates/contracts/sd3-tiny.yaml").read_text(encoding="utf-8")
    (contracts / "sd3-tiny.yaml").write_text(text.replace(" size: 64x64,", ""), encoding="utf-8")
    params = PARAMS.model_copy(update={"contracts_dir": str(contracts)})
    runner = FakeReferenceRunner()
    outcome = run(make_ctx(tmp_path), runner, params)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    (reason,) = outcome.reasons
    assert reason.startswith("no case to compare: images-generations")
    assert runner.jobs == []  # the official side is not run for nothing


def _identity_ctx(tmp_path: Path, **row_axes: str) -> CheckContext:
    ctx = make_ctx(tmp_path, local=False)
    axes = (("model", "sd3-tiny"), ("task", "t2i"), ("api_mode", "images-generations"))
    return dataclasses.replace(ctx, row=RowKey((*axes, *row_axes.items())))


def _built(tmp_path: Path, **options: str) -> ReferenceParityParams:
    (tmp_path / "checkpoint").mkdir(exist_ok=True)
    out = tmp_path / "refs" / "sd3-tiny"
    build_reference_dir(model="sd3-tiny", checkpoint=tmp_path / "checkpoint", out=out, root=ROOT,
                        runner=FakeReferenceRunner(), **options)  # type: ignore[arg-type]  # fmt: skip
    return PARAMS.model_copy(update={"reference": str(out)})


def test_reference_directory_of_another_dtype_is_invalid(tmp_path: Path) -> None:
    params = _built(tmp_path, dtype="fp32")
    outcome = run(_identity_ctx(tmp_path, dtype="bf16"), params=params)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert "made in float32, the target serves bfloat16" in outcome.reasons[0]


def test_reference_directory_of_another_checkpoint_is_invalid(tmp_path: Path) -> None:
    params = _built(tmp_path, checkpoint_sha256="a" * 64)
    ctx = dataclasses.replace(
        _identity_ctx(tmp_path), provenance=Provenance(checkpoint_sha256="b" * 64)
    )
    outcome = run(ctx, params=params)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert "checkpoint sha256 aaaaaaaaaaaa…, the target's bbbbbbbbbbbb…" in outcome.reasons[0]


def test_reference_directory_of_another_pipeline_is_invalid(tmp_path: Path) -> None:
    params = _built(tmp_path)
    assert params.reference is not None
    path = Path(params.reference) / MANIFEST_NAME
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**manifest, "pipeline_class": "StableDiffusionXLPipeline"}))
    outcome = run(_identity_ctx(tmp_path), params=params)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert "made by StableDiffusionXLPipeline, the contract's official" in outcome.reasons[0]


def test_unknown_target_identity_is_said_in_the_effective_settings(tmp_path: Path) -> None:
    params = _built(tmp_path, checkpoint_sha256="a" * 64)
    ctx = dataclasses.replace(_identity_ctx(tmp_path), provenance=Provenance(
        checkpoint_sha256="unknown"))  # fmt: skip
    outcome = run(ctx, params=params)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    identity = outcome.effective["reference_identity"]
    assert isinstance(identity, dict)
    assert identity["pipeline_class"] == "StableDiffusion3Pipeline (as the contract's official)"
    assert str(identity["checkpoint_sha256"]).startswith("not compared: the target's is unknown")
    assert str(identity["dtype"]).startswith("not compared: the target's is unknown")
