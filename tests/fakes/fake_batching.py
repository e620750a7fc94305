"""A fake server that batches image generations the way vLLM-Omni's request scheduler does with
``--max-num-seqs N --request-batch-max-wait-ms W``: requests that arrive within ``batch_wait_s``
share one execution (up to ``capacity``) when their batch key (steps, guidance, size, n) equals
the head's; the first one that does not waits for the next execution (head of line). One
execution takes ``image_work_s`` however many it holds, and /metrics shows the queue as waiting
and the execution as running. The isolation faults of ``FakeFaults`` act on batches only, so a
request served alone is always right. Other routes are served as by ``FakeOmni``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

import httpx

from tests.fakes.fake_core import Reply
from tests.fakes.fake_omni import FakeOmni

_BATCHED = "/v1/images/generations"
_KEY = ("num_inference_steps", "guidance_scale", "size", "n")


@dataclass
class _Pending:
    request: httpx.Request
    body: dict[str, object]
    done: asyncio.Future[httpx.Response] = field(default_factory=asyncio.Future)

    @property
    def key(self) -> tuple[object, ...]:
        return tuple(self.body.get(k) for k in _KEY)


class BatchingFakeOmni(FakeOmni):
    capacity: int = 2
    batch_wait_s: float = 0.03
    _queue: list[_Pending] | None = None
    _worker: asyncio.Task[None] | None = None
    _serial: asyncio.Lock | None = None

    async def handle_async(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or request.url.path != _BATCHED:
            return await super().handle_async(request)
        if self.config.faults.serializes_requests:
            self._serial = self._serial or asyncio.Lock()
            async with self._serial:  # not accepted, so never waiting, until the last is done
                return await super().handle_async(request)
        pending = _Pending(request, json.loads(request.content))
        if self._queue is None:
            self._queue = []
        self._queue.append(pending)
        with self.lock:
            self.state.waiting += 1
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run())
        return await pending.done

    async def _run(self) -> None:
        assert self._queue is not None
        while self._queue:
            await asyncio.sleep(self.batch_wait_s)  # the admission wait
            batch = self._admit(self._queue)
            with self.lock:
                self.state.waiting -= len(batch)
                self.state.running += len(batch)
            replies = [self._compute(p, batch[0]) for p in batch]
            await asyncio.sleep(max(r.work_s for r in replies))
            with self.lock:
                self.state.running -= len(batch)
                self.state.executions += 1
                self.state.completed += len(batch)
            for pending, response in zip(batch, self._faulty(batch, replies), strict=True):
                pending.done.set_result(response)

    def _admit(self, queue: list[_Pending]) -> list[_Pending]:
        head = queue[0]
        batch = [head]
        for pending in queue[1 : self.capacity]:
            if pending.key != head.key and not self.config.faults.batch_first_settings:
                break  # head of line: the next execution takes it
            batch.append(pending)
        del queue[: len(batch)]
        return batch

    def _compute(self, pending: _Pending, head: _Pending) -> Reply:
        request = pending.request
        if self.config.faults.batch_first_settings and pending is not head:
            body = {**pending.body, **{k: head.body[k] for k in _KEY if k in head.body}}
            request = httpx.Request("POST", request.url, json=body)
        outcome = self.plan(request)
        assert isinstance(outcome, Reply)
        return outcome

    def _faulty(self, batch: list[_Pending], replies: list[Reply]) -> list[httpx.Response]:
        faults = self.config.faults
        responses = [reply.response for reply in replies]
        if len(batch) < 2:
            return responses
        if faults.swaps_batched_outputs:
            responses[0], responses[1] = responses[1], responses[0]
        if faults.reorders_batched_outputs:
            responses = [_reversed(r) for r in responses]
        return responses


def _reversed(response: httpx.Response) -> httpx.Response:
    doc = json.loads(response.content)
    if not isinstance(doc, dict) or len(doc.get("data") or []) < 2:
        return response
    doc["data"] = doc["data"][::-1]
    kept = {k: v for k, v in response.headers.items() if k.lower() == "x-request-id"}
    return httpx.Response(response.status_code, json=doc, headers=kept)
