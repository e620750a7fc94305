"""A launched server's process tree: memory totals and group-wide termination.

Servers run in their own session, so their process group id is their pid; vLLM's worker
processes normally stay in that group. Descendants found through psutil are terminated too, in
case one started its own session. A server recorded by a launcher that has since died is found
again by (pid, pgid, create time) and stopped process by process (:func:`terminate_recorded`).
Whether a process still runs and the temp dir its environment names are read here too. A tree
is paused (``SIGSTOP``) and resumed (``SIGCONT``) as a whole; a stop resumes it after its
``SIGTERM``, so a paused tree handles it.
"""

import contextlib
import logging
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

import psutil

logger = logging.getLogger(__name__)


def tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants that still exist."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def tree_rss_bytes(pid: int) -> int:
    total = 0
    for proc in tree(pid):
        try:
            total += proc.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _living(procs: Iterable[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            continue
    return alive


def pause_tree(pid: int) -> None:
    """Stop (``SIGSTOP``) the server ``pid``: its process group at once, then stray
    descendants."""
    _signal_tree(pid, signal.SIGSTOP)


def resume_tree(pid: int) -> None:
    """Continue (``SIGCONT``) what :func:`pause_tree` stopped."""
    _signal_tree(pid, signal.SIGCONT)


def _signal_tree(pid: int, sig: signal.Signals) -> None:
    members = tree(pid)
    leads = bool(members) and _pgid_of(members[0]) == pid  # a launched server: its own session
    if leads:
        _signal_group(pid, sig)  # the whole group at once, never half of it stopped
    for proc in members:
        if not leads or _pgid_of(proc) != pid:
            _send(proc, sig)


def terminate_tree(pid: int, pgid: int, grace_s: float) -> bool:
    """SIGTERM the group (and stray descendants), SIGKILL whatever remains after ``grace_s``.

    Returns True when SIGKILL was needed. The caller reaps its own child (Popen.wait).
    """
    members = tree(pid)
    for sig in (signal.SIGTERM, signal.SIGCONT):  # a paused tree handles its SIGTERM
        _signal_group(pgid, sig)
        for proc in _living(members):
            if _pgid_of(proc) != pgid:
                _send(proc, sig)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if not _living(members) and not _group_has_live_members(pgid):
            return False
        time.sleep(0.05)
    survivors = _living(members)
    if survivors or _group_has_live_members(pgid):
        logger.info("process group %d ignored SIGTERM for %.1fs; sending SIGKILL", pgid, grace_s)
        _signal_group(pgid, signal.SIGKILL)
        for proc in survivors:
            _send(proc, signal.SIGKILL)
        psutil.wait_procs(survivors, timeout=5)
        return True
    return False


def _group_has_live_members(pgid: int) -> bool:
    if not group_alive(pgid):
        return False
    # killpg(0) also succeeds for zombies; look for a member that is not one.
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(proc.info["pid"]) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.NoSuchProcess, PermissionError):
            continue
    return False


def _pgid_of(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except ProcessLookupError:
        return None


def _send(proc: psutil.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        proc.send_signal(sig)


def same_process(pid: int, create_time: float) -> bool:
    """``pid`` is still the process created at ``create_time`` (not a reused pid, not a zombie)."""
    try:
        proc = psutil.Process(pid)
        same = abs(proc.create_time() - create_time) < 0.01
        return same and proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def recorded_tree(pid: int, pgid: int, create_time: float) -> list[psutil.Process]:
    """What is left of a server recorded as (pid, pgid, create_time), after its launcher died:
    the process and its descendants if it is still the same process, plus members of its group
    created after it. Never a process that merely reuses a recorded id."""
    members = tree(pid) if same_process(pid, create_time) else []
    seen = {proc.pid for proc in members}
    for proc in psutil.process_iter(["pid", "create_time"]):
        if proc.info["pid"] in seen or proc.info["pid"] == os.getpid():
            continue
        try:
            in_group = os.getpgid(proc.info["pid"]) == pgid
        except (ProcessLookupError, PermissionError):
            continue
        # A group outlives its leader only while it has members, so a member created after the
        # recorded leader belongs to it; anything older reuses the number.
        if in_group and proc.info["create_time"] >= create_time - 0.01:
            members.append(proc)
    return _living(members)


def terminate_recorded(pid: int, pgid: int, create_time: float, grace_s: float) -> bool:
    """Stop what :func:`recorded_tree` finds: SIGTERM, then SIGKILL after ``grace_s``.

    Signals go to each process, never to the group id (which may have been reused). Returns
    True when anything was still running.
    """
    members = recorded_tree(pid, pgid, create_time)
    if not members:
        return False
    for proc in members:
        _send(proc, signal.SIGTERM)
        _send(proc, signal.SIGCONT)  # a paused process handles its SIGTERM
    _, alive = psutil.wait_procs(members, timeout=grace_s)
    # Children forked during the grace period belong to the tree too.
    alive = _living([*alive, *recorded_tree(pid, pgid, create_time)])
    if alive:
        logger.info("%d process(es) of server %d ignored SIGTERM; sending SIGKILL", len(alive), pid)
        for proc in alive:
            _send(proc, signal.SIGKILL)
        psutil.wait_procs(alive, timeout=5)
    return True


def temp_dir_of(pid: int) -> Path | None:
    """The ``TMPDIR`` in the environment of process ``pid`` (None: unset, gone or unreadable)."""
    temp: str | None = None
    with contextlib.suppress(psutil.Error, OSError):
        temp = psutil.Process(pid).environ().get("TMPDIR")
    return Path(temp) if temp else None


def is_running(pid: int) -> bool:
    """Whether the process ``pid`` still runs (a zombie waiting for its parent does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True
