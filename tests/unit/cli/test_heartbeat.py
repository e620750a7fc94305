"""The heartbeat of plain progress: a line saying what is under way when a minute passed
without one (a hand-set clock; the thread itself with a tiny interval, waited for, not timed)."""

import io
import threading

import pytest
from rich.console import Console

from omniqual.cli.console import ConsoleObserver
from omniqual.cli.heartbeat import Heartbeat
from omniqual.engine.run.events import (
    GateProgress,
    GateStarted,
    PlannedItem,
    PlanReady,
    TargetStarting,
)
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("worked_priors")

ROW = "model=m;task=t2i"
LABEL = "model=m"  # the plan has one row: the model alone names it


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def log_observer(heartbeat_s: float = 60.0) -> tuple[ConsoleObserver, Clock, io.StringIO]:
    clock, log = Clock(), io.StringIO()
    observer = ConsoleObserver(out=Console(file=log), err=Console(file=io.StringIO()),
                               clock=clock, heartbeat_s=heartbeat_s)  # fmt: skip
    return observer, clock, log


def test_a_minute_without_a_line_says_which_gate_runs_for_how_long_and_the_time_left() -> None:
    observer, clock, log = log_observer()
    observer(PlanReady((PlannedItem("soak", "soak", ROW, "live"),
                        PlannedItem("strict-load", "strict_load", ROW, "live")), 0))  # fmt: skip
    clock.now = 20.0
    observer(GateStarted("soak", ROW))
    clock.now = 30.0
    observer(GateProgress("soak", "phase 2:\n 40/100 requests", 0.4))  # no line of its own
    clock.now = 79.9
    assert not observer.heartbeat.check()
    clock.now = 80.0
    assert observer.heartbeat.check()
    clock.now = 139.0
    assert not observer.heartbeat.check()  # a minute from the heartbeat's own line
    clock.now = 140.0
    assert observer.heartbeat.check()
    assert log.getvalue().splitlines()[-2:] == [
        f"[01:20] still running: gate soak on {LABEL} for 01:00 (phase 2: 40/100 requests); "
        "~10:30 left (estimating)",
        f"[02:20] still running: gate soak on {LABEL} for 02:00 (phase 2: 40/100 requests); "
        "~09:30 left (estimating)",
    ]


def test_a_launch_under_way_is_named_and_any_line_restarts_the_minute() -> None:
    observer, clock, log = log_observer()
    observer(PlanReady((PlannedItem("api-contract", "api_contract", ROW, "live"),), 1))
    clock.now = 50.0
    observer(TargetStarting("live"))
    clock.now = 109.0
    assert not observer.heartbeat.check()
    clock.now = 110.0
    assert observer.heartbeat.check()
    assert log.getvalue().splitlines()[-1] == (
        "[01:50] still running: launch live starting for 01:00; ~05:00 left (estimating)"
    )


def test_with_nothing_under_way_the_heartbeat_says_so() -> None:
    observer, clock, log = log_observer()
    clock.now = 60.0
    assert observer.heartbeat.check()
    assert log.getvalue() == (
        "[01:00] still running: no gate or launch under way; time left unknown\n"
    )


def test_the_thread_beats_and_stops() -> None:
    beat = threading.Event()
    heartbeat = Heartbeat(lambda _now: beat.set(), interval_s=0.01)
    heartbeat.start()
    try:
        assert beat.wait(timeout=10)
    finally:
        heartbeat.stop()
    assert heartbeat._thread is None


def test_the_observer_owns_its_heartbeat_for_a_log_only() -> None:
    log = io.StringIO()
    observer = ConsoleObserver(out=Console(file=log), err=Console(file=io.StringIO()),
                               heartbeat_s=0.01)  # fmt: skip
    with observer:
        thread = observer.heartbeat._thread
        assert thread is not None and thread.daemon
        said = threading.Event()
        original = observer.heartbeat.beat

        def beat(now: float) -> None:
            original(now)
            said.set()

        observer.heartbeat.beat = beat
        assert said.wait(timeout=10)
    assert observer.heartbeat._thread is None and not thread.is_alive()
    assert "still running: no gate or launch under way" in log.getvalue()
    on_terminals = ConsoleObserver(out=Console(file=io.StringIO(), force_terminal=True),
                                   err=Console(file=io.StringIO(), force_terminal=True),
                                   heartbeat_s=0.01)  # fmt: skip
    with on_terminals:
        assert on_terminals.heartbeat._thread is None  # the bars show elapsed time themselves


def test_row_labels_keep_the_model_and_the_axes_that_tell_rows_apart() -> None:
    from omniqual.cli.plain import row_labels

    a = "model=sd3;task=t2i;quantization=none;hardware=cpu"
    b = "model=sd3;task=t2i;quantization=fp8;hardware=cpu"
    c = "model=wan;task=t2v;quantization=none;hardware=cpu"
    assert row_labels([a, b, c]) == {
        a: "model=sd3,task=t2i,quantization=none",
        b: "model=sd3,task=t2i,quantization=fp8",
        c: "model=wan,task=t2v,quantization=none",
    }
    assert row_labels([a]) == {a: "model=sd3"}
