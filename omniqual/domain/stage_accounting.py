"""Stage accounting: where a request's client-side latency went, by the stages the server reports
(``stage_durations``): queue, encode, denoise, decode, and the rest (latency − the sum of the
classified stages, never folded into a stage).

vLLM-Omni's names are mapped to the four stages by :func:`stage_of`: the pipeline profiler
(``--enable-diffusion-pipeline-profiler``) names methods (``<Pipeline>.text_encoder.forward``,
``.diffuse``, ``.vae.decode``), the engine adds ``queue_wait`` with or without it. Totals that
contain the parts (``stage_N_gen``, ``<Pipeline>.forward``) and names not recognised are kept
as "other" and never summed, so the rest is not made negative by double counting.
"""

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

STAGES = ("queue", "encode", "denoise", "decode")
PROFILER_FLAG = "--enable-diffusion-pipeline-profiler"

_TOTAL = re.compile(r"(^stage_\d+_gen$)|(^[^.]+\.forward$)|(^e2e)|(^inference$)")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("queue", re.compile(r"queue")),
    ("denoise", re.compile(r"(\.diffuse$)|(denoise)")),
    ("decode", re.compile(r"(vae\.decode)|(\.decode$)|(postprocess)")),
    ("encode", re.compile(r"(text_encoder)|(tokenizer)|(vae\.encode)|(encode_prompt)|(image_enc)")),
    ("encode", re.compile(r"preprocess")),
)
_FROZEN = ConfigDict(extra="ignore", frozen=True)


def stage_of(name: str) -> str | None:
    """The stage a reported name belongs to, or None (a total or an unknown name)."""
    if _TOTAL.search(name):
        return None
    for stage, pattern in _RULES:
        if pattern.search(name):
            return stage
    return None


class StageFigure(BaseModel):
    model_config = _FROZEN

    stage: str
    samples: int
    mean_s: float
    p50_s: float


class StageAccounting(BaseModel):
    """Per stage over the requests that reported it; ``rest`` over requests with a latency."""

    model_config = _FROZEN

    requests: int
    """Requests answered OK with a client latency."""
    reporting: int
    """Of those, requests that reported any stage."""
    latency: StageFigure | None = None
    stages: list[StageFigure] = []
    rest: StageFigure | None = None
    other_names: list[str] = []
    """Reported names outside the four stages (totals such as stage_0_gen, unknown names)."""
    missing: list[str] = []
    """Of the four stages, those no request reported."""
    peak_memory_mb_max: float | None = None
    peak_memory_mb_mean: float | None = None
    """The server's own per-request peak memory figure (``peak_memory_mb``), when reported."""
    note: str = ""


def _figure(stage: str, values: Sequence[float]) -> StageFigure:
    return StageFigure(stage=stage, samples=len(values), mean_s=statistics.fmean(values),
                       p50_s=statistics.median(values))  # fmt: skip


def account(
    samples: Iterable[tuple[float, Mapping[str, float], float | None]],
) -> StageAccounting:
    """From (client latency s, reported stage seconds by name, reported peak MB) per OK
    request."""
    per_stage: dict[str, list[float]] = {s: [] for s in STAGES}
    latencies: list[float] = []
    rests: list[float] = []
    others: set[str] = set()
    reporting = 0
    peaks: list[float] = []
    for latency, reported, peak in samples:
        latencies.append(latency)
        if peak is not None:
            peaks.append(peak)
        sums: dict[str, float] = {}
        for name, seconds in reported.items():
            stage = stage_of(name)
            if stage is None:
                others.add(name)
            else:
                sums[stage] = sums.get(stage, 0.0) + seconds
        for stage, seconds in sums.items():
            per_stage[stage].append(seconds)
        if reported:
            reporting += 1
            rests.append(latency - sum(sums.values()))
    missing = [s for s in STAGES if not per_stage[s]]
    note = ""
    if {"encode", "denoise", "decode"} & set(missing):
        note = (f"encode/denoise/decode are reported only by a server started with "
                f"{PROFILER_FLAG}; without them the rest holds all pipeline time")  # fmt: skip
    return StageAccounting(
        requests=len(latencies), reporting=reporting,
        latency=_figure("latency", latencies) if latencies else None,
        stages=[_figure(s, v) for s, v in per_stage.items() if v],
        rest=_figure("rest", rests) if rests else None,
        other_names=sorted(others), missing=missing, note=note,
        peak_memory_mb_max=max(peaks) if peaks else None,
        peak_memory_mb_mean=statistics.fmean(peaks) if peaks else None,
    )  # fmt: skip
