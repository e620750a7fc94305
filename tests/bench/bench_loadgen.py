"""Benchmark omniqual's open-loop issuer against the pacing loops other harnesses use.

Run: .venv/bin/python tests/bench/bench_loadgen.py [--seconds 3] [--rates 50,200,1000]

The instant keep-alive HTTP/1.1 server (tests/bench/instant_server.py) runs in a child process on
an ephemeral 127.0.0.1 port; the client sends JSON POSTs over omniqual bench's transport
(``engine.bench.transport.Http1Send`` on uvloop; bench_peer.py measures it against aiohttp and
httpx). For each
offered rate, on the same seeded Poisson schedule, these drivers are measured in the same run:

* ``omniqual``: ``omniqual.loadgen.issuer.issue`` (open loop, one task per request).
* ``closed-c1``: the vLLM-Omni diffusion harness shape with its default ``--max-concurrency 1``:
  wait for the scheduled time if it is still ahead, then send and await before the next request.
* ``sleep-gap``: ``vllm bench serve`` style pacing: ``await asyncio.sleep(gap)`` then spawn the
  request, so per-iteration overhead accumulates as drift (vLLM issue #21104).
* ``oq-null``: the omniqual issuer with a Send that completes at once without HTTP, to separate
  the issuer's own lag and CPU from the HTTP client's.

Issue lag is the actual send time minus the scheduled time; achieved/offered is issued requests
per second of schedule window over the offered rate; CPU is this process's user+system time
(resource.getrusage) per 1,000 requests. The server's CPU is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omniqual.engine.bench.transport import Http1Send, event_loop_factory, transport_label
from omniqual.loadgen.issuer import IssuerSettings, Send, issue
from omniqual.loadgen.records import OutcomeStatus, SendOutcome
from omniqual.loadgen.schedule import Schedule, poisson_schedule
from omniqual.loadgen.workload import PlannedRequest, WorkloadSpec, plan_requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the checkout, when run as a script


@dataclass(frozen=True)
class Measured:
    driver: str
    offered: float
    planned: int
    issued: int
    lags_s: np.ndarray
    achieved_over_offered: float
    achieved_over_planned: float
    latency_send_s: np.ndarray
    latency_sched_s: np.ndarray
    cpu_s: float
    errors: int


IN_FLIGHT_CAP: int | None = None  # set from --in-flight-cap; applies to the omniqual drivers


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _omniqual(
    schedule: Schedule, plan: tuple[PlannedRequest, ...], send: Send, offered: float
) -> Measured:
    cpu = _cpu()
    run = await issue(plan, schedule, send, IssuerSettings(in_flight_cap=IN_FLIGHT_CAP))
    cpu = _cpu() - cpu
    sent = [r for r in run.records if r.sent_s is not None]
    return Measured(
        "omniqual",
        offered,
        len(plan),
        len(sent),
        np.array([r.sent_s - r.scheduled_s for r in sent if r.sent_s is not None]),
        run.effective.achieved_issue_rate / offered,
        run.effective.achieved_issue_rate / schedule.planned_rate,
        np.array([r.latency_from_send_s for r in sent if r.latency_from_send_s is not None]),
        np.array(
            [r.latency_from_schedule_s for r in sent if r.latency_from_schedule_s is not None]
        ),
        cpu,
        sum(1 for r in run.records if r.status != "ok"),
    )


class NullSend:
    """Completes at the next loop iteration: isolates the issuer's own cost from HTTP."""

    async def __call__(self, planned: PlannedRequest) -> SendOutcome:
        await asyncio.sleep(0)
        return SendOutcome(OutcomeStatus.OK)


async def _omniqual_null(
    schedule: Schedule, plan: tuple[PlannedRequest, ...], send: Http1Send, offered: float
) -> Measured:
    measured = await _omniqual(schedule, plan, NullSend(), offered)
    return Measured(
        "oq-null", *(getattr(measured, f) for f in Measured.__dataclass_fields__ if f != "driver")
    )


async def _closed_c1(
    schedule: Schedule, plan: tuple[PlannedRequest, ...], send: Http1Send, offered: float
) -> Measured:
    loop = asyncio.get_running_loop()
    cpu = _cpu()
    t0 = loop.time() + 0.02
    lags, lat_send, lat_sched, errors, last = [], [], [], 0, 0.0
    for planned in plan:
        delay = t0 + planned.offset_s - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        sent = loop.time() - t0
        outcome = await send(planned)
        done = loop.time() - t0
        lags.append(sent - planned.offset_s)
        lat_send.append(done - sent)
        lat_sched.append(done - planned.offset_s)
        errors += outcome.status is not OutcomeStatus.OK
        last = sent
    cpu = _cpu() - cpu
    rate = len(plan) / max(schedule.window_s, last)
    return Measured(
        "closed-c1",
        offered,
        len(plan),
        len(plan),
        np.array(lags),
        rate / offered,
        rate / schedule.planned_rate,
        np.array(lat_send),
        np.array(lat_sched),
        cpu,
        errors,
    )


async def _sleep_gap(
    schedule: Schedule, plan: tuple[PlannedRequest, ...], send: Http1Send, offered: float
) -> Measured:
    loop = asyncio.get_running_loop()
    cpu = _cpu()
    t0 = loop.time() + 0.02
    await asyncio.sleep(0.02)
    lags: list[float] = []
    lat_send: list[float] = []
    lat_sched: list[float] = []
    outcomes: list[SendOutcome] = []

    async def one(planned: PlannedRequest) -> None:
        sent = loop.time() - t0
        outcomes.append(await send(planned))
        done = loop.time() - t0
        lags.append(sent - planned.offset_s)
        lat_send.append(done - sent)
        lat_sched.append(done - planned.offset_s)

    tasks = []
    previous = 0.0
    for planned in plan:
        await asyncio.sleep(planned.offset_s - previous)  # the gap, ignoring time already spent
        previous = planned.offset_s
        tasks.append(asyncio.create_task(one(planned)))
    last = loop.time() - t0
    await asyncio.gather(*tasks)
    cpu = _cpu() - cpu
    rate = len(plan) / max(schedule.window_s, last)
    errors = sum(1 for o in outcomes if o.status is not OutcomeStatus.OK)
    return Measured(
        "sleep-gap",
        offered,
        len(plan),
        len(plan),
        np.array(lags),
        rate / offered,
        rate / schedule.planned_rate,
        np.array(lat_send),
        np.array(lat_sched),
        cpu,
        errors,
    )


Driver = Callable[[Schedule, tuple[PlannedRequest, ...], Http1Send, float], Awaitable[Measured]]
DRIVERS: dict[str, Driver] = {
    "omniqual": _omniqual,
    "closed-c1": _closed_c1,
    "sleep-gap": _sleep_gap,
    "oq-null": _omniqual_null,
}


def _ms(values: np.ndarray, q: float) -> str:
    return f"{np.percentile(values, q) * 1e3:8.3f}" if values.size else "     n/a"


async def _bench(
    port: int,
    rates: list[float],
    seconds: float,
    seed: int,
    drivers: tuple[Driver, ...],
) -> tuple[list[Measured], str]:
    spec = WorkloadSpec.model_validate(
        {
            "name": "bench",
            "seed": seed,
            "entries": [
                {
                    "name": "img",
                    "task": "t2i",
                    "endpoint": "image",
                    "weight": 1,
                    "shape": {"width": 512, "height": 512, "steps": 4},
                }
            ],
        }
    )
    results = []
    label = transport_label()
    async with Http1Send(f"http://127.0.0.1:{port}", timeout_s=10.0) as send:
        for rate in rates:
            schedule = poisson_schedule(rate, seed=seed, duration_s=seconds)
            plan = plan_requests(spec, schedule)
            order = list(drivers)
            random.Random(int(rate)).shuffle(order)  # no driver always runs first or last
            for driver in order:
                warm = poisson_schedule(rate, seed=seed + 1, count=max(20, int(rate / 10)))
                await issue(plan_requests(spec, warm), warm, send)
                results.append(await driver(schedule, plan, send, rate))
    return results, label


def _report(results: list[Measured]) -> None:
    print(f"load average (1/5/15 min): {os.getloadavg()}; cores: {os.cpu_count()}")
    header = (
        f"{'driver':<10} {'offered':>7} {'n':>5} {'ach/off':>8} {'ach/plan':>8} "
        f"{'lag p50':>8} "
        f"{'lag p99':>8} {'lag max':>8} {'send p50':>8} {'send p99':>8} "
        f"{'sched p99':>9} {'cpu s/1k':>8} {'err':>4}"
    )
    print(header)
    print("-" * len(header))
    for m in results:
        print(
            f"{m.driver:<10} {m.offered:7.0f} {m.issued:5d} {m.achieved_over_offered:8.4f} "
            f"{m.achieved_over_planned:8.4f} "
            f"{_ms(m.lags_s, 50)} {_ms(m.lags_s, 99)} {_ms(m.lags_s, 100)} "
            f"{_ms(m.latency_send_s, 50)} {_ms(m.latency_send_s, 99)} "
            f"{_ms(m.latency_sched_s, 99):>9} {m.cpu_s / m.issued * 1e3:8.3f} {m.errors:4d}"
        )
    print(
        "(times in ms; ach/off = issued per second of schedule window / offered rate;"
        " ach/plan = the same over the rate this Poisson draw actually contains)"
    )
    print("\nratios, same run (omniqual / peer):")
    for rate in sorted({m.offered for m in results}):
        ours = next((m for m in results if m.offered == rate and m.driver == "omniqual"), None)
        if ours is None:
            continue
        peers = (m for m in results if m.offered == rate and m.driver in ("closed-c1", "sleep-gap"))
        for peer in peers:
            lag_ratio = np.percentile(ours.lags_s, 99) / max(np.percentile(peer.lags_s, 99), 1e-9)
            print(
                f"  {rate:6.0f}/s vs {peer.driver:<9}: ach/off "
                f"{ours.achieved_over_offered / peer.achieved_over_offered:6.3f}x, "
                f"p99 lag {lag_ratio:7.3f}x, "
                f"cpu/req {ours.cpu_s / ours.issued / (peer.cpu_s / peer.issued):6.3f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rates", default="50,200,1000")
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--drivers", default="omniqual,closed-c1,sleep-gap,oq-null")
    parser.add_argument(
        "--in-flight-cap",
        type=int,
        default=None,
        help="omniqual issuer in-flight cap (its waits are counted)",
    )
    args = parser.parse_args()
    global IN_FLIGHT_CAP
    IN_FLIGHT_CAP = args.in_flight_cap
    server = subprocess.Popen(
        [sys.executable, str(HERE / "instant_server.py")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        rates = [float(r) for r in args.rates.split(",")]
        chosen = tuple(DRIVERS[name] for name in args.drivers.split(","))
        started = time.monotonic()
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            results, label = runner.run(_bench(port, rates, args.seconds, args.seed, chosen))
        _report(results)
        print(f"\nwall time {time.monotonic() - started:.1f} s, python {sys.version.split()[0]}, "
              f"transport {label}")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=5)


if __name__ == "__main__":
    main()
