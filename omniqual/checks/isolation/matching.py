"""Whether one served output is the same as a truth output: bytes, then decoded media held to
exact equality or to the tolerance, with a closeness score (PSNR for images, the worst frame's
PSNR for video, SNR for audio; infinite for identical) that crossing detection ranks by."""

import math
from dataclasses import dataclass
from typing import Literal

from omniqual.compare import (
    MediaDecodeError,
    ParityTolerance,
    compare_audio,
    compare_image_bytes,
    compare_videos,
    decode_audio,
    decode_video,
    judge,
)

Kind = Literal["image", "video", "audio"]


@dataclass(frozen=True, slots=True)
class Match:
    same: bool
    """Equal under the rule in force (exact, or within the tolerance)."""
    score: float | None
    """Closeness in dB (inf: identical); None when shapes differ or nothing decodes."""
    exact: bool
    problems: tuple[str, ...] = ()
    shape: str | None = None
    """Set when the sizes (frame counts, lengths) disagree: the truth's against the served."""


def match(kind: Kind, truth: bytes, served: bytes, *, exact: bool,
          tolerance: ParityTolerance) -> Match:  # fmt: skip
    if truth == served:
        return Match(True, math.inf, True)
    try:
        if kind == "image":
            return _image(truth, served, exact, tolerance)
        if kind == "video":
            return _video(truth, served, exact, tolerance)
        return _audio(truth, served, exact, tolerance)
    except MediaDecodeError as exc:
        return Match(False, None, False, (f"output does not decode: {str(exc)[:120]}",))


def _image(truth: bytes, served: bytes, exact: bool, tolerance: ParityTolerance) -> Match:
    c = compare_image_bytes(truth, served)
    if not c.same_shape:
        size = f"{c.candidate_shape[1]}x{c.candidate_shape[0]}"
        want = f"{c.reference_shape[1]}x{c.reference_shape[0]}"
        return Match(False, None, False, (f"received {size}, alone {want}",),
                     shape=f"{want} -> {size}")  # fmt: skip
    score = c.psnr_db
    if c.exact_pixels:
        return Match(True, math.inf, True)
    if exact:
        return Match(False, score, False, (f"pixels differ (PSNR {db(score)})",))
    problems = judge(c, tolerance)
    return Match(not problems, score, False, problems)


def _video(truth: bytes, served: bytes, exact: bool, tolerance: ParityTolerance) -> Match:
    c = compare_videos(decode_video(truth), decode_video(served))
    if not (c.frame_count_match and c.size_match):
        got = f"{c.candidate_frames} frames of {c.candidate_size[0]}x{c.candidate_size[1]}"
        want = f"{c.reference_frames} frames of {c.reference_size[0]}x{c.reference_size[1]}"
        return Match(False, None, False, (f"received {got}, alone {want}",),
                     shape=f"{want} -> {got}")  # fmt: skip
    if c.exact_frames:
        return Match(True, math.inf, True)
    if exact:
        worst = db(c.min_psnr_db)
        return Match(False, c.min_psnr_db, False, (f"frames differ (worst PSNR {worst})",))
    problems = judge(c, tolerance)
    return Match(not problems, c.min_psnr_db, False, problems)


def _audio(truth: bytes, served: bytes, exact: bool, tolerance: ParityTolerance) -> Match:
    c = compare_audio(decode_audio(truth), decode_audio(served))
    if not (c.length_match and c.rate_match and c.channels_match):
        return Match(False, None, False, c.mismatches(), shape="; ".join(c.mismatches()))
    if c.exact_samples:
        return Match(True, math.inf, True)
    if exact:
        return Match(False, c.snr_db, False, (f"samples differ (SNR {db(c.snr_db)})",))
    problems = judge(c, tolerance)
    return Match(not problems, c.snr_db, False, problems)


def db(value: float | None) -> str:
    if value is None:
        return "unmeasured"
    return "identical" if math.isinf(value) else f"{value:.1f} dB"


def batching(execution: str | None) -> bool:
    """Whether the row's execution mode may put two requests in one execution."""
    if not execution:
        return False
    mode, _, rest = execution.partition("/")
    capacity = rest.split("+", 1)[0]
    if mode == "request-batch":
        return True
    return mode == "step" and capacity.isdigit() and int(capacity) > 1
