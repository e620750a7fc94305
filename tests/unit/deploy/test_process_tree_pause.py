"""A server's tree is paused and resumed as a whole, and a paused tree still stops on its SIGTERM
(real processes, no sockets)."""

import os
import subprocess
import sys
import time

import psutil

from omniqual.deploy.process_tree import pause_tree, resume_tree, terminate_tree

# A parent in its own session (as launched servers are) with one child, both sleeping.
TREE = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"  # noqa: E501


def _status_all(pid: int, wanted: str, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        if len(procs) == 2 and all(p.status() == wanted for p in procs):
            return True
        time.sleep(0.05)
    return False


def _spawn() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", TREE], start_new_session=True)
    assert _status_all(proc.pid, psutil.STATUS_SLEEPING)
    return proc


def test_a_paused_tree_is_stopped_whole_and_runs_again_when_resumed() -> None:
    proc = _spawn()
    try:
        pause_tree(proc.pid)
        assert _status_all(proc.pid, psutil.STATUS_STOPPED)
        resume_tree(proc.pid)
        assert _status_all(proc.pid, psutil.STATUS_SLEEPING)
    finally:
        terminate_tree(proc.pid, os.getpgid(proc.pid), grace_s=5)
        proc.wait(timeout=5)


def test_a_paused_tree_handles_its_sigterm_without_a_sigkill() -> None:
    proc = _spawn()
    pause_tree(proc.pid)
    assert _status_all(proc.pid, psutil.STATUS_STOPPED)
    killed = terminate_tree(proc.pid, os.getpgid(proc.pid), grace_s=10)
    proc.wait(timeout=5)
    assert killed is False  # SIGTERM was enough: the tree was resumed to handle it
    assert proc.returncode == -15
