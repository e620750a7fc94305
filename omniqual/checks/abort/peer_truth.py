"""A peer's solo same-seed output, and whether what it answered beside an abort or a fault is
that output: a peer that merely succeeded may still carry another request's state, so it must
give what it gives alone (production validation, "Abort and cleanup": other requests stay alive
*and correct*). Used by the abort gate (the peer a queued cut waits behind) and the
fault-injection gate (the peers sent beside a faulted or held request).

A peer's truth is its request served alone twice, one after the other, with the seed it is
later sent with, before anything is cut or faulted: the first answer is the truth, the second
tells whether the row reproduces it exactly. Outputs are compared as the isolation gate compares
them (:func:`omniqual.checks.isolation.matching.match`): exactly where every peer reproduced
itself bit for bit (or pixel for pixel) and the row never puts two requests in one execution;
within the tolerance otherwise (batched kernels may reorder reductions, which moves pixels by
rounding, never content). A peer whose two solo runs differ beyond the tolerance has no truth:
what it answers later cannot be judged, and the caller says so (invalid), never passes it.
"""

from dataclasses import dataclass

from omniqual.checks.api_contract.outputs import extract_images

# From matching, not proof: proof imports the abort gate's metrics, so importing it here would
# make the two packages import each other.
from omniqual.checks.isolation.matching import Kind, batching, db, match
from omniqual.client import RawResponse
from omniqual.compare import ParityTolerance
from omniqual.loadgen.workload import EndpointKind

PEER_SEED = 7100
"""The seed of peer 0 (peer i: PEER_SEED + i); apart from every seed the gates send otherwise."""


def peer_tolerance() -> ParityTolerance:
    """The bound a peer's output is held to where the exact rule cannot apply (the isolation
    gate's, for the same reason)."""
    return ParityTolerance(
        rationale="A peer may share a batch with another request: batched kernels may reorder "
        "reductions, which moves pixels by rounding, never content (the isolation gate's "
        "bound, from vLLM-Omni's diffusers-similarity bounds).",
        image={"min_psnr_db": 30.0, "min_ssim": 0.95},
        video={"min_psnr_db": 30.0, "min_ssim": 0.95},
        audio={"min_snr_db": 25.0},
    )  # fmt: skip


def output_kind(endpoint: EndpointKind) -> Kind:
    if endpoint in (EndpointKind.VIDEO_ASYNC, EndpointKind.VIDEO_SYNC):
        return "video"
    return "audio" if endpoint is EndpointKind.AUDIO else "image"


def outputs_of(endpoint: EndpointKind, raw: RawResponse) -> tuple[bytes, ...]:
    """The output media of a successful synchronous answer (images decoded from their JSON or
    archive; a video or audio answer's body); empty when there are none."""
    if not raw.ok or not raw.body:
        return ()
    if output_kind(endpoint) == "image":
        images, _ = extract_images(raw.body, raw.content_type)
        return tuple(images)
    return (raw.body,)


@dataclass(frozen=True, slots=True)
class PeerTruth:
    label: str
    seed: int
    outputs: tuple[bytes, ...]
    exact: bool
    """Its second solo run gave the same outputs exactly."""

    @property
    def named(self) -> str:
        return f"peer {self.label} (seed {self.seed})"


def solo_truth(label: str, seed: int, kind: Kind, first: tuple[bytes, ...],
               second: tuple[bytes, ...], tolerance: ParityTolerance,
               ) -> PeerTruth | str:  # fmt: skip
    """The truth of a peer served alone twice (each run's outputs; empty: that run failed), or
    why it has none."""
    named = f"peer {label} (seed {seed})"
    if not first or not second:
        return f"{named} failed alone ({'first' if not first else 'second'} run): no solo output"
    if len(first) != len(second):
        return f"{named} answered {len(first)} output(s) alone, then {len(second)}"
    pairs = list(zip(first, second, strict=True))
    if all(match(kind, a, b, exact=True, tolerance=tolerance).same for a, b in pairs):
        return PeerTruth(label, seed, first, True)
    spread = [match(kind, a, b, exact=False, tolerance=tolerance) for a, b in pairs]
    if all(m.same for m in spread):
        return PeerTruth(label, seed, first, False)
    worst = min((m.score for m in spread if m.score is not None), default=None)
    return (f"{named} served twice alone differs beyond the tolerance ({db(worst)}): no solo "
            "truth to hold it to")  # fmt: skip


def exact_rule(truths: list[PeerTruth], execution: str | None) -> bool:
    """Whether peers are held to their truth exactly: each reproduced itself exactly alone and
    the row never runs two requests in one execution."""
    return bool(truths) and all(t.exact for t in truths) and not batching(execution)


def differs(truth: PeerTruth, outputs: tuple[bytes, ...], kind: Kind, *, exact: bool,
            tolerance: ParityTolerance) -> str | None:  # fmt: skip
    """None when ``outputs`` are the peer's solo outputs under the rule; else what differs,
    naming the peer and the metric."""
    rule = "exact rule" if exact else "tolerance rule"
    if len(outputs) != len(truth.outputs):
        return (f"{truth.named} answered {len(outputs)} output(s) beside the cut or fault, "
                f"{len(truth.outputs)} alone")  # fmt: skip
    for index, (alone, beside) in enumerate(zip(truth.outputs, outputs, strict=True)):
        found = match(kind, alone, beside, exact=exact, tolerance=tolerance)
        if found.same:
            continue
        at = f" output {index}" if len(outputs) > 1 else ""
        metric = "; ".join(found.problems[:2]) or f"closeness {db(found.score)}"
        return (f"{truth.named}{at} is not its solo same-seed output ({rule}): {metric}")
    return None
