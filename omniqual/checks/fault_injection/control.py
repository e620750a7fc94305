"""How the fault-injection gate reaches the injector: a :class:`FaultControl` arms and disarms
one fault and reads what the injector recorded, over one of two channels.

- :class:`FileControl`: the control and record files on this host (a launch's, or a URL
  deployment's named by ``params.control_path``/``record_path``);
- :class:`AgentControl`: ``omniqual agent`` beside a server on another host (``--agent``), whose
  synchronous client is asked from a worker thread.

:func:`control_for` picks: the agent first, then a launch's files, then the named files, else
a reason there is no injector.
"""

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from omniqual.checks.base import TargetInfo
from omniqual.checks.fault_injection.params import FaultInjectionParams
from omniqual.deploy.agent.client import AgentClient, AgentError
from omniqual.deploy.fault_control import FaultChannel
from omniqual.domain.fault_injection import FaultArm, FaultMode, FaultRecord, FaultStage

T = TypeVar("T")
NO_INJECTOR = "no injector"
AGENT_WITHOUT_CONTROL = ("the agent has no injector control (start it with --fault-control and "
                         "--fault-record)")  # fmt: skip


class ControlError(RuntimeError):
    """The injector's channel could not be used (the message says why, for the result)."""


class FaultControl(Protocol):
    """Arms, disarms and reads one injector; ``local``: its processes run on this host."""

    local: bool

    async def arm(self, fault: FaultArm) -> None: ...

    async def disarm(self) -> None: ...

    async def records(self, after: int = 0) -> list[FaultRecord]: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


def new_arm(case_id: str, stage: FaultStage, mode: FaultMode, *, step: int | None = None,
            hang_s: float = 0.0, times: int = 1,
            request_seed: int | None = None) -> FaultArm:  # fmt: skip
    """One arming, with an arm id of its own (the injector counts firings per id), aimed at the
    request sent with ``request_seed`` where the injector can tell requests apart."""
    return FaultArm(arm_id=f"{case_id}-{uuid.uuid4().hex[:8]}", case_id=case_id, stage=stage,
                    mode=mode, step=step, hang_s=hang_s, times=times,
                    request_seed=request_seed)  # fmt: skip


async def of_arm(control: FaultControl, arm_id: str) -> list[FaultRecord]:
    return [r for r in await control.records() if r.arm_id == arm_id]


class FileControl:
    """The injector's control and record files on this host."""

    local = True

    def __init__(self, channel: FaultChannel) -> None:
        self.channel = channel

    async def arm(self, fault: FaultArm) -> None:
        self.channel.write_arm(fault)

    async def disarm(self) -> None:
        self.channel.disarm()

    async def records(self, after: int = 0) -> list[FaultRecord]:
        return self.channel.records()[after:]

    def describe(self) -> str:
        return str(self.channel.record)

    def close(self) -> None:
        """Nothing to close: the files stay for the record artifact."""


class AgentControl:
    """The injector behind ``omniqual agent``; its 404 on the fault routes means it has none."""

    local = False

    def __init__(self, client: AgentClient) -> None:
        self.client = client

    async def arm(self, fault: FaultArm) -> None:
        await self._ask(self.client.arm, fault)

    async def disarm(self) -> None:
        await self._ask(self.client.disarm)

    async def records(self, after: int = 0) -> list[FaultRecord]:
        found: list[FaultRecord] = []
        while True:
            page = await self._ask(self.client.records, after)
            found += page.records
            if page.next <= after or not page.records:
                return found
            after = page.next

    async def _ask(self, call: Callable[..., T], *args: object) -> T:
        try:
            return await asyncio.to_thread(call, *args)
        except AgentError as exc:
            if exc.status == 404:
                raise ControlError(AGENT_WITHOUT_CONTROL) from exc
            raise ControlError(f"the agent could not be asked: {exc}") from exc

    def describe(self) -> str:
        return f"the agent at {self.client.access.url}"

    def close(self) -> None:
        self.client.close()


def control_for(target: TargetInfo, url: str | None, params: FaultInjectionParams,
                temp: Path) -> FaultControl | str:  # fmt: skip
    """The channel to the target's injector (``url``: given, not launched), or why there is none."""
    if target.agent is not None:
        return AgentControl(AgentClient(target.agent))
    if url is None:
        return FileControl(FaultChannel.in_dir(temp / "channel"))
    if params.control_path is None or params.record_path is None:
        return (f"{NO_INJECTOR}: a deployment given by URL must be started with the injector "
                "(OMNIQUAL_FAULT_CONTROL, OMNIQUAL_FAULT_RECORD, its bootstrap on PYTHONPATH) and "
                "the gate given both paths (params control_path, record_path), or be watched by "
                "`omniqual agent` (--agent) started with --fault-control and --fault-record")
    return FileControl(FaultChannel(Path(params.control_path), Path(params.record_path)))
