"""A launched server's watchdog: the part of omniqual that outlives an omniqual killed outright.

SIGTERM, SIGHUP, Ctrl-C and a normal exit stop servers from inside omniqual
(:mod:`omniqual.deploy.reaper`); SIGKILL (a CI runner's grace period ending, the OOM killer)
runs no code at all. So every non-persistent launch also starts this tiny process in its own
session, holding the read end of a pipe whose only write end omniqual keeps (close-on-exec, so
no other child inherits it). The kernel closes that end when omniqual dies however it dies; the
watchdog then reads EOF and stops the server's whole tree: the recorded process, its
descendants and the members of its process group (vLLM's engine and worker processes), SIGTERM
first and SIGKILL after the recipe's grace. It exits by itself once the server is gone.

The launcher calls :func:`start` after spawning a server and :func:`stop` once it stopped it;
the watchdog itself runs as ``python -m omniqual.deploy.watchdog --pid P --pgid G ...``.
"""

import argparse
import logging
import os
import select
import signal
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

from omniqual.deploy.process_tree import recorded_tree, same_process, terminate_recorded

POLL_S = 0.5
logger = logging.getLogger(__name__)
_lock = threading.Lock()
_running: dict[int, "subprocess.Popen[bytes]"] = {}
"""This process's watchdogs, by the pid of the server each guards."""


def start(pid: int, create_time: float, grace_s: float, log_path: Path | None) -> None:
    """Start the watchdog of server ``pid`` (a failure to start is logged, never raised: the
    next omniqual command still reaps an orphan by its state file)."""
    argv = [
        sys.executable, "-m", "omniqual.deploy.watchdog", "--pid", str(pid), "--pgid", str(pid),
        "--create-time", repr(create_time), "--grace", repr(grace_s),
        *(["--log", str(log_path)] if log_path is not None else []),
    ]  # fmt: skip
    try:
        # Popen keeps the pipe's write end close-on-exec here: only our death (or stop())
        # closes it, never another child that inherited a copy.
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        logger.warning("no watchdog for server pid %d: %s", pid, exc)
        return
    with _lock:
        _running[pid] = process


def stop(pid: int) -> None:
    """Release server ``pid``'s watchdog once the server is stopped (it then exits by itself)."""
    with _lock:
        process = _running.pop(pid, None)
    if process is None:
        return
    if process.stdin is not None:
        process.stdin.close()  # EOF: it finds nothing left to stop and exits
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _note(log: Path | None, text: str) -> None:
    """Say what happened in the server's log, the one place its reader looks."""
    if log is None:
        return
    try:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"# omniqual watchdog {datetime.now(UTC).isoformat()}: {text}\n")
    except OSError:
        pass


def watch(pid: int, pgid: int, create_time: float, grace_s: float, log: Path | None) -> int:
    """Block until the owner's pipe (stdin) closes or the server is gone; then stop the tree."""
    owner = os.getppid()
    while True:
        ready, _, _ = select.select([sys.stdin.fileno()], [], [], POLL_S)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break  # EOF: the owner closed the pipe or died
        # Only the leader is polled (cheap); its group is scanned once the leader is gone.
        if not same_process(pid, create_time) and not recorded_tree(pid, pgid, create_time):
            return 0  # the server ended (stopped or crashed): nothing left to guard
    if recorded_tree(pid, pgid, create_time):
        _note(log, f"omniqual (pid {owner}) is gone; stopping server pid {pid} and its group")
        terminate_recorded(pid, pgid, create_time, grace_s)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="omniqual-watchdog")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--pgid", type=int, required=True)
    parser.add_argument("--create-time", type=float, required=True)
    parser.add_argument("--grace", type=float, default=15.0)
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    # The watchdog must outlive whatever ends omniqual: a terminal's Ctrl-C or a group signal
    # never reaches it (own session), and SIGTERM/SIGHUP sent to it are ignored; it exits by
    # itself once the server is gone (SIGKILL still ends it).
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    return watch(args.pid, args.pgid, args.create_time, args.grace, args.log)


if __name__ == "__main__":
    sys.exit(main())
