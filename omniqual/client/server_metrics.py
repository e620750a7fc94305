"""The per-request figures vLLM-Omni reports about its own work: ``stage_durations`` and
``peak_memory_mb``.

Where they travel (vLLM-Omni 0.30): image generations/edits carry a top-level ``metrics``
object; chat completions put them on each ``choices[].message.content[]`` item (and may carry a
top-level ``metrics``); a video job's status JSON has them at the top level; some builds add
``usage.peak_memory_mb``; older proxies sent ``X-Stage-Durations`` / ``X-Peak-Memory-MB``
headers. Every place is read, the first one holding a figure wins.

Units: the pipeline profiler (``--enable-diffusion-pipeline-profiler``) reports stages such as
``StableDiffusion3Pipeline.diffuse`` in seconds, while the engine adds ``queue_wait_ms`` and
``stage_0_gen_ms`` in milliseconds whether or not the profiler is on. A name ending in ``_ms`` is
converted to seconds and loses the suffix, so every value here is seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omniqual.client.errors import ClientError
from omniqual.client.raw import RawResponse


@dataclass(frozen=True, slots=True)
class ServerMetrics:
    """What the server said about one request; empty when it said nothing."""

    stage_durations_s: tuple[tuple[str, float], ...] = ()
    peak_memory_mb: float | None = None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def normalize_stages(stages: Any) -> tuple[tuple[str, float], ...]:
    """``{name: value}`` as (name, seconds) pairs; ``*_ms`` names are milliseconds."""
    if not isinstance(stages, Mapping):
        return ()
    found: list[tuple[str, float]] = []
    for name, value in stages.items():
        number = _number(value)
        if number is None or not isinstance(name, str):
            continue
        if name.endswith("_ms"):
            found.append((name[: -len("_ms")], number / 1000.0))
        else:
            found.append((name, number))
    return tuple(found)


def _holders(doc: Any) -> list[Mapping[str, Any]]:
    """The objects of a response body that may carry the figures, in order of preference."""
    if not isinstance(doc, Mapping):
        return []
    holders: list[Mapping[str, Any]] = []
    for choice in doc.get("choices") or ():
        message = choice.get("message") if isinstance(choice, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            holders += [item for item in content if isinstance(item, Mapping)]
    holders += [m for m in (doc.get("metrics"), doc, doc.get("usage")) if isinstance(m, Mapping)]
    return holders


def metrics_from_doc(doc: Any) -> ServerMetrics:
    """The figures in a parsed JSON body (chat item, ``metrics``, job JSON, ``usage``)."""
    stages: tuple[tuple[str, float], ...] = ()
    peak: float | None = None
    for holder in _holders(doc):
        if not stages:
            stages = normalize_stages(holder.get("stage_durations"))
        if peak is None:
            value = _number(holder.get("peak_memory_mb"))
            # vLLM-Omni sends 0.0 when it measured nothing (a fresh job, a CPU worker build
            # without peak stats): absent, not zero.
            peak = value if value else None
    return ServerMetrics(stages, peak)


def server_metrics(raw: RawResponse) -> ServerMetrics:
    """The figures of one HTTP answer: its JSON body first, then the legacy headers."""
    found = ServerMetrics()
    if raw.content_type.startswith("application/json") and raw.body:
        try:
            found = metrics_from_doc(raw.json())
        except ClientError:  # a body that is not JSON carries no figures
            found = ServerMetrics()
    stages = found.stage_durations_s or normalize_stages(raw.stage_durations or {})
    peak = found.peak_memory_mb if found.peak_memory_mb is not None else raw.peak_memory_mb
    return ServerMetrics(stages, peak)
