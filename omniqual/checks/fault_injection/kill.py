"""The harness's SIGKILL of the worker a ``worker-sigkill`` fault holds, and whether it may send it.

The pid comes from the injector's ``fired`` record, written inside the server's processes. The
number names the held worker only to a reader in the worker's pid namespace, on its host, while
that process lives: read from a server in a container, on another host sharing the record file,
or after the worker died, it names some other process here. So the harness signals it only when
the record's namespace is ours and so is /proc's view of the pid, and the pid belongs to the
served process tree (for a server given by URL without a pid: a process whose environment names
this injector's record file). Whatever stops the kill is said in a :class:`Kill` that was not
sent; the case is then invalid, never judged as if the worker had died (the held request would
complete when the hold ends, and read as an error answered as success).
"""

import errno
import os
import signal
from dataclasses import dataclass
from pathlib import Path

import psutil

from omniqual.checks.fault_injection.processes import pid_namespace, tree_pids
from omniqual.domain.fault_injection import RECORD_ENV, FaultRecord

ON_ANOTHER_HOST = ("the server runs on another host and `omniqual agent` has no route to "
                   "signal it")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Kill:
    """The SIGKILL the case needed: sent, or the reason it was not (the case is then invalid)."""

    sent: bool
    line: str


def refusal(fired: FaultRecord, tree_root: int | None, record: Path | None) -> str | None:
    """Why ``fired.pid`` is not this harness's to signal; None when it is."""
    pid, ours = fired.pid, pid_namespace("self")
    if ours is None:
        return "this host shows no pid namespace of ours (/proc/self/ns/pid): no pid is signalled"
    if fired.pid_ns and fired.pid_ns != ours:
        return (f"the held worker (pid {pid}) runs in another pid namespace ({fired.pid_ns}; "
                f"ours {ours}): pid {pid} here is another process")  # fmt: skip
    if not psutil.pid_exists(pid):
        return f"the held worker (pid {pid}) was gone before the SIGKILL"
    theirs = pid_namespace(pid)
    if theirs is None:
        return f"the pid namespace of pid {pid} cannot be read: not ours to signal"
    if theirs != ours:
        return f"pid {pid} is in another pid namespace ({theirs}; ours {ours}): not ours to signal"
    if tree_root is not None:
        if pid not in tree_pids(tree_root):
            return (f"pid {pid} is not in the server's process tree (root pid {tree_root}): not "
                    "ours to signal")  # fmt: skip
        return None
    if record is None:
        return f"neither a served tree nor a record file identifies pid {pid} as the server's"
    try:
        environ = psutil.Process(pid).environ()
    except psutil.Error as exc:
        return f"the environment of pid {pid} cannot be read ({type(exc).__name__}): not ours"
    if environ.get(RECORD_ENV) != str(record):
        return f"pid {pid} carries no injector writing {record}: not ours to signal"
    return None


def kill_held(fired: FaultRecord, *, local: bool, tree_root: int | None,
              record: Path | None) -> Kill:  # fmt: skip
    """SIGKILL the worker ``fired`` names, if it is ours to signal."""
    pid = fired.pid
    if not local:
        return Kill(False, f"SIGKILL not sent to the held worker (pid {pid}): {ON_ANOTHER_HOST}")
    why = refusal(fired, tree_root, record)
    if why is not None:
        return Kill(False, f"SIGKILL not sent: {why}")
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return Kill(False, f"SIGKILL not delivered: the held worker (pid {pid}) was gone before "
                           "the SIGKILL (ESRCH)")  # fmt: skip
    except PermissionError:
        return Kill(False, f"SIGKILL not delivered: signalling pid {pid} is not permitted (EPERM)")
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "error")
        return Kill(False, f"SIGKILL of pid {pid} not delivered: {exc.strerror} ({name})")
    return Kill(True, f"SIGKILL sent to pid {pid} (held in {fired.where})")
