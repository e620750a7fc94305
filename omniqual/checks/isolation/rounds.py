"""The together phase's rounds: every (pattern, order, repeat), and sending one round. Orders
are the request set as listed, reversed, then rotations; ``burst`` sends all at once,
``staggered`` sends each ``stagger_fraction`` of a solo service time after the one before (so
they meet mid-denoise), ``mixed`` sends every other request through the video twin endpoint
(rows whose contract serves both)."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.checks.isolation.exchange import Served, Timeouts, send
from omniqual.checks.isolation.params import Pattern
from omniqual.checks.isolation.plan import IsoRequest
from omniqual.client import OmniClient


@dataclass(frozen=True, slots=True)
class Round:
    index: int
    pattern: Pattern
    order: tuple[str, ...]
    repeat: int

    @property
    def where(self) -> str:
        return f"round {self.index} ({self.pattern}, order {'-'.join(self.order)})"


def orders(labels: Sequence[str], count: int) -> list[tuple[str, ...]]:
    """``count`` distinct send orders: as listed, reversed, then rotations of both."""
    found: list[tuple[str, ...]] = []
    base = tuple(labels)
    candidates = [base, base[::-1]]
    for shift in range(1, len(base)):
        candidates += [base[shift:] + base[:shift], (base[shift:] + base[:shift])[::-1]]
    for order in candidates:
        if order not in found:
            found.append(order)
    return found[:count]


def plan_rounds(labels: Sequence[str], patterns: Sequence[Pattern], order_count: int,
                repeats: int) -> list[Round]:  # fmt: skip
    rounds: list[Round] = []
    for pattern in patterns:
        for order in orders(labels, order_count):
            for repeat in range(repeats):
                rounds.append(Round(len(rounds) + 1, pattern, order, repeat))
    return rounds


async def send_round(
    client: OmniClient, plan: Round, requests: dict[str, IsoRequest], timeouts: Timeouts,
    gap_s: float, twin: str | None,
) -> list[Served]:  # fmt: skip
    async def one(position: int, label: str) -> Served:
        if plan.pattern == "staggered" and position:
            await asyncio.sleep(position * gap_s)
        via = twin if plan.pattern == "mixed" and twin and position % 2 else None
        return await send(client, requests[label], timeouts, via)

    return list(await asyncio.gather(*(one(i, x) for i, x in enumerate(plan.order))))
