"""The served process tree as this host sees it, for the fault-injection gate: its pids, whether
one still runs, what one is (an orphan is named by its command line, not by a bare number), and
the pid namespace a pid lives in."""

import os

import psutil


def tree_pids(pid: int | None) -> set[int]:
    if pid is None:
        return set()
    try:
        root = psutil.Process(pid)
        return {pid, *(c.pid for c in root.children(recursive=True))}
    except psutil.Error:
        return set()


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def described(pid: int) -> str:
    """``pid 123 (sleep 600)``: the pid with its command line (its name where that is hidden)."""
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            what = " ".join(process.cmdline()) or process.name()
    except psutil.Error:
        return f"pid {pid}"
    return f"pid {pid} ({what[:80]})"


def pid_namespace(pid: int | str) -> str | None:
    """``pid:[4026531836]``: the pid namespace of ``pid`` (or ``"self"``); None when unreadable
    (no such process, no permission, or no /proc on this host)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
