"""Proof that the requests of a round met in the server, so a clean round says something.

Only answers served successfully count: a round meets only when at least two of its requests
were answered with their outputs while their windows overlapped, and one of three signals shows
the server computed them at once (a refusal is no meeting: a deployment answering 429 to every
request sent while another is in flight serves one request at a time). The signals:

- ``/metrics`` gauges: ``vllm_omni:num_requests_running`` + ``num_requests_waiting`` sampled
  during the round reached 2 (vLLM-Omni 0.30 counts a diffusion request in flight as waiting
  on CPU, so the sum counts; a queued request is in the server as much as a running one);
- parallel timing: the served answers finished within ``parallel_span_fraction`` of their
  summed (warm) solo service times, which only computing at least partly at once allows;
- on a batching row (``request-batch/*``, ``step/N`` with N > 1), a shared execution: two
  requests whose service windows overlapped finished within half a solo service time of each
  other (one execution, not two back to back), as parity's batch proof measures it.

Client windows that overlap are recorded but prove nothing alone: a server that accepts one
connection at a time overlaps them too. Answers with an error status sent while another request
was in flight are counted as refused: a gate whose rounds never met but saw refusals was turned
away by the server, not left without a signal (``unmet_findings``)."""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass

from omniqual.checks.abort.work import RUNNING, WAITING, parse_work_metrics
from omniqual.checks.isolation.exchange import Served
from omniqual.client import ClientError, OmniClient


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
    """Pairs of successfully served answers whose client windows overlapped."""
    span_s: float
    solo_sum_s: float
    parallel: bool
    finished_together: bool
    how: str
    """The signals that proved it (or, when none did, what was measured)."""
    served: int = 0
    """Answers that carried their outputs."""
    refused: int = 0
    """Error answers (an HTTP status) to requests sent while another was in flight."""
    refusal: str = ""
    """The first refusal, ``HTTP 429: <message>``."""


def _overlap(a: Served, b: Served) -> bool:
    return a.started_s < b.finished_s and b.started_s < a.finished_s


def judge_meeting(served: Sequence[Served], solo_s: Mapping[str, float], peak: int | None,
                  *, batch_row: bool, span_fraction: float) -> Meeting:  # fmt: skip
    ok = [s for s in served if s.ok]
    refused = [s for s in served if s.status is not None and s.status >= 400
               and any(_overlap(s, o) for o in served if o is not s)]  # fmt: skip
    refusal = (f"HTTP {refused[0].status}: {refused[0].error}".strip().rstrip(":")
               if refused else "")  # fmt: skip
    pairs = together = 0
    shortest = min((solo_s[s.label] for s in ok), default=0.0)
    for i, a in enumerate(ok):
        for b in ok[i + 1 :]:
            if _overlap(a, b):
                pairs += 1
                together += abs(a.finished_s - b.finished_s) < shortest / 2
    # Timing counts the served answers only: a refused one took no service time, and summing
    # its solo time would let a round of one served request look four times parallel.
    basis = ok or list(served)
    span = max(s.finished_s for s in basis) - min(s.started_s for s in basis)
    solo_sum = sum(solo_s[s.label] for s in ok)
    parallel = bool(pairs) and span < span_fraction * solo_sum
    signals = []
    if pairs and peak is not None and peak >= 2:
        signals.append(f"/metrics showed {peak} requests in the server at once")
    if parallel:
        signals.append(f"{len(ok)} served answers finished in {span:.2f} s, under "
                       f"{span_fraction:g} of the {solo_sum:.2f} s they take one after "
                       "another")  # fmt: skip
    if batch_row and together:
        signals.append(f"{together} overlapping pair(s) finished within half a solo service "
                       f"time ({shortest / 2 * 1000:.0f} ms) of each other")  # fmt: skip
    turned = f"; {len(refused)} refused while another was in flight ({refusal})" if refused else ""
    if signals:
        how = "; ".join(signals) + turned
    else:
        gauges = "no running/waiting gauges" if peak is None else f"at most {peak} in the server"
        how = (f"{len(ok)} of {len(served)} answered with outputs{turned}; {gauges}; "
               f"took {span:.2f} s against {solo_sum:.2f} s one after another; {pairs} "
               "overlapping pair(s) of served answers")  # fmt: skip
    return Meeting(bool(signals), peak, pairs, span, solo_sum, parallel, bool(together), how,
                   len(ok), len(refused), refusal)  # fmt: skip


def unmet_findings(meetings: Sequence[tuple[str, Meeting]],
                   patterns: Sequence[str]) -> tuple[list[str], list[str]]:  # fmt: skip
    """(failures, invalid reasons) for rounds that never met: overall, or per pattern.

    Why a refusal fails the gate rather than leaving it invalid: the harness did send the
    requests together (their windows overlapped) and the server answered each one, turning
    away those that arrived while another was in flight. Every vLLM-Omni execution mode admits
    concurrent requests (``serial/1`` queues them, batch and step modes compute them together),
    so a row qualified for isolation claims to serve concurrent clients; a deployment that
    refuses all concurrency does not, and its isolation would be vacuous, never proven. Only
    when nothing was refused and no signal still showed a meeting (no gauges on a server that
    takes one connection at a time, sends the client could not overlap) did the harness lack
    the means to prove it: that stays invalid."""
    failed: list[str] = []
    invalid: list[str] = []
    if not meetings:
        return failed, ["requests never met in the server: no round was sent"]
    groups = ([("", [m for _, m in meetings])] if not any(m.met for _, m in meetings)
              else [(p, [m for q, m in meetings if q == p]) for p in patterns])  # fmt: skip
    for pattern, group in groups:
        if not group or any(m.met for m in group):
            continue
        refused = [m for m in group if m.refused]
        if refused:
            which = f"the {pattern} rounds" if pattern else "the server"
            failed.append(f"{which} never served two requests at once: "
                          f"{sum(m.refused for m in refused)} request(s) sent while another "
                          f"was in flight were refused (first: {refused[0].refusal}) and no "
                          f"{f'{pattern} ' if pattern else ''}round had two answered together; "
                          "a deployment that refuses concurrent requests does not serve them "
                          "in isolation")  # fmt: skip
        elif pattern:
            invalid.append(f"the {pattern} rounds never met in the server: {group[-1].how}")
        else:
            invalid.append("requests never met in the server: no round showed two requests "
                           f"in it at once (last round: {group[-1].how})")  # fmt: skip
    return failed, invalid
