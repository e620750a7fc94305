"""The official pipeline (or vLLM-Omni's offline engine, ``engine``) run live on a local
checkpoint: once per checkpoint and request set.

One subprocess runs the cases of every endpoint of the model's contract (a recipe serving images
and chat, or sync and async video, pays for one pipeline load, not one per row). The outcome is
kept for the life of the process, keyed by everything that decides it (checkpoint, interpreter,
environment, and each case's parameters including its prompt), so a campaign's second row of
the same recipe reuses it: the official pipeline is deterministic for a fixed seed on CPU.
"""

import asyncio
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from omniqual.checks.parity.reference_source import ReferenceSet, collect, reference_job
from omniqual.checks.parity.requests import ParityCase, ParityRequests, parity_cases
from omniqual.deploy.reference_runner import (
    Engine,
    ReferenceJob,
    ReferenceRunner,
    job_record,
    official_class,
    scratch_dir,
)
from omniqual.domain.contract import ModelContract


@dataclass(frozen=True, slots=True)
class LiveReference:
    references: ReferenceSet
    effective: dict[str, JsonValue]
    job_record: str
    """The job as evidence (no prompt text)."""
    log: bytes | None
    reused: bool = False


_RUNS: dict[str, LiveReference] = {}
OFFLINE_PIPELINE = "vllm_omni.Omni"
SOURCES: dict[Engine, str] = {
    "official": "official pipeline, run live",
    "offline": "vLLM-Omni's offline engine (Omni.generate), run live",
}


def _key(job: ReferenceJob, python: str | None, env: dict[str, str]) -> str:
    cases = [c.model_dump(mode="json", exclude={"image"}) | {"image": bool(c.image)}
             for c in job.cases]  # fmt: skip
    doc = {"job": job.model_dump(mode="json", exclude={"cases", "out_dir"}), "cases": cases,
           "python": python, "env": sorted(env.items()),
           "checkpoint": str(Path(job.checkpoint).resolve())}  # fmt: skip
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()


def contract_cases(contract: ModelContract, requests: ParityRequests) -> tuple[ParityCase, ...]:
    cases: list[ParityCase] = []
    for endpoint in contract.endpoints:
        cases += parity_cases(requests, endpoint)
    return tuple(cases)


async def run_live(
    runner: ReferenceRunner,
    contract: ModelContract,
    requests: ParityRequests,
    *,
    checkpoint: Path,
    dtype: str,
    device: str,
    python: str | None,
    env: dict[str, str],
    timeout_s: float,
    reuse: bool,
    engine: Engine = "official",
    engine_args: dict[str, JsonValue] | None = None,
) -> LiveReference:
    """Raises what the runner raises (``ReferenceRunError``) when the reference cannot run."""
    scratch = scratch_dir()
    try:
        pipeline = OFFLINE_PIPELINE if engine == "offline" else official_class(contract.official)
        job = reference_job(contract_cases(contract, requests), checkpoint=checkpoint,
                            pipeline_class=pipeline, dtype=dtype, device=device,
                            out_dir=scratch, engine=engine, engine_args=engine_args)  # fmt: skip
        key = _key(job, python, env)
        if reuse and key in _RUNS:
            cached = _RUNS[key]
            return LiveReference(cached.references, cached.effective, cached.job_record,
                                 cached.log, reused=True)  # fmt: skip
        run = await asyncio.to_thread(runner, job, python=python, env=env, timeout_s=timeout_s)
        log_path = run.out_dir / "run.log"
        log = log_path.read_bytes() if log_path.is_file() else None
        references = collect(run)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = run.result
    effective: dict[str, JsonValue] = {
        "reference_source": SOURCES[engine], "reference_command": list(run.argv),
        "reference_versions": dict(result.versions), "reference_device": result.device,
        "reference_dtype": result.dtype, "reference_pipeline": result.pipeline_class,
        "reference_scheduler": result.scheduler, "generator": result.generator,
        "reference_threads": result.threads, "reference_seconds": run.seconds,
        "reference_load_s": result.load_s, "reference_cases_run": len(result.outputs),
    }  # fmt: skip
    live = LiveReference(references, effective, job_record(job), log)
    if reuse:
        _RUNS[key] = live
    return live
