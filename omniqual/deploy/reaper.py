"""Leave no server behind: stop every non-persistent launched target at exit or on SIGTERM/SIGHUP,
and reap the servers of runs whose owner process was killed outright.

SIGINT already raises KeyboardInterrupt, which unwinds through ``launched()``. SIGTERM and
SIGHUP would kill omniqual without unwinding, orphaning servers in their own sessions; so while
targets are registered, a handler stops them and then hands the signal on: to the caller's
handler when one was installed, otherwise to the default action (re-raised). Python only lets
the main thread install handlers: a launch from the main thread installs them itself and they
are restored when the last target is gone; a program that launches from worker threads (the
async engine) calls :func:`install_signal_handlers` once from the main thread instead.

SIGKILL runs none of this; each server's watchdog stops it then. Should one survive anyway (no
watchdog could start, or it was killed too), its state file still names the dead owner:
:func:`reap_orphans` stops such servers and returns what it did, for the caller to report.
"""

import atexit
import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from omniqual.deploy.process_tree import recorded_tree, terminate_recorded
from omniqual.deploy.state import TargetState, list_states, remove_state

logger = logging.getLogger(__name__)

StopFn = Callable[[], object]
_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None

_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_lock = threading.RLock()
_stoppers: dict[int, StopFn] = {}
_previous: dict[signal.Signals, _Handler] = {}
_atexit_registered = False
_pinned = False


def register(key: int, stop: StopFn) -> None:
    global _atexit_registered
    with _lock:
        _stoppers[key] = stop
        if not _atexit_registered:
            atexit.register(stop_all)
            _atexit_registered = True
        _install_handlers()


def unregister(key: int) -> None:
    with _lock:
        _stoppers.pop(key, None)
        if not _stoppers and not _pinned:
            _restore_handlers()


def install_signal_handlers() -> None:
    """Install the SIGTERM/SIGHUP handlers now and keep them (call from the main thread)."""
    global _pinned
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("signal handlers can only be installed from the main thread")
    with _lock:
        _pinned = True
        _install_handlers()


def uninstall_signal_handlers() -> None:
    """Undo :func:`install_signal_handlers` (handlers stay while targets are registered)."""
    global _pinned
    with _lock:
        _pinned = False
        if not _stoppers:
            _restore_handlers()


def registered() -> tuple[int, ...]:
    with _lock:
        return tuple(_stoppers)


def stop_all() -> None:
    """Stop every registered target (idempotent; errors are logged, never raised)."""
    with _lock:
        pending = list(_stoppers.items())
    for key, stop in pending:
        try:
            stop()
        except Exception:
            logger.exception("could not stop launched target %d", key)
        unregister(key)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    logger.warning("signal %d: stopping %d launched target(s)", signum, len(_stoppers))
    previous = _previous.get(signal.Signals(signum), signal.SIG_DFL)
    stop_all()
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)


def _install_handlers() -> None:
    if _previous or threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        current = signal.getsignal(sig)
        if current == signal.SIG_IGN:
            continue  # the caller chose to ignore it; so do we
        _previous[sig] = current
        signal.signal(sig, _on_signal)


def _restore_handlers() -> None:
    if not _previous or threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in list(_previous.items()):
        if signal.getsignal(sig) is _on_signal:
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        del _previous[sig]


@dataclass(frozen=True, slots=True)
class Reaped:
    """A target of a run whose omniqual process is gone, and what was done about it."""

    name: str
    pid: int
    url: str
    owner_pid: int | None
    was_running: bool
    """True: its processes were stopped now; False: only its stale record was removed."""


def reap(state: TargetState, state_dir: Path | None = None) -> Reaped:
    """Stop whatever is left of ``state``'s server (its tree and group) and drop its record."""
    running = bool(recorded_tree(state.pid, state.pgid, state.create_time))
    if running:
        logger.warning("reaping %s (pid %d): its owner pid %s is gone", state.name, state.pid,
                       state.owner_pid)  # fmt: skip
        terminate_recorded(state.pid, state.pgid, state.create_time, state.grace_s)
    remove_state(state.name, state_dir)
    return Reaped(state.name, state.pid, state.url, state.owner_pid, running)


def reap_orphans(state_dir: Path | None = None) -> tuple[Reaped, ...]:
    """Reap every non-persistent target whose owner process is gone; persistent targets
    (``target up``) and targets of live omniqual processes are left alone."""
    return tuple(reap(state, state_dir) for state in list_states(state_dir) if state.orphaned())
