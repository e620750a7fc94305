"""One launch of the cache-tiers gate measured: its outputs per seed (the quality pass), the
fixed work timed ``repetitions`` times after ``warmup`` passes (latency: the mean per request of
one pass over the seeds), the cache hits each measured request logged, and the alternation.

The alternation, after the timed passes: the first seed's request again at a changed step count
(``alternate_steps``, the second seed), then the first seed's request at ``steps`` once more. On
the lossless launch it gives the lossless output at the changed step count; on a point, the
middle output (when the cache served none of its steps) must equal that lossless output, and the
last must equal the point's own first answer: a policy or cache state left over from the
request before it changes them (a leak)."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.checks.cache_tiers.hits import Hits, LogTail, hits_in
from omniqual.checks.cache_tiers.params import CacheTiersParams
from omniqual.checks.load_binding import wire_call
from omniqual.client import NO_JSON, ClientError, OmniClient
from omniqual.client.decoding import images_result
from omniqual.loadgen.workload import EndpointKind, PlannedRequest, RequestParams

Ask = Callable[[OmniClient, CacheTiersParams, EndpointKind, int, int],
               Awaitable[tuple[bytes | None, str | None]]]  # fmt: skip
"""(client, params, endpoint, seed, steps) -> (the image, or why there is none)."""


async def ask_image(
    client: OmniClient, params: CacheTiersParams, endpoint: EndpointKind, seed: int, steps: int
) -> tuple[bytes | None, str | None]:
    request = RequestParams(width=params.width, height=params.height, num_frames=None,
                            steps=steps, prompt_tokens=8, guidance_scale=None, seed=seed,
                            extra=())  # fmt: skip
    call = wire_call(PlannedRequest(seed, 0.0, "cache-tiers", "t2i", endpoint, request))
    try:
        raw = await client.send_raw(call.method, call.path,
                                    json=NO_JSON if call.json is None else call.json,
                                    data=call.data, files=list(call.files) or None,
                                    timeout_s=params.request_timeout_s)  # fmt: skip
        if not raw.ok:
            return None, f"HTTP {raw.status}"
        images = images_result(raw).images
    except (ClientError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return (images[0], None) if images else (None, "no image in the answer")


@dataclass(slots=True)
class LaunchRun:
    outputs: dict[int, bytes] = field(default_factory=dict)
    latencies_s: list[float] = field(default_factory=list)
    """Per timed pass, the mean latency per request."""
    hits: list[Hits | None] = field(default_factory=list)
    """Per measured request (quality pass and timed passes), what the log showed."""
    problems: list[str] = field(default_factory=list)
    middle: bytes | None = None
    middle_hits: Hits | None = None
    again: bytes | None = None

    @property
    def cached(self) -> int | None:
        """Cached steps over every measured request (None: no request's log was read)."""
        read = [h.cached for h in self.hits if h is not None]
        return sum(read) if read else None


async def measure_launch(
    make_client: Callable[[], OmniClient], log_path: Path | None, params: CacheTiersParams,
    endpoint: EndpointKind, ask: Ask,
) -> LaunchRun:  # fmt: skip
    run = LaunchRun()
    loop = asyncio.get_running_loop()
    async with make_client() as client:
        for _ in range(params.warmup):
            for seed in params.seeds:
                await ask(client, params, endpoint, seed, params.steps)
        tail = LogTail(log_path)

        async def one(seed: int, steps: int) -> tuple[bytes | None, float, Hits | None]:
            began = loop.time()
            image, problem = await ask(client, params, endpoint, seed, steps)
            elapsed = loop.time() - began
            text = tail.read()
            if problem is not None:
                run.problems.append(f"seed {seed}, {steps} steps: {problem}")
            return image, elapsed, hits_in(text) if text is not None else None

        for seed in params.seeds:
            image, _, hits = await one(seed, params.steps)
            run.hits.append(hits)
            if image is not None:
                run.outputs[seed] = image
        for _ in range(params.repetitions):
            elapsed = []
            for seed in params.seeds:
                _, took, hits = await one(seed, params.steps)
                run.hits.append(hits)
                elapsed.append(took)
            run.latencies_s.append(sum(elapsed) / len(elapsed))
        run.middle, _, run.middle_hits = await one(params.seeds[1], params.alternate_steps)
        run.again, _, _ = await one(params.seeds[0], params.steps)
    return run
