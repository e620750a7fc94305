"""The ``reference_parity`` check kind (SKILL Gate 1.2): served output against the official
implementation on the same checkpoint.

The request set comes from the gate spec (:mod:`omniqual.checks.parity.requests`): prompts ×
seeds × shapes on the contract's probe of the row's endpoint. Each is sent to the deployment;
the official diffusers pipeline the contract's ``official:`` names runs the same requests once,
in a subprocess with the target's Python (:mod:`omniqual.deploy.reference_runner`), on the local
checkpoint in the served dtype. A target without a local checkpoint is compared against a
reference directory (``omniqual reference build``): the ``reference`` param, else
``<references_dir>/<model>``. Per case both media are stored content-addressed and the metrics
recorded; a mismatch beyond the modality's tolerance fails the gate. A reference that cannot
run, a reference case that raised, or a reference directory that does not verify or was made
from other requests makes the gate ``invalid``: nothing was measured against the official side.
So does a request set that leaves no case to compare: a gate never passes on nothing compared.

With ``implementation: offline`` the other side is vLLM-Omni's own offline engine
(``Omni.generate``, :mod:`omniqual.deploy.offline_pipeline`) built with the recipe's serve flags
on the local checkpoint (SKILL G0-08: the offline and served paths normalize a request alike); a
reference directory holds official outputs and is never read for it.
"""

import json
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, JsonValue, ValidationError

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.checks.parity.reference_dir import (
    ReferenceDirError,
    TargetIdentity,
    identity_mismatches,
    load_reference_dir,
    request_mismatch,
)
from omniqual.checks.parity.reference_judge import judge_case
from omniqual.checks.parity.reference_live import run_live
from omniqual.checks.parity.reference_pictures import picture_entry
from omniqual.checks.parity.reference_source import ReferenceSet
from omniqual.checks.parity.requests import ParityCase, ParityRequests, parity_cases, send_case
from omniqual.client import ClientError
from omniqual.compare.tolerance import ParityTolerance
from omniqual.deploy.reference_runner import (
    Engine,
    ReferenceRunError,
    ReferenceRunner,
    official_class,
    offline_engine_args,
    run_reference,
    torch_dtype,
)
from omniqual.domain.contract import ModelContract
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import UNKNOWN
from omniqual.specs.contracts import contract_path, load_contract
from omniqual.specs.source import SpecError

Kind = Literal["image", "video", "audio"]
_SIDE: dict[Engine, str] = {"official": "the official pipeline", "offline": "the offline engine"}
_REFERENCE_ROW: dict[Engine, str] = {
    "official": "the official implementation (diffusers), same checkpoint",
    "offline": "vLLM-Omni's offline engine (Omni.generate), same checkpoint and serve flags",
}
_MEDIA_SUFFIX = {"image": "png", "video": "mp4", "audio": "wav"}


class ReferenceParityParams(CheckParams):
    contracts_dir: str = "gates/contracts"
    requests: ParityRequests
    tolerances: dict[Kind, ParityTolerance] = Field(
        description="Per modality, each with its rationale; a modality without one fails."
    )
    reference: str | None = Field(
        default=None, description="A reference directory (relative to the project); else the "
        "local checkpoint, else <references_dir>/<model>.",
    )  # fmt: skip
    references_dir: str = ".omniqual/references"
    implementation: Engine = Field(
        default="official", description="official: the diffusers pipeline the contract names; "
        "offline: vLLM-Omni's Omni.generate on the local checkpoint with the recipe's flags.",
    )  # fmt: skip
    python: str | None = Field(default=None, description="The target environment's interpreter.")
    env: dict[str, str] = Field(default_factory=dict)
    dtype: str | None = Field(default=None, description="Default: the recipe's, else the row's.")
    device: str = "cpu"
    reference_timeout_s: float = Field(default=900.0, gt=0)
    request_timeout_s: float = Field(default=300.0, gt=0)
    job_timeout_s: float = Field(default=600.0, gt=0)
    poll_interval_s: float = Field(default=0.25, gt=0)


class ReferenceParityCheck:
    kind: ClassVar[str] = "reference_parity"
    params_model: ClassVar[type[CheckParams]] = ReferenceParityParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    def __init__(self, runner: ReferenceRunner = run_reference) -> None:
        self.runner = runner

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, ReferenceParityParams)
        model, api_mode = ctx.row.get("model"), ctx.row.get("api_mode")
        if not model or not api_mode:
            return _invalid("the row names no model or api_mode: nothing to compare")
        try:
            contract = load_contract(contract_path(ctx.project_root / params.contracts_dir, model))
        except (SpecError, OSError) as exc:
            return _invalid(f"no usable contract for {model}: {exc}")
        endpoint = contract.endpoint(api_mode)
        if endpoint is None:
            return _invalid(f"contract {model} has no endpoint {api_mode}")
        try:
            cases = parity_cases(params.requests, endpoint)
        except ValueError as exc:
            return _invalid(str(exc))
        if not cases:
            # A size, frame or length axis with no value (the probe has none and the request
            # set names none) leaves no case: nothing compared is nothing passed.
            return _invalid(
                f"no case to compare: {api_mode} of {model}'s contract gives no shape (its probe"
                f" has no value for the output's shape fields and the gate's requests name none)"
            )
        served, transport = await self._serve(ctx, params, cases)
        ctx.progress("running the official implementation", 0.6)
        artifacts: list[Artifact] = []
        try:
            references, effective = await self._references(ctx, params, contract, cases, artifacts)
        except (ReferenceRunError, ReferenceDirError, ValidationError, ValueError, OSError) as exc:
            return _invalid(f"reference cannot run: {exc}", artifacts=tuple(artifacts))
        ctx.progress("comparing", 0.9)
        return self._judge(ctx, params, cases, served, transport, references, effective, artifacts)

    async def _serve(
        self, ctx: CheckContext, params: ReferenceParityParams, cases: tuple[ParityCase, ...]
    ) -> tuple[dict[str, list[bytes]], dict[str, str]]:
        """Media per case; a case without media has its reason in the second map."""
        timeouts = Timeouts(params.request_timeout_s, params.job_timeout_s, params.poll_interval_s)
        served: dict[str, list[bytes]] = {}
        problems: dict[str, str] = {}
        async with ctx.make_client() as client:
            for index, case in enumerate(cases):
                ctx.progress(f"served request {index + 1}/{len(cases)}", 0.5 * index / len(cases))
                try:
                    exchange = await send_case(client, case, timeouts)
                except ClientError as exc:
                    problems[case.id] = f"{type(exc).__name__}: {str(exc)[:200]}"
                    continue
                if not exchange.response.ok:
                    problems[case.id] = f"HTTP {exchange.response.status}"
                elif exchange.problem is not None:
                    problems[case.id] = exchange.problem
                else:
                    served[case.id] = exchange.media
        return served, problems

    async def _references(
        self,
        ctx: CheckContext,
        params: ReferenceParityParams,
        contract: ModelContract,
        cases: tuple[ParityCase, ...],
        artifacts: list[Artifact],
    ) -> tuple[ReferenceSet, dict[str, object]]:
        offline = params.implementation == "offline"
        directory = None if offline else self._reference_dir(ctx, params, contract.model)
        if directory is not None:
            loaded = load_reference_dir(directory)
            manifest = loaded.manifest
            if manifest.model != contract.model:
                raise ReferenceDirError(f"{directory} holds references of {manifest.model}")
            mismatches = [m for c in cases if (m := request_mismatch(c, manifest))]
            if mismatches:
                raise ReferenceDirError("; ".join(mismatches[:6]))
            identity = TargetIdentity(
                official_class(contract.official),
                self._checkpoint_sha256(ctx),
                self._dtype(ctx, params),
            )
            wrong, said = identity_mismatches(manifest, identity)
            if wrong:
                raise ReferenceDirError("; ".join(wrong))
            return loaded.references, {
                "reference_identity": said,
                "reference_source": f"directory {directory}",
                "reference_command": list(manifest.command),
                "reference_versions": manifest.versions, "reference_device": manifest.device,
                "reference_dtype": manifest.dtype, "reference_pipeline": manifest.pipeline_class,
                "reference_scheduler": manifest.scheduler, "generator": manifest.generator,
            }  # fmt: skip
        checkpoint = ctx.target.checkpoint_dir
        recipe = ctx.target.recipe
        if offline and (checkpoint is None or not checkpoint.is_dir()):
            raise ReferenceDirError("the offline engine runs on the target's local checkpoint, "
                                    "and this target's is not local")  # fmt: skip
        if checkpoint is None or not checkpoint.is_dir():
            raise ReferenceDirError(
                f"the target's checkpoint is not local and no reference directory exists (looked"
                f" for {Path(params.references_dir) / contract.model}); make one with"
                f" `omniqual reference build`"
            )
        engine_args = offline_engine_args(recipe.flags) if offline and recipe else {}
        live = await run_live(
            self.runner, contract, params.requests, checkpoint=checkpoint,
            dtype=self._dtype(ctx, params) or "bfloat16", device=params.device,
            python=params.python, env={**(recipe.effective_env() if recipe else {}), **params.env},
            timeout_s=params.reference_timeout_s, reuse=self.runner is run_reference,
            engine=params.implementation, engine_args=engine_args,
        )  # fmt: skip
        artifacts.append(_json(ctx, live.job_record, "reference-job"))
        if live.log is not None:
            log = ctx.artifacts.put_artifact(
                live.log, media_type="text/plain", role="reference-log", name="reference.log"
            )
            artifacts.append(log)
        return live.references, {**live.effective, "reference_reused": live.reused}

    @staticmethod
    def _reference_dir(ctx: CheckContext, params: ReferenceParityParams, model: str) -> Path | None:
        if params.reference:
            path = Path(params.reference)
            return path if path.is_absolute() else ctx.project_root / path
        if ctx.target.checkpoint_dir is not None and ctx.target.checkpoint_dir.is_dir():
            return None
        conventional = ctx.project_root / params.references_dir / model
        return conventional if conventional.is_dir() else None

    @staticmethod
    def _dtype(ctx: CheckContext, params: ReferenceParityParams) -> str | None:
        """The served dtype (torch's name) as the gate, the recipe or the row declares it."""
        recipe = ctx.target.recipe
        flag = recipe.flags.get("dtype") if recipe is not None else None
        declared = params.dtype or (str(flag) if flag else None) or ctx.row.get("dtype")
        return torch_dtype(declared) if declared else None

    @staticmethod
    def _checkpoint_sha256(ctx: CheckContext) -> str | None:
        """The target's checkpoint hash as its results record it; None where unknown (a URL
        deployment reports none)."""
        recorded = ctx.provenance.checkpoint_sha256 if ctx.provenance is not None else None
        return recorded if recorded and recorded != UNKNOWN else None

    def _judge(
        self,
        ctx: CheckContext,
        params: ReferenceParityParams,
        cases: tuple[ParityCase, ...],
        served: dict[str, list[bytes]],
        transport: dict[str, str],
        references: ReferenceSet,
        effective: dict[str, object],
        artifacts: list[Artifact],
    ) -> CheckOutcome:
        failures: list[str] = []
        invalid: list[str] = []
        results: list[CaseResult] = []
        measurements: list[Measurement] = []
        metrics: dict[str, list[dict[str, object]]] = {}
        pairs: list[JsonValue] = []
        for case in cases:
            reference = references.media.get(case.id)
            got = served.get(case.id)
            outcome, note = GateOutcome.PASSED, ""
            if case.id in transport:
                outcome, note = (
                    GateOutcome.FAILED,
                    f"the deployment gave no media: {transport[case.id]}",
                )
                failures.append(f"{case.id}: {note}")
            elif reference is None:
                error = references.errors.get(case.id, "the reference produced no output")
                outcome, note = GateOutcome.INVALID, f"reference cannot run: {error}"
                invalid.append(f"{case.id}: {note}")
            if got is not None:
                artifacts += self._store(ctx, case, got, "served")
            if reference is not None:
                artifacts += self._store_reference(ctx, case, reference.items, reference.media_type)
            if reference is not None and got is not None:
                judged = judge_case(case.id, case.kind, reference, got,
                                    params.tolerances.get(case.kind),  # type: ignore[call-overload]
                                    _SIDE[params.implementation])  # fmt: skip
                measurements += judged.measurements
                metrics[case.id] = [m.model_dump(mode="json") for m in judged.measurements]
                for index, comparison, beyond in judged.compared:
                    label = case.id if len(reference.items) == 1 else f"{case.id}#{index}"
                    entry, pictures = picture_entry(
                        ctx.artifacts, case_id=case.id, index=index, label=label, kind=case.kind,
                        reference=reference.items[index], served=got[index],
                        comparison=comparison, failures=beyond,
                    )  # fmt: skip
                    pairs.append(entry)
                    artifacts += pictures
                failures += judged.failures
                note = judged.summary if not judged.failures else "; ".join(judged.failures)[:400]
                outcome = GateOutcome.FAILED if judged.failures else GateOutcome.PASSED
            results.append(CaseResult(
                id=case.id, endpoint=case.api_mode,
                sent=f"seed {case.seed}, prompt #{case.prompt_index}",
                expected_status="within tolerance", observed_status=outcome.value,
                outcome=outcome, note=note[:400],
            ))  # fmt: skip
        artifacts.append(_json(ctx, json.dumps(metrics, indent=1), "parity-metrics"))
        compared = sum(1 for r in results if r.outcome in (GateOutcome.PASSED, GateOutcome.FAILED))
        measurements.append(Measurement(name="cases_compared", value=compared, unit="count",
                                        samples=len(cases)))  # fmt: skip
        measurements.append(Measurement(name="cases_beyond_tolerance", value=len(
            [r for r in results if r.outcome is GateOutcome.FAILED]), unit="count", bound=0,
            ok=not failures))  # fmt: skip
        if not compared and not failures:
            invalid.insert(0, f"no case was compared: 0 of {len(cases)} cases have both media")
        reasons = failures[:40] + invalid[:20]
        kinds = sorted({c.kind for c in cases})
        # The run report draws reference | served | difference per output from this block.
        gallery: dict[str, JsonValue] = {
            "reference_row": _REFERENCE_ROW[params.implementation],
            "reference_recipe": str(effective.get("reference_source", "")),
            "tolerance": ", ".join(kinds),
            "tolerance_rationale": " | ".join(
                params.tolerances[k].rationale for k in kinds if k in params.tolerances
            ),
            "pairs": pairs,
        }
        return CheckOutcome(
            verdict(failures, invalid=invalid), tuple(reasons), measurements=tuple(measurements),
            artifacts=tuple(artifacts), cases=tuple(results),
            requested={"cases": len(cases), "prompts": len(params.requests.prompts),
                       "seeds": list(params.requests.seeds),
                       "tolerances": {k: v.model_dump(mode="json")
                                      for k, v in params.tolerances.items()}},
            effective={**effective, "parity": gallery},  # type: ignore[dict-item]
        )  # fmt: skip

    @staticmethod
    def _store(
        ctx: CheckContext, case: ParityCase, items: list[bytes], side: str
    ) -> list[Artifact]:
        suffix = _MEDIA_SUFFIX[case.kind]
        return [ctx.artifacts.put_artifact(
            data, media_type=f"{case.kind}/{'mp4' if case.kind == 'video' else suffix}",
            role=f"{side}-{case.kind}", name=f"{side}-{case.id.replace('/', '_')}-{i}.{suffix}",
        ) for i, data in enumerate(items)]  # fmt: skip

    @staticmethod
    def _store_reference(
        ctx: CheckContext, case: ParityCase, items: tuple[bytes, ...], media_type: str
    ) -> list[Artifact]:
        suffix = {"image/png": "png", "audio/wav": "wav"}.get(media_type, "npy")
        return [ctx.artifacts.put_artifact(
            data, media_type=media_type, role=f"reference-{case.kind}",
            name=f"reference-{case.id.replace('/', '_')}-{i}.{suffix}",
        ) for i, data in enumerate(items)]  # fmt: skip


def _invalid(reason: str, artifacts: tuple[Artifact, ...] = ()) -> CheckOutcome:
    return CheckOutcome(GateOutcome.INVALID, (reason,), artifacts=artifacts)


def _json(ctx: CheckContext, text: str, role: str) -> Artifact:
    return ctx.artifacts.put_artifact(
        text.encode("utf-8"), media_type="application/json", role=role, name=f"{role}.json"
    )
