"""Drives one fault-injection case against one served instance: arm, send the faulted request
and its peers, (kill the worker / cancel), collect what each client saw and what the injector
recorded, then watch what the server does afterwards (``judge`` decides what it means).

The faulted request is the one the arm targets (its seed, chosen before the arming). Its peers
are sent with one more denoise step where the shape names its steps: a request-batch row runs a
batch as one ``forward``, so a fault inside it fails every request it holds, and a peer sharing
the faulted request's batch would show that, not whether a request-level fault stays in its
request. Steps are part of the request-batch key and not of the step-execution one, so on a step
row the peers still share the faulted request's denoise steps (each request's scheduler step on
its own, where the fault fires)."""

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from omniqual.checks.abort.peer_truth import PEER_SEED, outputs_of
from omniqual.checks.abort.work import RUNNING, WAITING, parse_work_metrics
from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.checks.fault_injection.control import FaultControl, FileControl, of_arm
from omniqual.checks.fault_injection.judge import After, Seen
from omniqual.checks.fault_injection.kill import Kill, kill_held
from omniqual.checks.fault_injection.params import FaultInjectionParams
from omniqual.checks.fault_injection.processes import described, running
from omniqual.checks.load_binding import WireCall, usable_output
from omniqual.client import NO_JSON, ClientError, OmniClient, RawResponse, TargetTimeout
from omniqual.domain.fault_injection import FaultArm, FaultEvent, FaultMode, FaultRecord
from omniqual.loadgen.workload import EndpointKind

KNOWN_GOOD_SEED = 4242
"""The known-good request's seed: its output before any fault is what every recovery gives."""


@dataclass(frozen=True, slots=True)
class Served:
    """One served instance carrying the injector."""

    url: str
    pid: int | None
    make_client: Callable[[], OmniClient]
    channel: FaultControl
    loaded: str = ""  # how the injector's loading in this instance was told (for the result)


def output_digest(kind: EndpointKind, raw: RawResponse) -> str | None:
    """sha256 of the output bytes (an image answer's decoded images, else the body)."""
    if not usable_output(kind, raw):
        return None
    digest = hashlib.sha256()
    try:
        doc = raw.json()
    except ClientError:
        doc = None
    items = doc.get("data") if isinstance(doc, dict) else None
    if isinstance(items, list) and items:
        for item in items:
            digest.update(str(item.get("b64_json") or item.get("url") or "").encode())
    else:
        digest.update(raw.body)
    return digest.hexdigest()


def seen_of(kind: EndpointKind, raw: RawResponse, elapsed_s: float) -> Seen:
    usable = usable_output(kind, raw)
    return Seen("answer", elapsed_s, raw.status, enveloped=raw.error is not None and not raw.ok,
                usable=usable, outputs=outputs_of(kind, raw) if usable else ())  # fmt: skip


class CaseDriver:
    def __init__(self, served: Served, client: OmniClient, side: OmniClient,
                 params: FaultInjectionParams, kind: EndpointKind, call: Callable[[int], WireCall],
                 peer_call: Callable[[int], WireCall] | None = None) -> None:  # fmt: skip
        self.served, self.client, self.side, self.params = served, client, side, params
        self.kind, self.call, self.peer_call = kind, call, peer_call or call
        self._seed = 9000

    async def send(self, call: WireCall, timeout_s: float) -> Seen:
        started = time.monotonic()
        try:
            raw = await self.client.send_raw(
                call.method, call.path, json=NO_JSON if call.json is None else call.json,
                data=call.data, files=list(call.files) or None, timeout_s=timeout_s)  # fmt: skip
        except TargetTimeout:
            return Seen("timeout", time.monotonic() - started)
        except ClientError as exc:
            return Seen("dropped", time.monotonic() - started, detail=type(exc).__name__)
        return seen_of(self.kind, raw, time.monotonic() - started)

    async def known_good(self, seed: int) -> tuple[str | None, str]:
        """The known-good request (fixed ``seed``): its output digest (None: failed) and a line."""
        call = self.call(seed)
        try:
            raw = await self.client.send_raw(
                call.method, call.path, json=NO_JSON if call.json is None else call.json,
                data=call.data, files=list(call.files) or None,
                timeout_s=self.params.request_timeout_s)  # fmt: skip
        except ClientError as exc:
            return None, type(exc).__name__
        return output_digest(self.kind, raw), f"HTTP {raw.status}"

    def next_seed(self) -> int:
        """A seed no request of this driver was sent with (the faulted request's is chosen
        before its arming, which targets it)."""
        self._seed += 1
        return self._seed

    def faulted(self, arm: FaultArm) -> WireCall:
        return self.call(self.next_seed() if arm.request_seed is None else arm.request_seed)

    def peer(self, index: int) -> WireCall:
        """Peer ``index``, with the seed its solo output was recorded with (``peers``)."""
        return self.peer_call(PEER_SEED + index)

    async def solo_outputs(self, call: WireCall) -> tuple[bytes, ...]:
        """The outputs of ``call`` served alone (empty: it failed)."""
        seen = await self.send(call, self.params.request_timeout_s)
        return seen.outputs

    async def inject(self, case: FaultCase, arm: FaultArm, solo_s: float,
                     ) -> tuple[Seen, list[Seen], Kill | None]:  # fmt: skip
        """Send the faulted request and its peers into the armed fault; the SIGKILL the case
        needed (None: none, or the fault never fired to hold a worker)."""
        p = self.params
        timeout = p.hang_client_timeout_s if case.mode is FaultMode.HANG and not case.sigkill \
            else p.request_timeout_s  # fmt: skip
        faulted: asyncio.Task[Seen]
        if case.cancel:
            faulted = asyncio.create_task(self._cut(self.faulted(arm), solo_s + p.late_s / 2))
        else:
            faulted = asyncio.create_task(self.send(self.faulted(arm), timeout))
        await asyncio.sleep(p.peer_delay_s)
        peers = [asyncio.create_task(self.send(self.peer(i), p.request_timeout_s))
                 for i in range(p.peers)]  # fmt: skip
        kill = await self.kill_held(arm) if case.sigkill else None
        seen = await faulted
        return seen, list(await asyncio.gather(*peers)), kill

    async def _cut(self, call: WireCall, after_s: float) -> Seen:
        started = time.monotonic()
        try:
            out = await self.client.send_and_disconnect(
                call.method, call.path, after_s=after_s,
                json=NO_JSON if call.json is None else call.json, data=call.data,
                files=list(call.files) or None)  # fmt: skip
        except ClientError as exc:
            return Seen("error", time.monotonic() - started, detail=type(exc).__name__)
        if out.answered:
            return Seen("answer", out.elapsed_s, out.status)
        return Seen("cut", out.elapsed_s, detail=f"client disconnected at {after_s:.2f} s")

    async def kill_held(self, arm: FaultArm) -> Kill | None:
        """SIGKILL the worker the fault holds (its pid is the injector's record), if it is ours
        to signal; None when the fault never fired (nothing is held)."""
        fired = await self.wait_fired(arm, self.params.error_deadline_s)
        if fired is None:
            return None
        channel = self.served.channel
        record = channel.channel.record if isinstance(channel, FileControl) else None
        return kill_held(fired, local=channel.local, tree_root=self.served.pid, record=record)

    async def fired(self, arm: FaultArm) -> FaultRecord | None:
        for record in await of_arm(self.served.channel, arm.arm_id):
            if record.event is FaultEvent.FIRED:
                return record
        return None

    async def wait_fired(self, arm: FaultArm, within_s: float,
                         until_done: "asyncio.Task[object] | None" = None,
                         ) -> FaultRecord | None:  # fmt: skip
        """The arm's firing, waited for up to ``within_s`` (or until ``until_done`` ended: a
        request answered without passing the point never will)."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if (record := await self.fired(arm)) is not None:
                return record
            if until_done is not None and until_done.done():
                return await self.fired(arm)
            await asyncio.sleep(0.05)
        return None

    async def requests_left(self, within_s: float) -> float | None:
        """Requests ``/metrics`` counts running or waiting, polled until none is left or
        ``within_s`` passed (None: the server has no such gauges)."""
        deadline = time.monotonic() + within_s
        while True:
            try:
                raw = await self.side.send_raw("GET", "/metrics",
                                               timeout_s=self.params.health_timeout_s)
                values = parse_work_metrics(raw.body.decode("utf-8", "replace")) if raw.ok else {}
            except ClientError:
                values = {}
            if RUNNING not in values and WAITING not in values:
                return None
            left = values.get(RUNNING, 0.0) + values.get(WAITING, 0.0)
            if left <= 0 or time.monotonic() >= deadline:
                return left
            await asyncio.sleep(0.25)

    async def aftermath(self, before: set[int], baseline: str | None, seed: int,
                        extra_wait_s: float = 0.0) -> After:  # fmt: skip
        """Poll until the server recovered (health 200 and the known-good request succeeded)
        or its process tree is gone, or both deadlines passed."""
        p = self.params
        started = time.monotonic()
        deadline = started + extra_wait_s + max(p.recover_deadline_s, p.exit_deadline_s)
        health = nxt = ""
        while True:
            root_gone = self.served.pid is not None and not running(self.served.pid)
            if root_gone:
                return await self._exited(before, started, health, nxt)
            try:
                raw = await self.side.send_raw("GET", "/health", timeout_s=p.health_timeout_s)
                health = f"HTTP {raw.status}"
                if raw.status == 200:
                    digest, nxt = await self.known_good(seed)
                    if digest is not None:
                        took = time.monotonic() - started
                        return After(True, took, None if baseline is None else digest == baseline,
                                     False, health=health, next_request=nxt)  # fmt: skip
            except ClientError as exc:
                health = f"no answer ({type(exc).__name__})"
                if self.served.pid is None and "Unreachable" in type(exc).__name__:
                    return After(False, None, None, True, health=health, next_request=nxt)
            if time.monotonic() >= deadline:
                return After(False, None, None, False, health=health, next_request=nxt)
            await asyncio.sleep(0.5)

    async def _exited(self, before: set[int], started: float, health: str, nxt: str) -> After:
        """The root is gone: wait up to the exit deadline for the rest of the tree."""
        deadline = started + self.params.exit_deadline_s
        left = {pid for pid in before if running(pid)}
        while left and time.monotonic() < deadline:
            await asyncio.sleep(0.25)
            left = {pid for pid in left if running(pid)}
        orphans = tuple(sorted(left))
        return After(False, None, None, True, orphans, health=health, next_request=nxt,
                     orphans_named=tuple(described(pid) for pid in orphans))  # fmt: skip
