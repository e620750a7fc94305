"""The servers up on a shared host, and which of them a measuring gate has paused.

A server that is up and idle is not an activity of the share
(:mod:`omniqual.engine.run.host_share`), yet it is not free: vLLM's processes wake up on timers
while idle. On a 2-core host one idle sd3-tiny server took 4.5 % of the CPU, and three made a
measured server 22 % slower. So while a gate that
measures time or memory holds the host, every server up beside it is paused (``SIGSTOP`` to its
process group and descendants) and resumed (``SIGCONT``) when the gate gives the host up, for
its own start-ups too. Never paused: the gate's own target (the servers it measures) and the
servers launched inside the gate. By the share's rule no other group's activity runs while a
measuring gate holds the host, so nothing talks to a paused server; code that talks to one
outside an activity must take a shared activity first (the health check between gates does).

A server that stops while paused is resumed first, so it handles its ``SIGTERM``.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from omniqual.deploy.process_tree import pause_tree, resume_tree

Signal = Callable[[int], None]


@dataclass(eq=False, slots=True)
class UpServer:
    group: str
    """The launch group (its lead recipe's id) whose launch it is."""
    label: str
    pid: int | None
    """Its process (None: not a process of this host, never paused)."""
    owner: object | None
    """The activity it was launched in (a gate's own servers are never paused by that gate)."""
    paused_by: object | None = None


@dataclass(slots=True)
class IdleServers:
    """Every server up now, whichever group launched it; pauses and resumes them."""

    pause: Signal = pause_tree
    resume: Signal = resume_tree
    up: list[UpServer] = field(default_factory=list)

    def add(self, server: UpServer) -> None:
        self.up.append(server)

    def remove(self, server: UpServer) -> None:
        if server.paused_by is not None and server.pid is not None:
            self.resume(server.pid)  # it is being stopped: it must handle its SIGTERM
            server.paused_by = None
        self.up.remove(server)

    def pause_beside(self, holder: object, spare: frozenset[int]) -> list[str]:
        """Pause every server up that is not ``holder``'s own nor one of ``spare``; their
        labels."""
        paused: list[str] = []
        for server in self.up:
            if (server.pid is None or server.owner is holder or server.pid in spare
                    or server.paused_by is not None):  # fmt: skip
                continue
            self.pause(server.pid)
            server.paused_by = holder
            paused.append(server.label)
        return paused

    def resume_for(self, holder: object) -> None:
        """Resume what ``holder`` paused."""
        for server in self.up:
            if server.paused_by is holder and server.pid is not None:
                self.resume(server.pid)
                server.paused_by = None

    def labels(self) -> list[tuple[str, str]]:
        return [(server.group, server.label) for server in self.up]
