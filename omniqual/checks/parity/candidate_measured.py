"""Measured proof of a fast path at work, from what the two deployments answered.

Outputs: the reference answers every case twice, the second time on a second launch of the
baseline (on the one deployment when it was given by URL); the lowest PSNR (SNR for audio)
between its two passes is its own spread. A candidate output shows its path at work only
when it lies further from the reference than that spread: a difference inside it proves nothing
(the path is then not shown active), while outputs identical to a reference that is identical to
itself show the path did not act.
And only when no other feature of the row changes outputs too (it could be the other one's).

Shared execution: a batching path answers cases sent together in one execution, so they finish
together; a server that runs them one after another (or a proxy that forwards one at a time)
finishes them a whole execution apart. One execution is the median of the solo timed runs."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.parity.candidate_collect import CaseOutput, SideRun
from omniqual.checks.parity.candidate_media import OutputPair, compare_media
from omniqual.checks.parity.candidate_proof import Signal
from omniqual.compare import (
    AudioComparison,
    Comparison,
    ImageComparison,
    MediaDecodeError,
    VideoComparison,
)

MIN_EXECUTION_S = 0.01
"""Below this a solo execution is too short for finish times to tell one execution from two."""


def difference_db(comparison: Comparison | None) -> float | None:
    """How close two outputs are, in dB (higher is closer; inf when identical)."""
    if isinstance(comparison, ImageComparison):
        return comparison.psnr_db
    if isinstance(comparison, VideoComparison):
        return comparison.min_psnr_db
    if isinstance(comparison, AudioComparison):
        return comparison.snr_db
    return None


@dataclass(frozen=True, slots=True)
class Spread:
    """The reference against itself: its lowest PSNR/SNR over every output (inf when its second
    pass was identical), or None with why it could not be measured."""

    floor_db: float | None
    outputs: int = 0
    problem: str | None = None

    def describe(self) -> str:
        if self.floor_db is None:
            return f"not measured ({self.problem})"
        if math.isinf(self.floor_db):
            return f"none: all {self.outputs} outputs identical on its second pass"
        return f"{self.floor_db:.1f} dB at worst over {self.outputs} outputs between its passes"


def reference_spread(
    kind: str, first: Mapping[str, CaseOutput], second: Mapping[str, CaseOutput]
) -> Spread:
    if not second:
        return Spread(None, problem="the reference answered each case once only")
    floors: list[float] = []
    for case_id, answer in first.items():
        again = second.get(case_id)
        if again is None or answer.problem or again.problem:
            why = again.problem if again is not None and again.problem else answer.problem
            return Spread(None, problem=f"{case_id}: no second answer to compare ({why})")
        if len(again.media) != len(answer.media):
            counts = f"{len(again.media)} outputs, the first {len(answer.media)}"
            return Spread(None, problem=f"{case_id}: the second pass returned {counts}")
        for a, b in zip(answer.media, again.media, strict=True):
            try:
                value = difference_db(compare_media(kind, a, b))
            except MediaDecodeError as exc:
                return Spread(None, problem=f"{case_id}: undecodable second answer: {exc}")
            if value is None:
                return Spread(None, problem=f"{case_id}: no PSNR/SNR between the two passes")
            floors.append(value)
    if not floors:
        return Spread(None, problem="no output to compare")
    return Spread(min(floors), len(floors))


def output_signal(
    feature: str, pairs: Sequence[OutputPair], spread: Spread, others: Sequence[str]
) -> Signal:
    """Active when some candidate output lies beyond the reference's own spread."""
    if others:
        why = f"output: not attributable, {', '.join(others)} also changes outputs"
        return Signal(feature, "output", None, why)
    if spread.floor_db is None:
        return Signal(
            feature, "output", None, f"output: the reference's spread {spread.describe()}"
        )
    values = [difference_db(p.comparison) for p in pairs if p.comparison is not None]
    if not values:
        return Signal(feature, "output", None, "output: no output pair to compare")
    beyond = sum(v is not None and v < spread.floor_db for v in values)
    detail = (f"output: {beyond} of {len(values)} outputs differ from the reference beyond its "
              f"own spread ({spread.describe()})")  # fmt: skip
    if beyond == 0 and not math.isinf(spread.floor_db):
        # The reference differs from itself: outputs inside that proves neither way.
        return Signal(feature, "output", None, f"{detail}, which proves nothing either way")
    return Signal(feature, "output", beyond > 0, detail)


def shared_execution_signal(feature: str, run: SideRun) -> Signal:
    """Active when most groups sent together finished within half an execution of each other."""
    gaps: list[float] = []
    for group in run.groups:
        answers = [run.outputs[c] for c in group if c in run.outputs]
        finished = [a.finished_s for a in answers if a.problem is None and a.finished_s is not None]
        if len(group) > 1 and len(finished) == len(group):
            gaps.append(max(finished) - min(finished))
    if not gaps:
        return Signal(feature, "timing", None, "timing: no group of cases answered together")
    solo = run.latency.median_s
    if solo is None or solo < MIN_EXECUTION_S:
        shown = "unmeasured" if solo is None else f"{solo * 1000:.1f} ms"
        return Signal(feature, "timing", None, f"timing: one execution ({shown}) too short to "
                                               "tell one execution from two")  # fmt: skip
    shared = sum(gap < solo / 2 for gap in gaps)
    detail = (
        f"timing: {shared} of {len(gaps)} groups sent together finished within half an "
        f"execution ({solo * 500:.0f} ms) of each other; widest gap {max(gaps) * 1000:.0f} ms"
    )
    return Signal(feature, "timing", shared * 2 > len(gaps), detail)
