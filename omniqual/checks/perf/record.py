"""The perf gate's raw result JSON: every repetition and the pooled result in vLLM-Omni's
diffusion-benchmark field names, the descriptive fields of its result template (hardware,
parallelism, cache, quantization, offload, compile, attention backend, commit sha, build url),
the environment fingerprint of the measuring host and what the target is (provenance).

Without a vLLM-Omni config the template fields are read from the row's axes; with one, from the
config's serve args (the row still names the hardware). A percentile the pooled samples cannot
support is ``"insufficient (n < N)"`` in its vLLM-Omni field, as bench writes it; the observed
value stays beside it in ``percentiles``, informational.
"""

import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pydantic import JsonValue

from omniqual.checks.perf.params import PerfParams
from omniqual.checks.perf.work import PERCENTILE_FIELDS, Repetition, claimed
from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import Provenance
from omniqual.loadgen.sufficiency import DEFAULT_CONFIDENCE, required_samples


def build_url() -> str | None:
    """The CI build this run belongs to, when the environment says (Jenkins/Buildkite style
    ``BUILD_URL``, or a GitHub Actions run)."""
    if url := os.environ.get("BUILD_URL") or os.environ.get("BUILDKITE_BUILD_URL"):
        return url
    server, repo, run = (os.environ.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY",
                                                     "GITHUB_RUN_ID"))  # fmt: skip
    return f"{server}/{repo}/actions/runs/{run}" if server and repo and run else None


def row_template_fields(row: RowKey, params: PerfParams, commit_sha: str | None) -> dict[str, Any]:
    shape = params.shapes[0]
    return {
        "test_name": f"omniqual-perf:{row.get('model')}:{row.get('api_mode')}",
        "Model": row.get("model") or "", "Framework": "vllm-omni",
        "Hardware": row.get("hardware") or "", "Task": row.get("task") or "",
        "Dataset": "random", "resolution": f"{shape.width}x{shape.height}",
        "Parallelism": row.get("topology") or "", "max_concurrency": params.concurrency,
        "Cache": row.get("cache_policy") or "", "Quantization": row.get("quantization") or "",
        "offload": row.get("offload") or "", "compile": row.get("compile") or "",
        "Attn_backend": row.get("attention_backend") or "",
        "num_inference_steps": shape.steps or 0, "commit_sha": commit_sha or "",
        "build_url": build_url() or "",
    }  # fmt: skip


def pooled(measured: Sequence[Repetition]) -> dict[str, Any]:
    """The measured repetitions as one vLLM-Omni ``result`` block (requests pooled)."""
    latencies = np.array([x for r in measured for x in r.latencies])
    duration = sum(r.duration for r in measured)
    completed = sum(r.completed_requests for r in measured)
    stages: dict[str, list[float]] = {}
    for rep in measured:
        for name, value in rep.stage_durations_mean.items():
            stages.setdefault(name, []).append(value)
    peaks = [r.peak_memory_mb_max for r in measured if r.peak_memory_mb_max is not None]
    samples = [float(x) for x in latencies]
    return {
        "duration": duration, "completed_requests": completed,
        "failed_requests": sum(r.failed_requests for r in measured),
        "throughput_qps": completed / duration if duration > 0 else 0.0,
        "latency_mean": float(latencies.mean()) if latencies.size else None,
        **{name: claimed(samples, p) for name, p in PERCENTILE_FIELDS.items()},
        "percentiles": {name: percentile_claim(samples, p)
                        for name, p in PERCENTILE_FIELDS.items()},
        "peak_memory_mb_max": max(peaks) if peaks else None,
        "peak_memory_mb_mean": float(np.mean(peaks)) if peaks else None,
        "peak_memory_mb_median": float(np.median(peaks)) if peaks else None,
        "stage_durations_mean": {k: float(np.mean(v)) for k, v in sorted(stages.items())},
    }  # fmt: skip


def percentile_claim(samples: list[float], percentile: float) -> dict[str, Any]:
    """A percentile with what backs it: the observed value (informational where the samples
    fall short), their count and how many a claim needs at the sufficiency rule's confidence."""
    needed = required_samples(percentile, confidence=DEFAULT_CONFIDENCE)
    observed = float(np.percentile(np.array(samples), percentile)) if samples else None
    return {"observed": observed, "samples": len(samples), "required": needed,
            "supported": len(samples) >= needed, "confidence": DEFAULT_CONFIDENCE}


def result_document(
    *, params: PerfParams, row: RowKey, repetitions: Sequence[Repetition],
    template: Mapping[str, JsonValue], provenance: Provenance | None,
    environment: Mapping[str, Any], judgement: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    measured = [r for r in repetitions if not r.warmup]
    shape = params.shapes[0]
    return {
        "tool": "omniqual perf", "timestamp": datetime.now(UTC).isoformat(),
        "backend": "vllm-omni", "row": str(row),
        "benchmark_params": {
            "name": shape.name, "dataset": "random", "task": row.get("task") or "",
            "width": shape.width or 0, "height": shape.height or 0,
            "num-inference-steps": shape.steps or 0, "num-prompts": params.requests,
            "max-concurrency": params.concurrency, "request-rate": params.arrival_rps,
            "seed": params.seed,
        },
        "result": pooled(measured),
        "repetitions": [r.fields() for r in repetitions],
        **template,
        "judgement": dict(judgement),
        "provenance": provenance.model_dump(mode="json") if provenance else None,
        "environment": dict(environment),
    }  # fmt: skip
