"""A fake server that computes one generation request at a time (like vLLM-Omni serving with
``--max-num-seqs 1``), so load beyond its service rate queues and latency grows: the saturation
search has a real knee to find. Reached in-process through ``transport()``; no sockets."""

from __future__ import annotations

import asyncio
import time

import httpx

from tests.fakes.fake_core import Drop, Hang, wrong_output
from tests.fakes.fake_omni import FakeOmni


class SerialFakeOmni(FakeOmni):
    """`FakeOmni` whose simulated work holds a single worker lock. A client that disconnects
    while queued for the worker is an abort too (the fake records it)."""

    _worker: asyncio.Lock | None = None

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        outcome = self.plan(request)
        if isinstance(outcome, Drop):
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if isinstance(outcome, Hang):
            await asyncio.sleep(outcome.seconds)
            return outcome.response
        if outcome.work_s <= 0:
            started = self.begin()
            self.end(outcome, started, aborted=False)
            return outcome.response
        if self._worker is None:
            self._worker = asyncio.Lock()
        worker = self._worker
        started = self.begin()
        with self.lock:  # queued for the worker: waiting, not running (as /metrics shows it)
            self.state.running -= 1
            self.state.waiting += 1
        computing_since: float | None = None
        try:
            async with worker:
                with self.lock:
                    self.state.waiting -= 1
                    self.state.running += 1
                computing_since = time.perf_counter()
                aborts_before = self.state.aborted
                await asyncio.sleep(outcome.work_s)
        except asyncio.CancelledError:
            if computing_since is None:
                with self.lock:
                    self.state.waiting -= 1
                    self.state.running += 1
            self.end(outcome, started, aborted=True)
            faults = self.config.faults
            if computing_since is None and faults.runs_cancelled_queued:
                self.run_on(outcome.work_s, worker)
            elif computing_since is not None and faults.computes_after_cancel:
                self.run_on(outcome.work_s - (time.perf_counter() - computing_since), worker)
            raise
        self.end(outcome, started, aborted=False)
        if self.config.faults.peers_answer_wrong and self.state.aborted > aborts_before:
            return wrong_output(outcome.response)  # another request was cut while it computed
        return outcome.response
