"""The committed perf baselines state what they can resolve, from their own sessions: the
half-width of an unchanged server's typical interval (one new session of the gate's launches per
run), which their threshold must not be below. The AMD CPU class's threshold is one its 2-vCPU
sessions hold: a typical unchanged run passes, a typical run twice as slow fails, and one 30 %
slower is inconclusive across its hosts (each a run whose launch means sit at their
expectation)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from omniqual.checks.perf import PerfParams
from omniqual.checks.perf.judge import baseline_sessions
from omniqual.domain.gate import GateSpec
from omniqual.loadgen.regression import Decision, Direction, Spread, compare_launches
from omniqual.loadgen.sessions import one_session, session_resolution, session_spread
from omniqual.specs.perf_baseline import PerfBaseline, load_baseline
from omniqual.specs.source import load_yaml

ROOT = Path(__file__).resolve().parents[4]
FILES = sorted((ROOT / "gates" / "perf-baselines").glob("*.yaml"))


def gate_params() -> PerfParams:
    spec = GateSpec.model_validate(load_yaml(ROOT / "gates" / "perf.yaml").data)
    return PerfParams.model_validate(spec.params)


def within_sd(baseline: PerfBaseline) -> float:
    """The pooled within-launch spread of one repetition, from the total spread of all of them
    less the spread of the launch means (independent of the order the values are kept in)."""
    ev = baseline.evidence
    grand = statistics.fmean(ev.repetitions)
    total = sum((v - grand) ** 2 for v in ev.repetitions)
    between = sum(x.repetitions * (x.mean - grand) ** 2 for x in ev.launches)
    return math.sqrt((total - between) / (len(ev.repetitions) - len(ev.launches)))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_committed_baseline_states_what_it_can_resolve(path: Path) -> None:
    baseline = load_baseline(path)
    stated = baseline.resolution
    assert stated is not None
    half = session_resolution(baseline_sessions(baseline), within_sd=within_sd(baseline),
                              per_run=stated.launches_per_run,
                              repetitions=stated.repetitions_per_launch,
                              confidence=stated.confidence)  # fmt: skip
    assert stated.min_threshold == pytest.approx(half, abs=5e-4)
    assert baseline.threshold >= stated.min_threshold
    assert stated.detects == pytest.approx(baseline.threshold + stated.min_threshold, abs=5e-4)
    params = gate_params()
    assert stated.launches_per_run == params.launches
    assert stated.repetitions_per_launch == params.min_repetitions
    assert stated.confidence == params.confidence


def test_the_amd_cpu_baseline_passes_an_unchanged_run_and_fails_one_twice_as_slow() -> None:
    amd = "__authenticamd-x86-64-avx512-bf16-avx512f-avx2.yaml"
    [path] = [p for p in FILES if p.name.endswith(amd)]
    baseline = load_baseline(path)
    params = gate_params()
    sessions = session_spread(baseline_sessions(baseline))
    sd = within_sd(baseline)
    m, r = params.launches, params.min_repetitions

    def typical(factor: float) -> Decision:
        runs = [Spread(r, sessions.mean * factor * (1 + d), sd * factor)
                for d in (-0.01, 0.0, 0.01)][:m]  # fmt: skip
        return compare_launches([one_session(runs)], sessions, threshold=baseline.threshold,
                                direction=Direction.LOWER,
                                confidence=params.confidence).decision  # fmt: skip

    assert m == 3
    assert typical(1.0) is Decision.WITHIN
    assert typical(2.0) is Decision.REGRESSED
    # Its sessions spread 6.9 %: a run 30 % slower on one host of the class cannot be told
    # from an unchanged one on a slower host, and says so by being inconclusive.
    assert typical(1.3) is Decision.UNDECIDED
