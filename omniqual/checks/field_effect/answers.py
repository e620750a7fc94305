"""Send one request of the gate and compare two answers output by output.

A request is sent through the API contract's own request builder and exchange (``Case``,
``run_case``: the same wire shape per API mode, async jobs polled, fetched and deleted), and every
output it returns is stored content-addressed, so each comparison names its media by sha256. Two
answers are compared with omniqual's media metrics (``omniqual.compare`` through parity's
``compare_media``): identical or not, the lowest PSNR (SNR for audio) over the outputs, and any
difference no run-to-run noise can explain (output count, size, frames, length)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from omniqual.checks.api_contract.cases import Case, probe_files
from omniqual.checks.api_contract.exchange import Timeouts, run_case
from omniqual.checks.base import ArtifactSink
from omniqual.checks.parity.candidate_measured import difference_db
from omniqual.checks.parity.candidate_media import MEDIA_TYPES, compare_media, is_identical
from omniqual.client import ClientError, OmniClient
from omniqual.compare import Comparison, ImageComparison, MediaDecodeError
from omniqual.domain.contract import EndpointContract

OUTPUT_ROLE = "field-effect-output"


@dataclass(frozen=True, slots=True)
class Answer:
    """What one request gave: its outputs (stored, by sha256) or why it gave none."""

    sent: str
    """A short, redacted rendering of the request (what it changes)."""
    media: tuple[bytes, ...]
    sha256: tuple[str, ...]
    status: int | None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Pair:
    """Two answers compared. ``distance_db`` is the lowest PSNR/SNR over the outputs (inf when
    every output is identical), None where a structural difference or a problem leaves none."""

    label: str
    a: Answer
    b: Answer
    identical: bool
    distance_db: float | None
    structural: str | None = None
    """Outputs that differ in count, size, frames or length: beyond any noise."""
    problem: str | None = None
    """Why the two could not be compared (a failed request, an undecodable output)."""

    def describe(self) -> str:
        if self.problem is not None:
            return f"not compared: {self.problem}"
        if self.structural is not None:
            return self.structural
        if self.identical:
            return "identical outputs"
        assert self.distance_db is not None
        return f"outputs {self.distance_db:.1f} dB apart"


def _media_type(kind: str, data: bytes) -> str:
    """What an output is, from its first bytes where an image may be other than PNG."""
    if kind == "image" and data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if kind == "image" and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return MEDIA_TYPES.get(kind, "application/octet-stream")


async def ask(
    client: OmniClient,
    endpoint: EndpointContract,
    values: Mapping[str, JsonValue],
    label: str,
    timeouts: Timeouts,
    sink: ArtifactSink,
    role: str = OUTPUT_ROLE,
) -> Answer:
    """Send ``values`` (with the probe's files) to ``endpoint``; never raises for the target.
    Each output is stored under ``role``."""
    case = Case(
        f"field-effect/{label}",
        endpoint.api_mode,
        None,
        "field-effect",
        dict(values),
        "accepted",
        probe_files(endpoint),
        label,
    )
    try:
        exchange = await run_case(client, case, timeouts)
    except ClientError as exc:
        return Answer(label, (), (), None, f"no answer: {type(exc).__name__}: {exc}"[:300])
    status = exchange.response.status
    if not exchange.response.ok:
        error = exchange.response.error
        message = (
            error.message
            if error is not None
            else exchange.response.body[:160].decode("utf-8", "replace")
        )
        return Answer(label, (), (), status, f"HTTP {status} ({message})"[:300])
    if exchange.problem is not None or not exchange.media:
        why = exchange.problem or "no output in the answer"
        return Answer(label, (), (), status, f"HTTP {status} but {why}"[:300])
    digests = tuple(
        sink.put_artifact(
            data,
            media_type=_media_type(endpoint.output.kind, data),
            role=role,
            name=f"{endpoint.api_mode} {label} #{index}",
        ).sha256
        for index, data in enumerate(exchange.media)
    )
    return Answer(label, tuple(exchange.media), digests, status)


def compare(kind: str, label: str, a: Answer, b: Answer) -> Pair:
    for answer in (a, b):
        if answer.problem is not None:
            return Pair(label, a, b, False, None, problem=f"{answer.sent}: {answer.problem}")
    if len(a.media) != len(b.media):
        counts = f"{len(a.media)} vs {len(b.media)} outputs"
        return Pair(label, a, b, False, None, structural=counts)
    identical, floor = True, math.inf
    for index, (left, right) in enumerate(zip(a.media, b.media, strict=True)):
        if left == right:
            continue
        try:
            comparison = compare_media(kind, left, right)
        except MediaDecodeError as exc:
            return Pair(label, a, b, False, None, problem=f"output {index}: {exc}"[:300])
        structural = _structural(comparison)
        if structural is not None:
            return Pair(label, a, b, False, None, structural=f"output {index}: {structural}")
        if is_identical(comparison):
            continue  # other bytes, the same pixels (or samples)
        value = difference_db(comparison)
        if value is None:
            return Pair(label, a, b, False, None, problem=f"output {index}: no PSNR/SNR")
        identical, floor = False, min(floor, value)
    return Pair(label, a, b, identical, floor)


def _structural(comparison: Comparison) -> str | None:
    if isinstance(comparison, ImageComparison):
        return comparison.shape_mismatch
    found = comparison.mismatches()
    return "; ".join(found) if found else None
