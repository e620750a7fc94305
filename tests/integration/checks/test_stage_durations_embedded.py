"""What the real embedded target (vLLM-Omni 0.30 on CPU, bundled sd3-tiny) reports about its own
work, and that the load binding records it: with ``--enable-diffusion-pipeline-profiler`` every
stage of the accounting (queue, encode, denoise, decode) plus the peak memory; the rest (client
latency minus the stages) stays positive. The profiled server is the session pool's (launch key
sd3-tiny plus the profiler flag): the tests only send requests. Skipped without vllm_omni."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from omniqual.checks.load_binding import OmniSend
from omniqual.client import OmniClient
from omniqual.domain.stage_accounting import STAGES, account
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS
from tests.integration.embedded.shared_servers import LaunchKey, SharedServer, SharedServers

pytestmark = EMBEDDED_MARKS
PROFILER = "flags.enable-diffusion-pipeline-profiler=true"
SHARED_SERVERS = [LaunchKey("sd3-tiny", (PROFILER,))]
"""The session-shared server this module borrows."""


@pytest.fixture(scope="module")
def profiled(shared_servers: SharedServers) -> Iterator[SharedServer]:
    with shared_servers.borrow("sd3-tiny", PROFILER) as target:
        yield target


def _send(url: str, kind: EndpointKind, count: int) -> list[tuple[SendOutcome, float]]:
    async def go() -> list[tuple[SendOutcome, float]]:
        found = []
        async with OmniClient(url) as client:
            send = OmniSend(client)
            shape = RequestParams(64, 64, None, 2, 8, None, 7, ())
            for i in range(count):
                planned = PlannedRequest(i, 0.0, "small", "t2i", kind, shape)
                started = time.perf_counter()
                outcome = await send(planned)
                found.append((outcome, time.perf_counter() - started))
        return found

    return asyncio.run(go())


@pytest.mark.parametrize("kind", [EndpointKind.IMAGE, EndpointKind.CHAT])
def test_profiled_server_fills_every_stage(profiled: SharedServer, kind: EndpointKind) -> None:
    sent = _send(profiled.url, kind, 4)
    assert all(o.status is OutcomeStatus.OK for o, _ in sent), [o for o, _ in sent]
    samples = [(latency, {n.removeprefix("stage:"): v for n, v in o.server_timings_s
                          if n.startswith("stage:")}, o.peak_memory_mb)
               for o, latency in sent]  # fmt: skip
    found = account(samples)
    print(f"\n{kind.value}: " + ", ".join(f"{f.stage} p50 {f.p50_s * 1000:.2f} ms"
                                          for f in (*found.stages, found.rest) if f))  # fmt: skip
    assert [f.stage for f in found.stages] == list(STAGES) and not found.missing
    assert "stage_0_gen" in found.other_names  # the engine's total: kept apart, never summed
    assert found.rest is not None and found.rest.p50_s > 0
    assert found.peak_memory_mb_max is not None and found.peak_memory_mb_max > 100
