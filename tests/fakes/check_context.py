"""Build a `CheckContext` around a fake server for check tests: in-process (no sockets) through
`FakeOmni.transport()`, or a real URL. Progress messages are recorded and may trigger hooks, so a
test can switch a fault on exactly when a named phase begins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.memory_sink import MemorySink


def row(api_mode: str, task: str = "t2i", model: str = "fake") -> RowKey:
    return RowKey((("model", model), ("task", task), ("api_mode", api_mode)))


@dataclass
class Harness:
    sink: MemorySink = field(default_factory=MemorySink)
    progress: list[str] = field(default_factory=list)
    hooks: dict[str, Callable[[], None]] = field(default_factory=dict)

    def on_progress(self, message: str, _fraction: float | None) -> None:
        self.progress.append(message)
        hook = self.hooks.get(message)
        if hook is not None:
            hook()


def context(
    kind: str,
    api_mode: str,
    *,
    fake: FakeOmni | None = None,
    url: str | None = None,
    pid: int | None = None,
    harness: Harness | None = None,
    root: Path = Path("."),
) -> tuple[CheckContext, Harness]:
    harness = harness or Harness()
    base = url or "http://fake.invalid"

    def make_client() -> OmniClient:
        if fake is not None:
            return OmniClient(base, transport=fake.transport(), timeouts=ClientTimeouts())
        return OmniClient(base)

    ctx = CheckContext(
        gate=GateSpec(id=kind, kind=kind, version=1),
        row=row(api_mode, task="t2v" if api_mode.startswith("videos") else "t2i"),
        target=TargetInfo(url=base, pid=pid, label="fake"),
        artifacts=harness.sink,
        project_root=root,
        make_client=make_client,
        progress=harness.on_progress,
        seed=7,
    )
    return ctx, harness
