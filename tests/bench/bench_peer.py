"""omniqual bench against a vLLM-Omni-style diffusion benchmark client, side by side, one run.

Run: .venv/bin/python tests/bench/bench_peer.py [--rates 200,1000] [--seconds 5] [--repeats 3]
     [--target URL]   (default: tests/bench/instant_server.py started on an ephemeral port)

Drivers, each in its own fresh process (so no driver inherits another's heap, pool or GC debt),
run alternately (the order rotates every repeat) against the same server at the same rates with
the same number of requests (rate x seconds):

* ``omniqual``: what ``omniqual bench`` runs for a phase (``engine.bench.runner.BenchSession``:
  the seeded open-loop issuer over ``Http1Send`` on uvloop, plus the phase summary).
* ``oq-aiohttp``, ``oq-httpx``: the same issuer, loop and summary over one pooled aiohttp session
  or ``httpx.AsyncClient`` (tests/bench/alt_transports.py): the transports that lost.
* ``peer``: modelled on vLLM-Omni's ``benchmarks/diffusion`` client from its description (not its
  code): aiohttp, request 0 at once, then ``await asyncio.sleep(random.expovariate(rate))`` with
  the unseeded global ``random`` before each further request, a task per request behind an
  ``asyncio.Semaphore(max_concurrency)``, latency timed from the send inside the request
  function, JSON answers parsed. Its ``--max-concurrency`` defaults to 1 there; a rate benchmark
  is run with it raised, so here it is the request count (never binding). One session is shared
  by all requests, as its request functions are handed one.

Figures per driver: client CPU-seconds per 1,000 requests (user+system of the driver process,
over the timed phase with its result metrics: interpreter start, imports and warm-up excluded),
p99 issue lag (actual send minus the driver's own planned send time), achieved/offered (requests
sent per second of the sending window over the offered rate) and achieved/planned (the same over
the rate the driver's own draw contains, which removes the Poisson draw's +-1/sqrt(n) noise).
The summary prints each figure's range over the repeats and the ratio omniqual/peer per repeat.
At low rates a phase's fixed cost (omniqual's summary: percentiles, their sufficiency bounds,
the result model) is spread over few requests, so CPU per 1k rises for both.

* ``floor`` (tests/bench/floor_client.py): not a client, a bound: the same seeded slots on the
  same loop, each only a timer, one write of fixed bytes and reading the answer's bytes. Its
  CPU over the peer's is the lowest ratio any Python asyncio client can reach on this host.

The machine may be shared: CPU figures are noisy, hence repeats and ranges. Goals:
CPU/1k <= 1/5 of the peer's; p99 issue lag <= 2 ms at 200 RPS; achieved >= 0.99 at 1000 RPS.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the checkout, when run as a script
sys.path.insert(0, str(HERE))

from alt_transports import AiohttpSend, HttpxSend  # noqa: E402  (after the path set-up above)
from floor_client import floor  # noqa: E402
from peer_report import report  # noqa: E402

from omniqual.engine.bench.transport import event_loop_factory  # noqa: E402

DRIVERS = ("omniqual", "peer", "oq-aiohttp", "oq-httpx", "floor")
WORKLOAD = {
    "name": "bench-peer",
    "seed": 7,
    "entries": [
        {
            "name": "img",
            "task": "t2i",
            "endpoint": "image",
            "weight": 1,
            "shape": {"width": 64, "height": 64, "steps": 2},
        }
    ],
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _p99(values: list[float]) -> float | None:
    import numpy as np

    return float(np.percentile(values, 99)) if values else None


# ------------------------------------------------------------------------------ the peer


def _peer_metrics(latencies: list[float], t0: float, end: float, ok: int) -> dict[str, float]:
    """What the peer computes once its run is over (counted in its CPU, as ours is)."""
    import numpy as np

    data = np.array(latencies)
    duration = end - t0
    return {
        "duration": duration,
        "throughput_qps": ok / duration,
        "latency_mean": float(data.mean()),
        "latency_median": float(np.median(data)),
        **{f"latency_p{q}": float(np.percentile(data, q)) for q in (99, 95, 50)},
    }


async def _peer(
    url: str, rate: float, count: int, steps: int, size: str, model: str
) -> dict[str, Any]:
    import aiohttp
    import numpy  # noqa: F401  # loaded before the timed window, as the peer loads it at start

    endpoint = url.rstrip("/") + "/v1/images/generations"
    semaphore = asyncio.Semaphore(count)
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    latencies: list[float] = []
    sent_at: list[float] = []
    failures = 0

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=6 * 3600)) as session:

        async def request(index: int, planned: float) -> None:
            nonlocal failures
            async with semaphore:
                payload = {
                    "model": model,
                    "prompt": f"Random prompt {index} for benchmarking diffusion models",
                    "n": 1,
                    "size": size,
                    "response_format": "b64_json",
                    "num_inference_steps": steps,
                    "seed": 42,
                }
                start = time.perf_counter()
                now = loop.time()
                sent_at.append(now)
                lags.append(now - planned)
                try:
                    async with session.post(
                        endpoint, json=payload, headers={"Authorization": "Bearer EMPTY"}
                    ) as response:
                        body = await response.json(content_type=None)
                        ok = response.status == 200 and bool(body.get("data"))
                except (aiohttp.ClientError, ValueError):
                    ok = False
                latencies.append(time.perf_counter() - start)
                failures += not ok

        # warm one connection, as its --warmup-requests 1 does; not timed
        await request(-1, loop.time())
        lags.clear()
        latencies.clear()
        sent_at.clear()
        failures = 0
        cpu = _cpu()
        t0 = loop.time()
        planned = t0
        tasks = []
        for index in range(count):
            if index:
                gap = random.expovariate(rate)  # unseeded global random, as the peer
                planned += gap
                await asyncio.sleep(gap)
            tasks.append(asyncio.create_task(request(index, planned)))
        await asyncio.gather(*tasks)
        _peer_metrics(latencies, t0, loop.time(), count - failures)  # its result, in the window
        cpu = _cpu() - cpu
    window = max(sent_at) - t0
    planned_window = planned - t0
    return {
        "cpu_s": cpu,
        "sent": len(sent_at),
        "failed": failures,
        "p99_lag_s": _p99(lags),
        "ach_offered": (count - 1) / window / rate if window > 0 else 0.0,
        "ach_planned": planned_window / window if window > 0 else 0.0,
        "latency_p99_s": _p99(latencies),
    }


# ------------------------------------------------------------------------------ omniqual


async def _omniqual(url: str, rate: float, count: int, seed: int, transport: str) -> dict[str, Any]:
    import httpx

    from omniqual.engine.bench.options import make_options
    from omniqual.engine.bench.runner import BenchSession, describe
    from omniqual.engine.bench.transport import Http1Send
    from omniqual.loadgen.workload import WorkloadSpec

    spec = WorkloadSpec.model_validate(WORKLOAD)
    workload = Path(tempfile.gettempdir()) / f"bench-peer-{os.getpid()}.yaml"
    workload.write_text(json.dumps(WORKLOAD), encoding="utf-8")  # JSON is YAML
    try:
        options = make_options(target=url, workload=workload, rate=rate, rates=None,
                               sweep=False, profile="poisson", duration_s=None, requests=count,
                               seed=seed)  # fmt: skip
    finally:
        workload.unlink()
    # A saturated client (httpx at 1000/s) would take minutes to drain: 30 s after the last
    # slot, whatever is still in flight is cancelled (and counted as failed).
    options = dataclasses.replace(options, request_timeout_s=30.0)
    meta = describe(spec, "default")

    async def timed(send: Any) -> dict[str, Any]:
        session = BenchSession(options, spec, send, meta, lambda *_: None)
        await session.warm_up()
        cpu = _cpu()
        await session.phase(rate)
        cpu = _cpu() - cpu
        phase = session.phases[-1]
        return {
            "cpu_s": cpu,
            "sent": phase.issued_requests,
            "failed": phase.failed_requests,
            "p99_lag_s": phase.p99_issue_lag_s,
            "ach_offered": phase.achieved_over_offered,
            "ach_planned": phase.achieved_over_planned,
            "latency_p99_s": phase.latency_from_send_p99,
        }

    if transport == "http1":
        async with Http1Send(url) as send:
            return await timed(send)
    if transport == "aiohttp":
        async with AiohttpSend(url) as send:
            return await timed(send)
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=1000)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=600) as client:
        return await timed(HttpxSend(client))


def _child(args: argparse.Namespace) -> None:
    rate, count = args.rate, args.count
    if args.driver == "peer":
        figures = asyncio.run(_peer(args.target, rate, count, 2, "64x64", args.model))
    elif args.driver == "floor":
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            figures = runner.run(floor(args.target, rate, count, args.seed, _cpu))
    else:
        transport = {"omniqual": "http1", "oq-aiohttp": "aiohttp"}.get(args.driver, "httpx")
        # every omniqual driver on the loop `omniqual bench` runs on, so only the transport varies
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            figures = runner.run(_omniqual(args.target, rate, count, args.seed, transport))
    print(json.dumps(figures), flush=True)


# ------------------------------------------------------------------------------ the parent


def _served_model(target: str) -> str:
    """The id to send as ``model`` (the peer's default "default" is refused by a real server)."""
    import urllib.request

    try:
        with urllib.request.urlopen(target.rstrip("/") + "/v1/models", timeout=10) as answer:
            listing = json.loads(answer.read())
        return str(listing["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return "default"


def _run_child(
    driver: str, target: str, rate: float, count: int, seed: int, model: str
) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", "--driver", driver, "--target", target,
            "--rate", str(rate), "--count", str(count), "--seed", str(seed),
            "--model", model]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{driver} at {rate}/s failed:\n{done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(driver=driver, rate=rate, count=count)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--driver", choices=DRIVERS, help=argparse.SUPPRESS)
    parser.add_argument("--rate", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model", default="default", help=argparse.SUPPRESS)
    parser.add_argument("--target", default=None, help="A server URL (default: instant server)")
    parser.add_argument("--rates", default="200,1000")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--drivers", default=",".join(DRIVERS))
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    if args.child:
        _child(args)
        return
    server = None
    target = args.target
    if target is None:
        server = subprocess.Popen([sys.executable, str(HERE / "instant_server.py")],
                                  stdout=subprocess.PIPE, text=True)  # fmt: skip
        assert server.stdout is not None
        target = f"http://127.0.0.1:{int(server.stdout.readline())}"
    model = _served_model(target)
    rates = [float(r) for r in args.rates.split(",")]
    drivers = args.drivers.split(",")
    if server is None and "floor" in drivers:  # it counts answers by the instant server's size
        drivers.remove("floor")
        print("floor: skipped (it needs the instant local server)", file=sys.stderr)
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    try:
        for rep in range(args.repeats):
            for rate in rates:
                order = drivers[rep % len(drivers) :] + drivers[: rep % len(drivers)]
                for driver in order:
                    count = max(1, round(rate * args.seconds))
                    row = _run_child(driver, target, rate, count, args.seed + rep, model)
                    row["rep"] = rep
                    rows.append(row)
                    print(f"  rep {rep} {driver:<9} {rate:g}/s done", file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=5)
    import aiohttp
    import httpx

    print(f"target: {'instant local server' if server else target}; "
          f"{args.seconds:g} s per run; load average {os.getloadavg()}; cores {os.cpu_count()}; "
          f"python {sys.version.split()[0]}; aiohttp {aiohttp.__version__}; "
          f"httpx {httpx.__version__}")  # fmt: skip
    report(rows, drivers, rates)
    print(f"\nwall time {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
