"""The committed perf baselines state what they can resolve, from their own launches: the
half-width of an unchanged server's typical interval with the gate's launches per run, which
their threshold must not be below. The CPU class's threshold is one its 2-vCPU launch spread
holds with the gate's launches per run: a typical unchanged run passes and a typical run 30 %
slower fails (each a run whose launch means sit at their expectation)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from omniqual.checks.perf import PerfParams
from omniqual.domain.gate import GateSpec
from omniqual.loadgen.regression import Decision, Direction, Spread, compare_launches, resolution
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
    launches = Spread.of([x.mean for x in baseline.evidence.launches])
    half = resolution(launches, within_sd=within_sd(baseline),
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


def test_the_cpu_baseline_passes_a_typical_unchanged_run_and_fails_one_30_percent_slower() -> None:
    amd = "__authenticamd-x86-64-avx512-bf16-avx512f-avx2.yaml"
    [path] = [p for p in FILES if p.name.endswith(amd)]
    baseline = load_baseline(path)
    params = gate_params()
    launches = Spread.of([x.mean for x in baseline.evidence.launches])
    sd = within_sd(baseline)
    m, r = params.launches, params.min_repetitions

    def typical(factor: float) -> Decision:
        runs = [Spread(r, launches.mean * factor, sd * factor)] * m
        return compare_launches(runs, launches, threshold=baseline.threshold,
                                direction=Direction.LOWER,
                                confidence=params.confidence).decision  # fmt: skip

    assert typical(1.0) is Decision.WITHIN
    assert typical(1.3) is Decision.REGRESSED
    # One launch (a deployment given by URL) cannot hold this threshold: it says so by being
    # inconclusive, never by a verdict.
    one = compare_launches([Spread(r, launches.mean, sd)], launches,
                           threshold=baseline.threshold, direction=Direction.LOWER,
                           confidence=params.confidence)  # fmt: skip
    assert one.decision is Decision.UNDECIDED
