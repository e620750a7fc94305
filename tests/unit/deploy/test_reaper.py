"""The reaper installs its signal handlers only while targets exist, and restores the caller's."""

import signal
from collections.abc import Iterator

import pytest

from omniqual.deploy import reaper


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    yield
    for key in reaper.registered():
        reaper.unregister(key)


def test_handlers_come_and_go_with_registrations() -> None:
    before = signal.getsignal(signal.SIGTERM)
    reaper.register(1, lambda: None)
    assert signal.getsignal(signal.SIGTERM) is not before
    reaper.register(2, lambda: None)
    reaper.unregister(1)
    assert signal.getsignal(signal.SIGTERM) is not before
    reaper.unregister(2)
    assert signal.getsignal(signal.SIGTERM) == before
    assert reaper.registered() == ()


def test_ignored_signals_stay_ignored() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        reaper.register(3, lambda: None)
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        reaper.unregister(3)
        signal.signal(signal.SIGHUP, previous)


def test_stop_all_runs_every_stopper_even_if_one_fails() -> None:
    stopped: list[int] = []

    def failing() -> None:
        raise RuntimeError("boom")

    reaper.register(4, failing)
    reaper.register(5, lambda: stopped.append(5))
    reaper.stop_all()
    assert stopped == [5]
    assert reaper.registered() == ()


def test_signal_handler_stops_targets_then_calls_the_callers_handler() -> None:
    calls: list[str] = []

    def callers(signum: int, frame: object) -> None:
        calls.append(f"caller {signum}")

    previous = signal.signal(signal.SIGTERM, callers)
    try:
        reaper.register(6, lambda: calls.append("stopped"))
        handler = signal.getsignal(signal.SIGTERM)
        assert callable(handler) and handler is not callers
        handler(signal.SIGTERM, None)
        assert calls == ["stopped", f"caller {int(signal.SIGTERM)}"]
        assert signal.getsignal(signal.SIGTERM) is callers  # restored once nothing is left
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_pinned_handlers_stay_without_targets() -> None:
    before = signal.getsignal(signal.SIGTERM)
    reaper.install_signal_handlers()
    try:
        installed = signal.getsignal(signal.SIGTERM)
        assert installed is not before
        reaper.register(7, lambda: None)
        reaper.unregister(7)
        assert signal.getsignal(signal.SIGTERM) is installed
    finally:
        reaper.uninstall_signal_handlers()
    assert signal.getsignal(signal.SIGTERM) == before


def test_worker_threads_cannot_install_handlers() -> None:
    import threading

    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            reaper.install_signal_handlers()
        except RuntimeError as exc:
            errors.append(exc)

    worker = threading.Thread(target=attempt)
    worker.start()
    worker.join()
    assert len(errors) == 1 and "main thread" in str(errors[0])
