"""A row that declares ``restart_policy: exits`` (what the shipped rows declare) against a fake
launch with a real process tree: a tree that exits whole on a worker's exit (or on the harness's
SIGKILL of its worker) passes with "restart required"; one that leaves a process behind fails
naming it; one whose descriptors grow a little on every fault fails once the growth since the
first case passes the bound, though no single case passes it."""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.fault_injection.tree_fake import TreeLaunches, case_summary, run_tree


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_tree_that_exits_whole_on_a_worker_exit_passes(tmp_path: Path) -> None:
    launches = TreeLaunches()
    outcome = run_tree(launches, ("encode-raise", "worker-exit", "decode-raise"))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    exit_case = case_summary(outcome, "worker-exit")
    assert exit_case["exited"] is True and exit_case["orphans"] == []
    assert exit_case["restart_required"] is True
    assert case_summary(outcome, "encode-raise")["recovered"] is True
    assert case_summary(outcome, "decode-raise")["recovered"] is True  # on the relaunch
    assert outcome.effective["launches"] == 2 and len(launches.trees) == 2


def test_a_tree_that_exits_whole_on_the_harness_sigkill_passes(tmp_path: Path) -> None:
    launches = TreeLaunches()
    outcome = run_tree(launches, ("worker-sigkill",))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    case = case_summary(outcome, "worker-sigkill")
    worker = launches.trees[0].worker
    assert case["exited"] is True and case["restart_required"] is True
    assert any(f"SIGKILL sent to pid {worker}" in a for a in case["actions"])  # type: ignore[attr-defined]


def test_a_tree_that_leaves_an_orphan_fails_naming_it(tmp_path: Path) -> None:
    launches = TreeLaunches(orphan=True)
    outcome = run_tree(launches, ("worker-exit",))
    helper = launches.trees[0].helper
    assert helper is not None
    assert outcome.outcome is GateOutcome.FAILED
    assert case_summary(outcome, "worker-exit")["orphans"] == [helper]
    reasons = [r for r in outcome.reasons if r.startswith("worker-exit:")]
    assert len(reasons) == 1 and f"{helper}" in reasons[0] and "sleep" in reasons[0], reasons
    # The fake's own clean-up, after the gate judged: SIGKILL is delivered asynchronously, so
    # the helper is given a moment to go (it would otherwise sleep 601 s).
    assert _gone_within(helper, 10.0)


def test_a_tree_whose_fds_grow_across_cases_fails(tmp_path: Path) -> None:
    # +5 descriptors per fault: each case alone stays within max_fd_growth 8, the second one
    # takes the server to +10 over the baseline taken before its first case.
    launches = TreeLaunches(fds_per_fault=5)
    outcome = run_tree(launches, ("encode-raise", "decode-raise", "output-raise"),
                       max_fd_growth=8)  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    failed = [c.id for c in outcome.cases if c.outcome is GateOutcome.FAILED]
    assert failed == ["decode-raise", "output-raise"], outcome.reasons
    assert case_summary(outcome, "encode-raise")["leak"]["fds"] == 5  # type: ignore[index]
    assert case_summary(outcome, "decode-raise")["leak"]["fds"] == 10  # type: ignore[index]
    assert any(r.startswith("decode-raise:") and "fds +10" in r and "encode-raise" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip
