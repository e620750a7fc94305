"""An agent's readings as an observer's: the :class:`TreeReader` of a server on another host.

:class:`AgentTree` asks ``omniqual agent`` for each sample and turns its answer into the same
:class:`ObserverSample` the local reader takes, so the observer, the soak and the abort gates
use it unchanged. Times are the harness's own: a sample's ``at`` is when its answer arrived
here and ``elapsed_s`` counts on this host's monotonic clock, so the two hosts' clocks never
mix. The watched directories are the agent's (paths on the server's host). A sample the agent
could not give raises :class:`AgentError` (the observer's thread skips it); a CPU reading that
failed is absent (None), as a local one of a vanished process is.
"""

import logging
import time
from pathlib import Path

from omniqual.deploy.agent.client import AgentAccess, AgentClient, AgentError
from omniqual.deploy.observer import GpuMemory, ObserverSample
from omniqual.domain.agent import AGENT_SOURCE, AgentIdentity, AgentReadings, TreeState

logger = logging.getLogger(__name__)


def sample_of(readings: AgentReadings, *, elapsed_s: float, at: float) -> ObserverSample:
    """The observer's sample for one agent answer, timed on the harness's clocks."""
    return ObserverSample(
        elapsed_s=elapsed_s, at=at, processes=readings.processes, rss_bytes=readings.rss_bytes,
        pss_bytes=readings.pss_bytes, uss_bytes=readings.uss_bytes, open_fds=readings.open_fds,
        threads=readings.threads, dir_files=tuple((d.path, d.files) for d in readings.dir_files),
        gpus=tuple(GpuMemory(g.index, g.used_bytes, g.total_bytes, g.tree_used_bytes)
                   for g in readings.gpus),
        cpu_s=readings.cpu_s, nvml=readings.nvml,
    )  # fmt: skip


class AgentTree:
    """The process tree an agent watches, read over HTTP (see :func:`connect`)."""

    source = AGENT_SOURCE

    def __init__(self, client: AgentClient, identity: AgentIdentity) -> None:
        self.client = client
        self.identity = identity
        self.watch_dirs = tuple(Path(d) for d in identity.watch_dirs)
        self.gone_seen = False

    def open(self) -> None:
        """Nothing to open here: the agent holds NVML on its own host."""

    def sample(self, started: float) -> ObserverSample:
        readings = self.client.readings()
        self.gone_seen = self.gone_seen or readings.state is TreeState.GONE
        return sample_of(readings, elapsed_s=time.monotonic() - started, at=time.time())

    def cpu_seconds(self) -> float | None:
        try:
            reading = self.client.cpu()
        except AgentError as exc:
            logger.warning("CPU time from the agent: %s", exc)
            return None
        return reading.cpu_s if reading.state is TreeState.RUNNING else None

    def describe(self) -> dict[str, object]:
        """What the evidence says of the source: the agent, its host and the watched pid."""
        return {"agent": self.client.access.url, "host": self.identity.host,
                "pid": self.identity.pid, "omniqual_version": self.identity.omniqual_version}

    def close(self) -> None:
        self.client.close()


def connect(access: AgentAccess, *, timeout_s: float = 5.0) -> AgentTree:
    """A reader of the agent at ``access``: its identity is asked first, so a wrong URL or token
    fails here (:class:`AgentError`), before any gate relies on it."""
    client = AgentClient(access, timeout_s=timeout_s)
    try:
        identity = client.identity()
    except BaseException:
        client.close()
        raise
    return AgentTree(client, identity)
