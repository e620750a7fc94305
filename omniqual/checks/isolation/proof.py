"""Proof that the requests of a round met in the server, so a clean round says something.

Three signals, any of which proves a round:

- ``/metrics`` gauges: ``vllm_omni:num_requests_running`` + ``num_requests_waiting`` sampled
  during the round reached 2 (vLLM-Omni 0.30 counts a diffusion request in flight as waiting
  on CPU, so the sum counts; a queued request is in the server as much as a running one);
- parallel timing: the round finished within ``parallel_span_fraction`` of its requests' summed
  solo service times, which only computing at least partly at once allows;
- on a batching row (``request-batch/*``, ``step/N`` with N > 1), a shared execution: two
  requests whose service windows overlapped finished within half a solo service time of each
  other (one execution, not two back to back), as parity's batch proof measures it.

Client windows that overlap are recorded but prove nothing alone: a server that accepts one
connection at a time overlaps them too."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.abort.work import RUNNING, WAITING, parse_work_metrics
from omniqual.checks.isolation.exchange import Served
from omniqual.client import ClientError, OmniClient


def batching(execution: str | None) -> bool:
    """Whether the row's execution mode may put two requests in one execution."""
    if not execution:
        return False
    mode, _, rest = execution.partition("/")
    capacity = rest.split("+", 1)[0]
    if mode == "request-batch":
        return True
    return mode == "step" and capacity.isdigit() and int(capacity) > 1


@dataclass(slots=True)
class GaugeSampler:
    """Polls ``/metrics`` while a round runs: the most requests seen in the server at once."""

    client: OmniClient
    poll_s: float
    peak: int | None = None
    samples: int = 0
    present: bool = False

    async def _poll(self) -> None:
        while True:
            try:
                found = parse_work_metrics(await self.client.metrics_text())
            except ClientError:
                found = {}
            if RUNNING in found or WAITING in found:
                self.present = True
                seen = int(found.get(RUNNING, 0.0) + found.get(WAITING, 0.0))
                self.peak = seen if self.peak is None else max(self.peak, seen)
            self.samples += 1
            await asyncio.sleep(self.poll_s)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator["GaugeSampler"]:
        self.peak, self.samples = None, 0
        task = asyncio.create_task(self._poll())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@dataclass(frozen=True, slots=True)
class Meeting:
    met: bool
    peak_in_server: int | None
    overlapping_pairs: int
    span_s: float
    solo_sum_s: float
    parallel: bool
    finished_together: bool
    how: str
    """The signals that proved it (or, when none did, what was measured)."""


def judge_meeting(served: Sequence[Served], solo_s: Mapping[str, float], peak: int | None,
                  *, batch_row: bool, span_fraction: float) -> Meeting:  # fmt: skip
    pairs = together = 0
    shortest = min(solo_s[s.label] for s in served)
    for i, a in enumerate(served):
        for b in served[i + 1 :]:
            if a.started_s < b.finished_s and b.started_s < a.finished_s:
                pairs += 1
                both_ok = a.ok and b.ok
                together += both_ok and abs(a.finished_s - b.finished_s) < shortest / 2
    span = max(s.finished_s for s in served) - min(s.started_s for s in served)
    solo_sum = sum(solo_s[s.label] for s in served)
    parallel = span < span_fraction * solo_sum
    signals = []
    if peak is not None and peak >= 2:
        signals.append(f"/metrics showed {peak} requests in the server at once")
    if parallel:
        signals.append(f"finished in {span:.2f} s, under {span_fraction:g} of the "
                       f"{solo_sum:.2f} s they take one after another")  # fmt: skip
    if batch_row and together:
        signals.append(f"{together} overlapping pair(s) finished within half a solo service "
                       f"time ({shortest / 2 * 1000:.0f} ms) of each other")  # fmt: skip
    if signals:
        how = "; ".join(signals)
    else:
        gauges = "no running/waiting gauges" if peak is None else f"at most {peak} in the server"
        how = (f"{gauges}; took {span:.2f} s against {solo_sum:.2f} s one after another; "
               f"{pairs} client-side overlapping pair(s)")  # fmt: skip
    return Meeting(bool(signals), peak, pairs, span, solo_sum, parallel, bool(together), how)
