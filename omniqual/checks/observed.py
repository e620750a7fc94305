"""Which reader observes a gate's target: its process on this host, an agent, or none.

The abort and soak gates ask :func:`observed` and judge whatever comes back the same way:

- ``target.agent`` set (``--agent``): the agent beside the server on another host, whose
  identity is asked first (a wrong URL or token is a harness fault, never an absent signal);
  its watched directories are the ones counted (a gate's ``watch_dirs`` name paths on this
  host, which say nothing of a server elsewhere);
- ``target.pid`` known (a launch, or ``--server-pid``): the local process tree, with the
  gate's watch directories, else the server's known or environment temp dir;
- neither: no reader (the ``/metrics`` gauges stand in) and the configured directories.

``source`` is what the evidence records as the readings' origin, and ``details`` who gave them.
"""

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.checks.base import TargetInfo
from omniqual.deploy.agent.remote import AgentTree, connect
from omniqual.deploy.observer import LocalTree, TreeReader
from omniqual.deploy.process_tree import temp_dir_of
from omniqual.domain.agent import AGENT_SOURCE

METRICS_SOURCE = "metrics"


def resolve_watch_dirs(
    configured: Sequence[str], pid: int | None, known: Sequence[Path] = ()
) -> tuple[Path, ...]:
    """The configured directories, else the target's known temp dirs (the private TMPDIR
    omniqual gave a server it launched), else the server's TMPDIR read from its environment.
    Nothing else: the host's shared temp dir holds other processes' files, so counting it would
    blame the server for them."""
    if configured:
        return tuple(Path(d) for d in configured)
    if known:
        return tuple(known)
    temp = temp_dir_of(pid) if pid is not None else None
    return (temp,) if temp is not None else ()


@dataclass(frozen=True, slots=True)
class Observed:
    tree: TreeReader | None
    watch_dirs: tuple[Path, ...]
    source: str
    details: dict[str, object] = field(default_factory=dict)
    """For an agent: its URL, host name, watched pid and version (recorded with the result)."""


@asynccontextmanager
async def observed(target: TargetInfo, configured: Sequence[str]) -> AsyncIterator[Observed]:
    """The reader of ``target`` for the block (an agent's connection closes after it)."""
    if target.agent is not None:
        tree: AgentTree = await asyncio.to_thread(connect, target.agent)
        try:
            yield Observed(tree, tree.watch_dirs, AGENT_SOURCE, tree.describe())
        finally:
            tree.close()
        return
    dirs = resolve_watch_dirs(configured, target.pid, target.temp_dirs)
    if target.pid is not None:
        local = LocalTree(target.pid, watch_dirs=dirs)
        yield Observed(local, dirs, local.source)
        return
    yield Observed(None, dirs, METRICS_SOURCE)
