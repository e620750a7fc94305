"""The ``floor`` driver of bench_peer.py: the least CPU a Python asyncio client can spend per
request on this host, so the figures of the real drivers can be read against it.

Per request it does only what no open-loop HTTP client can skip: a loop timer at the request's
slot (one chain, as ``omniqual bench``'s callback path), one write of prepared request bytes on a
kept-alive connection, and reading the answer's bytes. No body is built, no answer is parsed or
judged, nothing is recorded but the send time: it is not a usable client, only a bound. It runs
on the loop ``omniqual bench`` uses (uvloop where installed) with the same seeded Poisson slots.
Answers are counted by length (the instant server's answers all have one size), so the floor
needs bench_peer's instant server, not a real one.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

CONNECTIONS = 8
REQUEST = (b"POST /v1/images/generations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")  # fmt: skip


class _Reader(asyncio.Protocol):
    def __init__(self) -> None:
        self.received = 0

    def data_received(self, data: bytes) -> None:
        self.received += len(data)


async def floor(url: str, rate: float, count: int, seed: int, cpu: Any) -> dict[str, Any]:
    """Figures shaped as bench_peer's drivers give them (``cpu`` reads the process CPU time)."""
    from instant_server import _RESPONSE

    host, _, port = url.removeprefix("http://").rstrip("/").partition(":")
    loop = asyncio.get_running_loop()
    lines = [await loop.create_connection(_Reader, host, int(port)) for _ in range(CONNECTIONS)]
    draw = random.Random(seed)
    offsets = [0.0]
    for _ in range(count - 1):
        offsets.append(offsets[-1] + draw.expovariate(rate))
    sent = [0.0] * count
    over = loop.create_future()
    started = cpu()
    t0 = loop.time() + 0.02

    def fire(index: int) -> None:
        sent[index] = loop.time() - t0
        lines[index % CONNECTIONS][0].write(REQUEST)
        if index + 1 < count:
            loop.call_at(t0 + offsets[index + 1], fire, index + 1)
        else:
            over.set_result(None)

    loop.call_at(t0, fire, 0)
    await over
    expected = count * len(_RESPONSE)
    for _ in range(200):  # the last answers, at most 2 s
        if sum(reader.received for _, reader in lines) >= expected:
            break
        await asyncio.sleep(0.01)
    used = cpu() - started
    for transport, _ in lines:
        transport.close()
    answered = sum(reader.received for _, reader in lines) // len(_RESPONSE)
    lags = sorted(s - o for s, o in zip(sent, offsets, strict=True))
    window = sent[-1] if count > 1 else 0.0
    return {
        "cpu_s": used,
        "sent": count,
        "failed": count - answered,
        "p99_lag_s": lags[min(len(lags) - 1, int(0.99 * len(lags)))],
        "ach_offered": (count - 1) / window / rate if window > 0 else 0.0,
        "ach_planned": offsets[-1] / window if window > 0 else 0.0,
        "latency_p99_s": None,
    }
