"""Gate ``parity`` (candidate against its baseline deployment) with in-process fake servers on
both sides, no sockets: each way a candidate can fail has its reason, a candidate passes only
with its fast paths shown at work (or as a limitation where the release cannot show them), and
too few timed repetitions, an unservable reference or an unattributable comparison are
invalid."""

import asyncio
import base64
import io
import json
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from PIL import Image

from omniqual.checks.base import CheckContext, CheckOutcome, ServedReference, TargetInfo
from omniqual.checks.parity.candidate import CandidateParityCheck
from omniqual.checks.parity.candidate_params import CandidateParityParams
from omniqual.checks.parity.candidate_proof import NOT_PROVABLE, SILENT_FALLBACK
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.fake_config import FakeConfig, FakeFaults
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.fake_serial import SerialFakeOmni
from tests.fakes.memory_sink import MemorySink

ROOT = Path(__file__).resolve().parents[4]
SPEC = yaml.safe_load((ROOT / "gates" / "parity.yaml").read_text())
BASELINE = {"execution": "serial/1", "quantization": "none", "offload": "resident",
            "cache_policy": "none", "dtype": "bf16", "topology": "1-device",
            "attention_backend": "sdpa"}  # fmt: skip

Mutate = Callable[[list[bytes]], list[bytes]]


def row(**changed: str) -> RowKey:
    axes = {"model": "sd3-tiny", "task": "t2i", "api_mode": "images-generations",
            **BASELINE, **changed, "output_transport": "b64-json"}  # fmt: skip
    return RowKey(tuple(axes.items()))


def params(**overrides: Any) -> CandidateParityParams:
    return CandidateParityParams.model_validate({**SPEC["params"], **overrides})


class MutatingTransport(httpx.AsyncBaseTransport):
    """The fake's answers with every returned image rewritten by ``mutate``: a candidate that
    returns other media than the server it wraps."""

    def __init__(self, inner: httpx.AsyncBaseTransport, mutate: Mutate) -> None:
        self.inner, self.mutate = inner, mutate

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path != "/v1/images/generations" or response.status_code != 200:
            return response
        body = json.loads(await response.aread())
        images = [base64.b64decode(d["b64_json"]) for d in body["data"]]
        body["data"] = [{"b64_json": base64.b64encode(i).decode()} for i in self.mutate(images)]
        return httpx.Response(200, json=body)


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def wider(images: list[bytes]) -> list[bytes]:
    opened = [Image.open(io.BytesIO(i)).convert("RGB") for i in images]
    return [_png(i.resize((i.width + 16, i.height))) for i in opened]


def one_more(images: list[bytes]) -> list[bytes]:
    return [*images, images[-1]]


def noisy(levels: int) -> Mutate:
    def mutate(images: list[bytes]) -> list[bytes]:
        rng = random.Random(7)
        found = []
        for data in images:
            image = Image.open(io.BytesIO(data)).convert("RGB")
            moved = bytes(min(255, max(0, v + rng.randint(-levels, levels)))
                          for v in image.tobytes())  # fmt: skip
            found.append(_png(Image.frombytes("RGB", image.size, moved)))
        return found

    return mutate


def client_for(fake: FakeOmni, mutate: Mutate | None = None) -> Callable[[], OmniClient]:
    def make() -> OmniClient:
        inner: httpx.AsyncBaseTransport = fake.transport()
        transport = MutatingTransport(inner, mutate) if mutate else inner
        return OmniClient("http://fake.invalid", transport=transport, timeouts=ClientTimeouts())

    return make


FLAGS = {
    "dtype=fp32": ("--dtype", "float32"),
    "execution=request-batch/2+50ms": ("--max-num-seqs", "2", "--request-batch-max-wait-ms", "50"),
    "execution=step/1": ("--step-execution",),
    "offload=layerwise-nopin": ("--diffusion-offload-config", '{"mode":"layer"}'),
    "cache_policy=cache_dit": ("--cache-backend", "cache_dit"),
    "quantization=fp8-online-dit": ("--quantization", "fp8"),
    "topology=cfg-parallel2": ("--cfg-parallel-size", "2"),
    "attention_backend=sage": ("--diffusion-attention-config", '{"default": "SAGE_ATTN"}'),
}
SERVE = ("vllm", "serve", "/models/sd3-tiny", "--omni", "--port", "8000")
SAME = Provenance(model="sd3-tiny", checkpoint_sha256="c" * 64, vllm_omni_version="0.30.0",
                  vllm_version="0.12.0", serve_argv=SERVE)  # fmt: skip


def candidate_provenance(key: RowKey) -> Provenance:
    """The reference's provenance with the candidate's own flags added: attributable."""
    flags = [flag for a, v in key.items for flag in FLAGS.get(f"{a}={v}", ())]
    return SAME.model_copy(update={"serve_argv": (*SERVE, *flags)})


def run(
    key: RowKey,
    p: CandidateParityParams,
    *,
    mutate: Mutate | None = None,
    log: str | None = None,
    tmp_path: Path,
    reference_fails: bool = False,
    candidate: FakeOmni | None = None,
    reference: FakeOmni | None = None,
    provenance: Provenance | None = None,
    reference_again: FakeOmni | None = None,
    recipe: LaunchRecipe | None = None,
) -> tuple[CheckOutcome, MemorySink]:
    sink = MemorySink()
    reference = reference or FakeOmni()
    log_path = None
    if log is not None:
        log_path = tmp_path / "candidate.log"
        log_path.write_text(log)
    served_rows: list[RowKey] = []

    @asynccontextmanager
    async def serve_reference(baseline: RowKey) -> AsyncIterator[ServedReference]:
        served_rows.append(baseline)
        if reference_fails:
            raise RuntimeError("reference server exited with code 1 during startup")
        target = TargetInfo(url="http://reference.invalid", label="reference")
        again = client_for(reference_again) if reference_again is not None else None
        yield ServedReference(baseline, "sd3-tiny", target, client_for(reference),
                              SAME.model_dump(mode="json"), again)  # fmt: skip

    ctx = CheckContext(
        gate=GateSpec(id="parity", kind="candidate_parity", version=2), row=key,
        target=TargetInfo(url="http://fake.invalid", log_path=log_path, label="candidate",
                          recipe=recipe, checkpoint_dir=tmp_path if recipe else None),
        artifacts=sink, project_root=ROOT, make_client=client_for(candidate or FakeOmni(), mutate),
        serve_reference=serve_reference, provenance=provenance or candidate_provenance(key),
    )  # fmt: skip
    outcome = asyncio.run(CandidateParityCheck().run(ctx, p))
    if not reference_fails:
        assert served_rows == [row()], "the reference is the dense BF16 resident baseline row"
    return outcome, sink


FP8_LOG = (
    "# omniqual launch sd3-tiny-fp8 at 2026-11-30T23:31:48+00:00\n"
    "INFO [factory.py:430] Building quantization config: fp8\n"
    "INFO [base_loader.py:122] Quantized 0 layers of types: \n"
)
LAYERWISE_LOG = (
    "INFO [__init__.py:179] Enabling offloader backend: LayerWiseOffloadBackend\n"
    "INFO [layerwise_backend.py:479] Layer-wise offloading enabled on 24 layers (blocks)\n"
)


def test_silently_inactive_fp8_fails_as_silent_fallback(tmp_path: Path) -> None:
    outcome, _ = run(row(quantization="fp8-online-dit"), params(), log=FP8_LOG, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = [r for r in outcome.reasons if SILENT_FALLBACK in r]
    assert "quantized layers = 0" in reason
    assert "0 of 6 outputs differ from the reference beyond its own spread" in reason
    assert "fp8 config lines = 1 (total; active at >= 1), which only shows it switched on" in reason
    identical = {m.name: m.value for m in outcome.measurements}["outputs_identical"]
    assert identical == 6  # 3 prompts x 2 seeds, one image each


def test_inactive_lossy_path_without_any_log_is_still_a_silent_fallback(tmp_path: Path) -> None:
    outcome, _ = run(row(cache_policy="cache_dit"), params(), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any(SILENT_FALLBACK in r for r in outcome.reasons)


def test_an_enabled_cache_that_changes_no_output_is_a_silent_fallback(tmp_path: Path) -> None:
    log = "INFO [backend.py:309] Cache-dit enabled successfully on StableDiffusion3Pipeline\n"
    outcome, _ = run(row(cache_policy="cache_dit"), params(), log=log, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    (reason,) = [r for r in outcome.reasons if SILENT_FALLBACK in r]
    assert "cache-dit enablement lines = 1 (total; active at >= 1), which only shows it " in reason
    assert outcome.requested["request_overrides"] == {"num_inference_steps": 8}


def test_candidate_of_another_size_fails(tmp_path: Path) -> None:
    outcome, _ = run(row(dtype="fp32"), params(), mutate=wider, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("candidate returned 80x64" in r and "reference 64x64" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip


def test_candidate_of_another_count_fails(tmp_path: Path) -> None:
    outcome, _ = run(row(dtype="fp32"), params(), mutate=one_more, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("candidate returned 2 outputs, reference 1" in r for r in outcome.reasons)


def test_noise_beyond_the_dtype_tolerance_fails(tmp_path: Path) -> None:
    outcome, _ = run(row(dtype="fp32"), params(), mutate=noisy(60), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("psnr" in r and "below the minimum 25 dB" in r for r in outcome.reasons)
    worst = {m.name: m.value for m in outcome.measurements}["worst_psnr"]
    assert 14.0 < worst < 22.0  # uniform ±60 levels: about 17 dB


def test_lossy_path_shown_active_by_its_difference_passes_within_tolerance(tmp_path: Path) -> None:
    outcome, _ = run(row(cache_policy="cache_dit"), params(), mutate=noisy(4), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    [signal] = [s for s in outcome.effective["parity"]["signals"] if s["source"] == "output"]
    assert signal["active"] is True


def test_lossless_offload_within_its_exact_tolerance_passes(tmp_path: Path) -> None:
    outcome, sink = run(row(offload="layerwise-nopin"), params(), log=LAYERWISE_LOG,
                        tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    names = {m.name: m for m in outcome.measurements}
    assert names["candidate_latency_median"].samples == 3
    assert names["reference_latency_median"].samples == 3
    assert "latency_delta_median" in names
    pairs = outcome.effective["parity"]["pairs"]
    assert len(pairs) == 6
    first = pairs[0]
    stored = {a.sha256 for a in outcome.artifacts}
    for role in ("reference", "candidate", "reference_thumb", "candidate_thumb", "difference"):
        assert first["files"][role] in stored
    assert all(case.outcome is GateOutcome.PASSED for case in outcome.cases)
    assert not any("a red cube" in name for name in sink.blobs), "prompts never name artifacts"


def test_lossless_offload_with_pixels_changed_fails_its_exact_tolerance(tmp_path: Path) -> None:
    outcome, _ = run(row(offload="layerwise-nopin"), params(), log=LAYERWISE_LOG, mutate=noisy(1),
                     tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    assert any("where exact equality is required" in r for r in outcome.reasons)


def test_batched_candidate_that_finishes_each_pair_together_passes(tmp_path: Path) -> None:
    key = row(execution="request-batch/2+50ms")
    batching = FakeOmni(FakeConfig(image_work_s=0.05))  # concurrent answers share the wait
    outcome, _ = run(key, params(), candidate=batching, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    [timing] = [s for s in outcome.effective["parity"]["signals"] if s["source"] == "timing"]
    assert timing["active"] is True and "3 of 3 groups" in timing["detail"]


def test_a_server_that_never_batches_fails_as_inactive(tmp_path: Path) -> None:
    # Behind a proxy that forwards one request at a time: every pair finishes an execution apart.
    key = row(execution="request-batch/2+50ms")
    serial = SerialFakeOmni(FakeConfig(image_work_s=0.05))
    outcome, _ = run(key, params(), candidate=serial, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if "fast path inactive" in r]
    assert "timing: 0 of 3 groups sent together finished within half an execution" in reason


def test_admission_waves_of_one_request_show_no_batch(tmp_path: Path) -> None:
    log = "".join(
        "INFO [diffusion_engine.py:757] [RequestBatch] admission wait done waiting=1 "
        "max_batch=2 waited_ms=50.1\n"
        for _ in range(6)
    )  # summed they would reach 2: the largest wave counts
    key = row(execution="request-batch/2+50ms")
    outcome, _ = run(key, params(), log=log, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any("requests in the largest admission wave = 1 (largest" in r for r in outcome.reasons)


def test_fp32_that_leaves_every_output_as_bf16_fails_as_silent_fallback(tmp_path: Path) -> None:
    ignoring = FakeOmni(FakeConfig(dtype="fp32", faults=FakeFaults(ignores_dtype=True)))
    outcome, _ = run(row(dtype="fp32"), params(), candidate=ignoring, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if SILENT_FALLBACK in r]
    assert "0 of 6 outputs differ from the reference beyond its own spread (none: all 6 " in reason


def test_fp32_served_for_real_passes_by_its_output_difference(tmp_path: Path) -> None:
    fp32 = FakeOmni(FakeConfig(dtype="fp32"))
    outcome, _ = run(row(dtype="fp32"), params(), candidate=fp32, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["parity"]["reference_spread"].startswith("none: all 6 outputs")


def test_a_difference_inside_the_reference_spread_proves_nothing(tmp_path: Path) -> None:
    jittery = FakeOmni(FakeConfig(faults=FakeFaults(run_jitter=3)))
    fp32 = FakeOmni(FakeConfig(dtype="fp32"))
    outcome, _ = run(row(dtype="fp32"), params(), candidate=fp32, reference=jittery,
                     tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    (reason,) = [r for r in outcome.reasons if "dtype=fp32" in r]
    assert "fast path not shown active" in reason and "proves nothing either way" in reason


def test_the_reference_spread_is_measured_on_a_second_launch_of_the_baseline(
    tmp_path: Path,
) -> None:
    """The first launch answers the same way twice; a second launch does not (launch-to-launch
    nondeterminism). The spread comes from the second launch, so fp32's difference, inside it,
    proves nothing; asked of the first launch alone it would have passed."""
    steady, relaunched = FakeOmni(), FakeOmni(FakeConfig(faults=FakeFaults(run_jitter=3)))
    fp32 = FakeOmni(FakeConfig(dtype="fp32"))
    outcome, _ = run(row(dtype="fp32"), params(), candidate=fp32, reference=steady,
                     reference_again=relaunched, tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any("proves nothing either way" in r for r in outcome.reasons)
    parity = outcome.effective["parity"]
    assert parity["reference_spread_between"] == "two launches of the baseline"  # type: ignore[index,call-overload]


def test_a_step_row_passes_only_as_a_limitation_of_the_row(tmp_path: Path) -> None:
    outcome, _ = run(row(execution="step/1"), params(), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    (limitation,) = outcome.limitations
    assert limitation.startswith(f"execution=step/1: {NOT_PROVABLE} (vLLM-Omni 0.30 logs no")


def test_a_step_row_whose_debug_log_shows_the_step_scheduler_passes(tmp_path: Path) -> None:
    log = "DEBUG [step_scheduler.py:56] StepScheduler add_request: req-1 (step=0/2, waiting=0)\n"
    outcome, _ = run(row(execution="step/1"), params(), log=log, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.limitations == ()


def test_offload_shown_only_switched_on_is_not_shown_active(tmp_path: Path) -> None:
    log = "INFO Enabling offloader backend: LayerWiseOffloadBackend\n"
    outcome, _ = run(row(offload="layerwise-nopin"), params(), log=log, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.INVALID
    assert any("which only shows it switched on" in r for r in outcome.reasons)


def test_a_candidate_on_another_checkpoint_is_not_attributable(tmp_path: Path) -> None:
    key = row(dtype="fp32")
    other = candidate_provenance(key).model_copy(update={"checkpoint_sha256": "d" * 64})
    outcome, _ = run(key, params(), candidate=FakeOmni(FakeConfig(dtype="fp32")),
                     provenance=other, tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID
    assert any("not attributable to the fast path: checkpoint_sha256 differs" in r
               for r in outcome.reasons)  # fmt: skip


def test_a_serve_flag_the_feature_does_not_own_is_not_attributable(tmp_path: Path) -> None:
    key = row(dtype="fp32")
    argv = (*candidate_provenance(key).serve_argv, "--enforce-eager")
    stray = SAME.model_copy(update={"serve_argv": argv})
    outcome, _ = run(key, params(), candidate=FakeOmni(FakeConfig(dtype="fp32")),
                     provenance=stray, tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID
    assert any("flags no feature of the row owns: --enforce-eager" in r for r in outcome.reasons)


def test_a_combined_candidate_is_held_to_each_features_rule(tmp_path: Path) -> None:
    # fp32 changes pixels, offload none: the combination is not held to the offload's exactness
    key = row(offload="layerwise-nopin", dtype="fp32")
    outcome, _ = run(key, params(), candidate=FakeOmni(FakeConfig(dtype="fp32")),
                     log=LAYERWISE_LOG, tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["parity"]["tolerance"] == "exact+dtype"


def test_two_output_changing_features_cannot_prove_each_other(tmp_path: Path) -> None:
    key = row(cache_policy="cache_dit", dtype="fp32")
    outcome, _ = run(key, params(), mutate=noisy(4), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any("not attributable, dtype=fp32 also changes outputs" in r for r in outcome.reasons)


def test_a_cache_below_vllm_omnis_cache_dit_bound_fails(tmp_path: Path) -> None:
    outcome, _ = run(row(cache_policy="cache_dit"), params(), mutate=noisy(20), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED
    assert any("below the minimum 30 dB" in r for r in outcome.reasons), outcome.reasons


def test_fp8_is_judged_on_psnr_and_ssim_alone(tmp_path: Path) -> None:
    """No LPIPS: its backbone weights come from no package index, so it is never computed, and
    neither recorded as a metric nor given as a reason."""
    outcome, _ = run(row(quantization="fp8-online-dit"), params(), mutate=noisy(20),
                     tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    assert any("below the minimum 30 dB" in r for r in outcome.reasons), outcome.reasons
    metrics = outcome.effective["parity"]["pairs"][0]["metrics"]
    assert {"psnr_db", "ssim"} <= set(metrics)
    named = [*metrics, *outcome.reasons, *(m.name for m in outcome.measurements)]
    assert not [name for name in named if "lpips" in name.lower()]


def test_too_few_repetitions_are_invalid(tmp_path: Path) -> None:
    p = params(latency={"warmup": 1, "repetitions": 2})
    outcome, _ = run(row(offload="layerwise-nopin"), p, log=LAYERWISE_LOG, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.INVALID
    assert any("too few latency repetitions on the reference: 2 succeeded, 3 needed" in r
               for r in outcome.reasons)  # fmt: skip


def test_a_declared_signal_that_is_absent_leaves_the_gate_invalid(tmp_path: Path) -> None:
    outcome, _ = run(row(offload="layerwise-nopin"), params(), log="INFO nothing\n",
                     tmp_path=tmp_path)  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID
    assert any("fast path not shown active" in r for r in outcome.reasons)


def test_a_reference_that_cannot_be_served_is_invalid(tmp_path: Path) -> None:
    outcome, _ = run(row(dtype="fp32"), params(), tmp_path=tmp_path, reference_fails=True)
    assert outcome.outcome is GateOutcome.INVALID
    assert "could not serve" in outcome.reasons[0]


def test_the_baseline_row_itself_is_skipped(tmp_path: Path) -> None:
    outcome = asyncio.run(_baseline(tmp_path))
    assert outcome.outcome is GateOutcome.SKIPPED
    assert outcome.reasons == ("the row is its own baseline",)


async def _baseline(tmp_path: Path) -> CheckOutcome:
    ctx = CheckContext(
        gate=GateSpec(id="parity", kind="candidate_parity", version=1), row=row(),
        target=TargetInfo(url="http://fake.invalid"), artifacts=MemorySink(), project_root=ROOT,
        make_client=client_for(FakeOmni()),
    )  # fmt: skip
    return await CandidateParityCheck().run(ctx, params())


def test_a_fast_path_naming_an_undeclared_tolerance_is_a_spec_error() -> None:
    with pytest.raises(ValueError, match="names tolerance 'nope'"):
        params(fast_paths=[{"feature": "dtype=fp32", "lossy": False, "tolerance": "nope",
                            "output_differs": True}])  # fmt: skip


def test_a_fast_path_with_no_proof_and_no_reason_is_a_spec_error() -> None:
    with pytest.raises(ValueError, match="declares no proof of activity"):
        params(fast_paths=[{"feature": "dtype=fp32", "lossy": False, "tolerance": "dtype"}])


FP8_RECIPE = LaunchRecipe.model_validate(
    yaml.safe_load((ROOT / "runners" / "embedded" / "sd3-tiny-fp8.yaml").read_text())
)


def fake_census(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """The runtime dump of the candidate's pipeline, as built with its fp8 flags: two blocks of
    a fused qkv and an output projection carrying ``method``, two outer linears unquantized."""
    from omniqual.checks.parity import candidate_census
    from omniqual.deploy.runtime_params import RuntimeLinear, RuntimeParamList

    found = [RuntimeLinear(name=f"transformer.transformer_blocks.{b}.attn.{n}", layer="Linear",
                           quant_method=method)
             for b in (0, 1) for n in ("to_qkv", "to_out")]  # fmt: skip
    found += [RuntimeLinear(name=f"transformer.{n}", layer="ReplicatedLinear",
                            quant_method="UnquantizedLinearMethod")
              for n in ("context_embedder", "proj_out")]  # fmt: skip

    def dump(checkpoint: Path, **options: Any) -> RuntimeParamList:
        assert options["quantization"] == ("--quantization", "fp8")
        return RuntimeParamList(source="meta-instantiation", pipeline_class="Sd3", dtype="bfloat16",
                                components=(), linears=tuple(found))  # fmt: skip

    monkeypatch.setattr(candidate_census, "dump_runtime_params", dump)


def test_fp8_whose_census_quantized_nothing_fails_though_outputs_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded SD3 fp8 row: its linears take no quant config, so the census shows zero
    fp8 linears; outputs that differ (by any other cause) prove nothing about fp8."""
    fake_census(monkeypatch, "UnquantizedLinearMethod")
    outcome, _ = run(row(quantization="fp8-online-dit"), params(), mutate=noisy(4),
                     tmp_path=tmp_path, recipe=FP8_RECIPE)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if SILENT_FALLBACK in r]
    assert "census: 0 of 6 linears carry a quant method matching" in reason
    census = outcome.effective["parity"]["census"]["quantization=fp8-online-dit"]
    assert census["quantized"] == 0 and census["linears"] == 6
    assert census["prefixes"]["transformer.transformer_blocks.*.attn.to_qkv"] == {
        "UnquantizedLinearMethod": 2
    }


def test_fp8_with_quantized_linears_and_differing_outputs_passes_with_its_census(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_census(monkeypatch, "Fp8PerTensorOnlineLinearMethod")
    outcome, sink = run(row(quantization="fp8-online-dit"), params(), mutate=noisy(4),
                        tmp_path=tmp_path, recipe=FP8_RECIPE)  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    census = outcome.effective["parity"]["census"]["quantization=fp8-online-dit"]
    assert census["quantized"] == 4 and census["args"] == ["--quantization", "fp8"]
    assert census["prefixes"]["transformer.transformer_blocks.*.attn.to_out"] == {
        "Fp8PerTensorOnlineLinearMethod": 2
    }
    assert "module-census.json" in sink.blobs

