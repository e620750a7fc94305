"""The progress a run prints, fed hand-made events on fake streams with a hand-set clock: the
exact plain lines for a log, which stream they go to, and that no line goes to two."""

import io
import itertools
import json
from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from omniqual.cli.console import ConsoleObserver, plain_stream
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.run.events import (
    EngineEvent,
    GateFinished,
    GateProgress,
    GateSkippedAsDone,
    GateStarted,
    PlannedItem,
    PlanReady,
    TargetLost,
    TargetReady,
    TargetStarting,
)
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("worked_priors")

ROW = "model=m;task=t2i"
LABEL = "model=m"  # the plan has one row: the model alone names it
URL = "http://127.0.0.1:8000"
LONG_REASON = "case 3: " + "width 1024 was accepted\n  and served; " * 20


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def stream(terminal: bool) -> Console:
    return Console(file=io.StringIO(), force_terminal=terminal, highlight=False)


def text(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def finished(gate: str, kind: str, seconds: float, outcome: GateOutcome,
             *reasons: str) -> GateFinished:  # fmt: skip
    at = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    return GateFinished(GateResult(
        result_id="r1", run_id="run", gate_id=gate, gate_version=1, gate_kind=kind, row=ROW,
        outcome=outcome, reasons=reasons, target="live", started_at=at,
        finished_at=at + timedelta(seconds=seconds),
    ))  # fmt: skip


PLAN = PlanReady(
    (PlannedItem("api-contract", "api_contract", ROW, "live"),
     PlannedItem("soak", "soak", ROW, "live"),
     PlannedItem("strict-load", "strict_load", ROW, "live")),
    launches=1, skipped_as_done=2,
)  # fmt: skip
RUN: list[tuple[float, EngineEvent]] = [
    (0.0, PLAN),
    (0.0, GateSkippedAsDone("abort", ROW)),
    (2.0, TargetStarting("live")),
    (44.0, TargetReady("live", URL, 41.5)),
    (45.0, GateStarted("api-contract", ROW)),
    (50.0, GateProgress("api-contract", "case 1 of 9", 0.1)),
    (75.0, finished("api-contract", "api_contract", 30.0, GateOutcome.FAILED, LONG_REASON, "x")),
    (76.0, TargetLost("live", "api-contract", ROW)),
]
CUT = " ".join(LONG_REASON.split())[:159] + "…"  # the first reason, on one line, 160 characters
LINES = [
    "[00:00] plan: 3 gates, 1 launch (2 already recorded); ~17:30 left (estimating)",
    f"[00:00] already recorded: abort on {LABEL}",
    "[00:02] launch live: starting",
    f"[00:44] launch live: ready at {URL} after 41.5 s; ~15:30 left",
    f"[00:45] gate api-contract on {LABEL}: started (1/3)",
    f"[01:15] gate api-contract on {LABEL}: failed in 30.0 s (1/3 done, ~11:30 left) - {CUT}",
    f"[01:16] launch live: stopped answering after api-contract on {LABEL}; relaunching",
]


def feed(observer: ConsoleObserver, clock: Clock, events: list[tuple[float, EngineEvent]]) -> None:
    for at, event in events:
        clock.now = at
        observer(event)


def observer_on(out: Console, err: Console, *, as_json: bool = False,
                heartbeat_s: float = 60.0) -> tuple[ConsoleObserver, Clock]:  # fmt: skip
    clock = Clock()
    return ConsoleObserver(as_json=as_json, out=out, err=err, clock=clock,
                           heartbeat_s=heartbeat_s), clock  # fmt: skip


def test_a_log_gets_one_plain_line_per_event_with_the_time_since_the_run_began() -> None:
    out, err = stream(False), stream(False)
    observer, clock = observer_on(out, err)
    feed(observer, clock, RUN)
    assert text(out).splitlines() == LINES
    assert text(err) == ""
    assert "\x1b" not in text(out)
    assert len(LINES[5].split(" - ", 1)[1]) == 160


@pytest.mark.parametrize(
    ("out_terminal", "err_terminal", "as_json", "where"),
    [(False, False, False, "stdout"), (False, True, False, "stdout"),
     (False, False, True, "stderr"), (True, False, False, "stderr"),
     (True, True, False, None), (False, True, True, None), (True, True, True, None)],
)  # fmt: skip
def test_plain_lines_go_to_stdout_for_a_log_else_to_a_stderr_that_is_no_terminal(
    out_terminal: bool, err_terminal: bool, as_json: bool, where: str | None
) -> None:
    assert plain_stream(out_terminal=out_terminal, err_terminal=err_terminal,
                        as_json=as_json) == where  # fmt: skip


@pytest.mark.parametrize(
    ("out_terminal", "err_terminal", "as_json"),
    list(itertools.product([False, True], [False, True], [False, True])),
)
def test_no_line_is_printed_to_two_streams(
    out_terminal: bool, err_terminal: bool, as_json: bool
) -> None:
    out, err = stream(out_terminal), stream(err_terminal)
    observer, clock = observer_on(out, err, as_json=as_json)
    feed(observer, clock, RUN)
    out_lines, err_lines = text(out).splitlines(), text(err).splitlines()
    plain = [line for line in out_lines + err_lines if line.startswith("[")]
    assert sorted(plain) == (sorted(LINES) if plain else [])  # each line once, in one stream
    where = plain_stream(out_terminal=out_terminal, err_terminal=err_terminal, as_json=as_json)
    assert bool(plain) == (where is not None)
    # The finished gate: once for a person (a plain line, or the terminal's line unless JSON
    # owns the results) and once as JSON when asked for.
    for_a_person = 1 if where is not None or not as_json else 0
    said = sum("failed" in line and "api-contract" in line for line in out_lines + err_lines)
    assert said == for_a_person + (1 if as_json else 0)


def test_with_json_stdout_holds_only_the_results_and_the_plain_lines_go_to_stderr() -> None:
    out, err = stream(False), stream(False)
    observer, clock = observer_on(out, err, as_json=True)
    feed(observer, clock, RUN)
    (result,) = [json.loads(line) for line in text(out).splitlines()]
    assert result["gate"] == "api-contract" and result["outcome"] == "failed"
    assert text(err).splitlines() == LINES


def test_on_a_terminal_a_finished_gate_says_the_time_left() -> None:
    out, err = stream(True), stream(True)
    observer, clock = observer_on(out, err)
    feed(observer, clock, RUN)
    shown = text(err)
    assert "failed" in shown and "~11:30 left" in shown and "after 41.5 s" in shown
    assert text(out) == "" and "[00:" not in shown


def test_a_url_target_is_named_without_a_start_up_time() -> None:
    out, err = stream(False), stream(False)
    observer, clock = observer_on(out, err)
    feed(observer, clock, [(0.0, PlanReady((), 0)), (3.0, TargetReady("given", URL, None))])
    assert text(out).splitlines() == [
        "[00:00] plan: 0 gates, 0 launches; ~00:00 left (estimating)",
        f"[00:03] target given: answering at {URL}",
    ]
