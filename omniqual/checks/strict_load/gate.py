"""The ``strict_load`` check kind (SKILL Gate 1.1, rules SL-01..SL-06): make loading strict.

It holds the checkpoint (safetensors headers and index files only) to the serving model's
parameter list (vLLM-Omni's pipeline built on the meta device in a subprocess, or a
deployment-written manifest) through the model's mapping spec (``gates/load-mappings/*.yaml``).
Every unexpected tensor, missing parameter, incomplete fused destination, shape or dtype
disagreement, reasonless ignore and corrupt header or index is one reason, and so is an empty
runtime parameter list (nothing would be checked). Two cases go beyond the mapping:
``load-weights-scan`` (SL-06) reads the model's own source files for parameters written with
``.data.copy_`` on a load path, and ``doctored-startup`` (SL-03) starts the row's recipe once on a
copy of the checkpoint without one retained tensor, which must abort naming it (the only server
this gate starts; absent on a deployment given by URL). Evidence: the header inventory, the
runtime parameter list, the mapping result, the scan and the doctored start-up with its log.
"""

import asyncio
import json
from pathlib import Path
from typing import ClassVar, Literal

import yaml
from pydantic import Field, ValidationError

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, verdict
from omniqual.checks.strict_load.dispatch_scan import dispatch_case
from omniqual.checks.strict_load.doctored_startup import doctored_startup
from omniqual.checks.strict_load.mapping import ComponentResult, map_component
from omniqual.checks.strict_load.source_scan import scan_case
from omniqual.deploy.checkpoint_index import CheckpointInventory, inventory_checkpoint
from omniqual.deploy.runtime_params import (
    RuntimeParamList,
    RuntimeParamsError,
    dump_runtime_params,
    load_manifest,
)
from omniqual.domain.evidence import Artifact, Measurement
from omniqual.domain.load_mapping import LoadMappingSpec
from omniqual.domain.outcomes import GateOutcome


class StrictLoadParams(CheckParams):
    mappings_dir: str = Field(default="gates/load-mappings", description="Relative to the project.")
    mapping: str | None = Field(default=None, description="One mapping file; else chosen by class.")
    runtime: Literal["meta", "manifest"] = "meta"
    manifest: str | None = Field(default=None, description="Runtime manifest (runtime: manifest).")
    dtype: str | None = Field(default=None, description="Serving dtype; default: recipe or bf16.")
    python: str | None = Field(default=None, description="Interpreter of the serving environment.")
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(default=600.0, gt=0)
    max_reasons: int = Field(default=60, ge=1)
    doctored_startup: bool = Field(
        default=True, description="Start the recipe on a checkpoint missing a retained tensor."
    )
    doctored_deadline_s: float = Field(
        default=300.0, gt=0, description="The doctored start-up must have aborted by then."
    )


def find_mapping(directory: Path, pipeline_class: str) -> tuple[Path, LoadMappingSpec] | None:
    for path in sorted(directory.glob("*.yaml")):
        spec = LoadMappingSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        if pipeline_class in spec.pipeline_classes:
            return path, spec
    return None


def map_checkpoint(
    inventory: CheckpointInventory, runtime: RuntimeParamList, spec: LoadMappingSpec
) -> tuple[list[ComponentResult], list[str]]:
    """Per-component results plus the checkpoint-wide findings (index, coverage, skips)."""
    findings: list[str] = []
    listed = sum(len(c.params) for c in runtime.components) + len(runtime.unowned)
    if listed == 0:
        # Nothing to hold the checkpoint to: zero findings would prove nothing (a broken dump,
        # an empty manifest, or a pipeline built without its modules).
        findings.append(
            f"the runtime parameter list of {runtime.pipeline_class} is empty (source"
            f" {runtime.source}, {len(runtime.components)} component(s)): strict loading was"
            " not checked"
        )
    for component in inventory.components:
        findings += component.problems
    results: list[ComponentResult] = []
    for served in runtime.components:
        mapping = spec.components.get(served.name)
        if mapping is None:
            findings.append(
                f"mapping {spec.id} has no entry for component {served.name!r}"
                f" ({served.loader} {served.class_name}); its loading is unchecked"
            )
            continue
        folder = served.subfolder or "."
        found = inventory.component(folder)
        if found is None:
            findings.append(f"{served.name}: checkpoint has no weights in {folder}/")
        results.append(map_component(found, served, mapping))
        findings += results[-1].findings
    loaded_from = {c.subfolder or "." for c in runtime.components}
    for component in inventory.components:
        if component.component in loaded_from:
            continue
        skip = spec.skip_components.get(component.component)
        if skip is None:
            findings.append(
                f"unexpected checkpoint component {component.component}/"
                f" ({len(component.tensors)} tensors): the serving pipeline loads nothing from it"
            )
        elif not (skip.reason or "").strip():
            findings.append(f"skip of component {component.component}/ has no reason")
    for param in runtime.unowned:
        findings.append(f"missing runtime parameter {param.name!r}: it belongs to no component")
    return results, findings


class StrictLoadCheck:
    kind: ClassVar[str] = "strict_load"
    params_model: ClassVar[type[CheckParams]] = StrictLoadParams
    # The checkpoint and one launch of its own (the doctored start-up): it runs alone, never
    # beside the row's own start-up, where a second copy of the model loading onto the same
    # devices could exhaust their memory and fail the row's server instead of this gate.
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, StrictLoadParams)
        root = ctx.target.checkpoint_dir
        if root is None or not root.is_dir():
            return CheckOutcome(
                GateOutcome.INVALID, (f"strict-load needs a checkpoint directory; got {root}",)
            )
        ctx.progress("reading safetensors headers", 0.05)
        inventory = await asyncio.to_thread(inventory_checkpoint, root)
        artifacts = [self._json(ctx, inventory.model_dump_json(indent=1), "header-inventory")]
        recipe = ctx.target.recipe
        dtype = params.dtype or (str(recipe.flags["dtype"]) if recipe and recipe.flags.get("dtype")
                                 else "bfloat16")  # fmt: skip
        ctx.progress("listing the serving model's parameters", 0.15)
        try:
            runtime = await self._runtime(ctx, params, root, dtype)
        except (RuntimeParamsError, OSError, ValidationError, ValueError) as exc:
            return CheckOutcome(
                GateOutcome.INVALID, (f"runtime parameter list unavailable: {exc}",),
                artifacts=tuple(artifacts),
            )  # fmt: skip
        artifacts.append(self._json(ctx, runtime.model_dump_json(indent=1), "runtime-params"))
        if params.mapping:
            path = ctx.project_root / params.mapping
            spec = LoadMappingSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
            chosen: tuple[Path, LoadMappingSpec] | None = (path, spec)
        else:
            chosen = find_mapping(ctx.project_root / params.mappings_dir, runtime.pipeline_class)
        if chosen is None:
            return CheckOutcome(
                GateOutcome.INVALID,
                (f"no mapping in {params.mappings_dir} lists pipeline {runtime.pipeline_class}",),
                artifacts=tuple(artifacts),
            )
        path, spec = chosen
        results, findings = map_checkpoint(inventory, runtime, spec)
        if runtime.pipeline_class not in spec.pipeline_classes:
            findings.append(f"mapping {spec.id} is not for pipeline {runtime.pipeline_class}")
        result_doc = {
            "mapping": spec.id, "mapping_file": path.name, "runtime_source": runtime.source,
            "findings": findings, "components": [r.model_dump(mode="json") for r in results],
        }  # fmt: skip
        artifacts.append(self._json(ctx, json.dumps(result_doc, indent=1), "mapping-result"))
        scan = scan_case(ctx.artifacts, runtime, spec)
        dispatch = dispatch_case(ctx.artifacts, runtime, spec)
        doctored = await doctored_startup(
            ctx, enabled=params.doctored_startup, deadline_s=params.doctored_deadline_s,
            inventory=inventory, runtime=runtime, results=results, spec=spec,
        )  # fmt: skip
        failures = [*findings, *scan.failures, *dispatch.failures, *doctored.failures]
        invalid = [*scan.invalid, *dispatch.invalid, *doctored.invalid]
        reasons = failures[: params.max_reasons]
        if len(failures) > len(reasons):
            reasons.append(f"... and {len(failures) - len(reasons)} more (see mapping-result)")
        reasons += invalid
        count = sum(len(c.tensors) for c in inventory.components)
        expected = sum(r.expected for r in results)
        loaded = sum(len(r.loaded) for r in results)
        ignored = sum(len(r.ignored) for r in results)
        measurements = (
            Measurement(name="checkpoint_tensors", value=count, unit="count"),
            Measurement(name="expected_params", value=expected, unit="count"),
            Measurement(name="loaded_params", value=loaded, unit="count"),
            Measurement(name="ignored", value=ignored, unit="count"),
            Measurement(
                name="findings", value=len(findings), unit="count", bound=0, ok=not findings
            ),
            *scan.measurements,
            *doctored.measurements,
        )
        return CheckOutcome(
            verdict(failures, invalid=invalid), tuple(reasons), measurements=measurements,
            artifacts=(*artifacts, *scan.artifacts, *dispatch.artifacts, *doctored.artifacts),
            cases=(scan.case, dispatch.case, doctored.case),
            requested={"runtime": params.runtime, "dtype": dtype,
                       "doctored_startup": params.doctored_startup},
            effective={"runtime_source": runtime.source, "pipeline_class": runtime.pipeline_class,
                       "mapping": spec.id, "vllm_omni_version": runtime.vllm_omni_version,
                       "load_weights_scan": scan.summary, "dispatch_scan": dispatch.summary,
                       "doctored_startup": doctored.summary},
        )  # fmt: skip

    async def _runtime(
        self, ctx: CheckContext, params: StrictLoadParams, root: Path, dtype: str
    ) -> RuntimeParamList:
        if params.runtime == "manifest":
            if not params.manifest:
                raise ValueError("runtime: manifest needs `manifest` (a path)")
            path = Path(params.manifest)
            return load_manifest(path if path.is_absolute() else root / path)
        recipe = ctx.target.recipe
        env = {**(recipe.effective_env() if recipe else {}), **params.env}
        class_name = recipe.flags.get("model-class-name") if recipe else None
        return await asyncio.to_thread(
            dump_runtime_params, root, python=params.python, dtype=dtype, env=env,
            model_class_name=str(class_name) if class_name else None, timeout_s=params.timeout_s,
        )  # fmt: skip

    @staticmethod
    def _json(ctx: CheckContext, text: str, role: str) -> Artifact:
        return ctx.artifacts.put_artifact(
            text.encode("utf-8"), media_type="application/json", role=role, name=f"{role}.json"
        )
