"""``omniqual reference build``: make a reference directory once, where the checkpoint is.

The request set and the model's contract are the ones the ``reference-parity`` gate uses; every
endpoint of the contract gets its cases, all run in one reference subprocess. The directory
(manifest plus media, :mod:`omniqual.checks.parity.reference_dir`) is what the gate compares a
deployment against when its checkpoint is not local.
"""

import hashlib
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from omniqual.checks.parity.reference import ReferenceParityParams
from omniqual.checks.parity.reference_dir import (
    ReferenceManifest,
    manifest_case,
    write_reference_dir,
)
from omniqual.checks.parity.reference_source import collect, reference_job
from omniqual.checks.parity.requests import ParityCase, parity_cases
from omniqual.deploy.reference_runner import (
    ReferenceRunner,
    official_class,
    run_reference,
    scratch_dir,
    torch_dtype,
)
from omniqual.deploy.state import omniqual_home
from omniqual.domain.gate import GateSpec
from omniqual.domain.recipe import LaunchRecipe, RecipeKind
from omniqual.specs.contracts import contract_path, load_contract
from omniqual.specs.source import load_spec

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BuiltReference:
    manifest_path: Path
    cases: int
    failed_cases: tuple[str, ...]
    """Cases the official pipeline raised on (recorded in the manifest with their error)."""


def build_reference_dir(
    *,
    model: str,
    checkpoint: Path,
    out: Path,
    root: Path,
    gate: str = "reference-parity",
    dtype: str = "bf16",
    python: str | None = None,
    env: dict[str, str] | None = None,
    checkpoint_sha256: str | None = None,
    runner: ReferenceRunner = run_reference,
) -> BuiltReference:
    spec, _ = load_spec(root / "gates" / f"{gate}.yaml", GateSpec)
    params = ReferenceParityParams.model_validate(spec.params)
    contract = load_contract(contract_path(root / params.contracts_dir, model))
    cases: list[ParityCase] = []
    for endpoint in contract.endpoints:
        cases += parity_cases(params.requests, endpoint)
    scratch = scratch_dir()
    try:
        job = reference_job(tuple(cases), checkpoint=checkpoint, dtype=torch_dtype(dtype),
                            pipeline_class=official_class(contract.official),
                            device=params.device, out_dir=scratch)  # fmt: skip
        run = runner(job, python=python or params.python, env={**params.env, **(env or {})},
                     timeout_s=params.reference_timeout_s)  # fmt: skip
        references = collect(run)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = run.result
    entries = [manifest_case(c, references.media.get(c.id), references.errors.get(c.id))
               for c in cases]  # fmt: skip
    manifest = ReferenceManifest(
        model=model, official=contract.official, pipeline_class=result.pipeline_class,
        checkpoint=str(checkpoint), checkpoint_sha256=checkpoint_sha256, dtype=result.dtype,
        device=result.device, scheduler=result.scheduler, generator=result.generator,
        versions=result.versions, command=run.argv, cases=tuple(entries),
    )  # fmt: skip
    path = write_reference_dir(out, manifest, references.media)
    logger.info("wrote reference directory %s (%d cases)", out, len(entries))
    return BuiltReference(path, len(entries), tuple(sorted(references.errors)))


def manifest_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True, slots=True)
class RecipeCheckpoint:
    model: str
    checkpoint: Path
    dtype: str
    env: dict[str, str]
    checkpoint_sha256: str | None


def recipe_checkpoint(recipe: LaunchRecipe) -> RecipeCheckpoint:
    """The local checkpoint a recipe serves (an embedded one is built, cached), its row's model
    and served dtype. A URL recipe has none: its references are made where the checkpoint is."""
    model = recipe.row.get("model")
    if not model:
        raise ValueError(f"recipe {recipe.id} declares no row model (its contract is unknown)")
    dtype = str(recipe.flags.get("dtype") or recipe.row.get("dtype") or "bf16")
    if recipe.kind is RecipeKind.EMBEDDED and recipe.pipeline is not None:
        from omniqual.deploy.embedded.catalog import build_checkpoint

        built = build_checkpoint(recipe.pipeline, omniqual_home() / "checkpoints")
        return RecipeCheckpoint(model, Path(built.path), dtype, recipe.effective_env(),
                                manifest_sha256(Path(built.manifest_path)))  # fmt: skip
    local = Path(recipe.model) if recipe.model else None
    if local is None or not local.is_dir():
        raise ValueError(f"recipe {recipe.id} has no local checkpoint directory")
    return RecipeCheckpoint(model, local, dtype, recipe.effective_env(), None)
