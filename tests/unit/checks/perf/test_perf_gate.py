"""The perf gate on the in-process fake, on a virtual clock (time jumps to the next timer, so
every latency is exactly the fake's scripted work): a server made 20 % slower than its baseline
fails, noise inside the threshold passes, a wide spread is inconclusive, and a baseline of other
hardware or another serve configuration never judges."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.base import CheckOutcome
from omniqual.checks.perf import PerfCheck, PerfParams
from omniqual.checks.perf.params import workload_sha256
from omniqual.checks.soak.params import ShapeSpec
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.loadgen.host_speed import REFERENCE_WORKLOAD, CpuTimes
from omniqual.specs.perf_baseline import (
    BaselineEvidence,
    BaselineLaunch,
    PerfBaseline,
    ServeIdentity,
    baseline_path,
    dump_baseline,
)
from tests.fakes.check_context import Harness, context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_omni import FakeOmni
from tests.unit.loadgen.conftest import _run_virtual

HW = "cpu-x86_64-2core-avx2"
SERVE = "a" * 64
CKPT = "c" * 64
BASE = (0.100, 0.102, 0.098)  # the baseline's repetitions of latency_mean (s)
LAUNCH_MEANS = (0.100, 0.101, 0.099)  # the means of the launches it was set from
TEST_CPU = "GenuineIntel x86_64 avx2"  # the CPU class every probed test baseline and host share
PARAMS = PerfParams(shapes=(ShapeSpec(name="small", width=64, height=64, steps=2),),
                    requests=4, min_repetitions=3, max_repetitions=5)  # fmt: skip


def write_baseline(root: Path, row: RowKey, *, hardware: str = HW, serve: str = SERVE,
                   values: Sequence[float] = BASE, host_probe_s: float | None = None,
                   host_steal_fraction: float | None = None,
                   host_probe_workload: str | None = REFERENCE_WORKLOAD,
                   host_cpu_class: str | None = TEST_CPU,
                   launch_means: Sequence[float] = LAUNCH_MEANS, metric: str = "latency_mean",
                   params: PerfParams = PARAMS,
                   launch_probes: Sequence[float] | None = None) -> Path:  # fmt: skip
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    baseline = PerfBaseline(
        row=str(row), hardware=hardware, metric=metric, direction="lower",
        threshold=0.10, owner="perf-owners", workload_sha256=workload_sha256(params, "image"),
        serve=ServeIdentity(recipe="fake", serve_config_sha256=serve, checkpoint_sha256=CKPT),
        evidence=BaselineEvidence(run_id="r0", result_id="x0", set_at=datetime(2025, 1, 1,
                                  tzinfo=UTC), repetitions=tuple(values), mean=mean, stdev=sd,
                                  host_probe_s=host_probe_s,
                                  host_probe_workload=host_probe_workload if host_probe_s
                                  else None,
                                  host_steal_fraction=host_steal_fraction,
                                  host_cpu_class=host_cpu_class if host_probe_s else None,
                                  launches=tuple(BaselineLaunch(
                                      run_id=f"r{i}", result_id=f"x{i}", mean=m, repetitions=3,
                                      host_probe_s=launch_probes[i] if launch_probes else None)
                                      for i, m in enumerate(launch_means))),
    )  # fmt: skip
    path = baseline_path(root / "gates/perf-baselines", row, row.get("hardware") or HW)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_baseline(baseline))
    return path


def run(tmp_path: Path, work_s: Sequence[float], *, baseline: dict[str, Any] | None = None,
        params: PerfParams = PARAMS, budget_s: float | None = None,
        host: tuple[Sequence[float], float] | None = None, check: PerfCheck | None = None,
        local: bool | None = None, hardware: str = HW,
        cpu: str | None = TEST_CPU) -> tuple[CheckOutcome, Harness]:  # fmt: skip
    """``work_s[i]`` is the fake's service time in repetition i (the first is the warm-up;
    the last value repeats). ``host`` puts the server on this host (a pid) with the reference
    workload readings (before, after) and the steal fraction during the repetitions; or
    ``check`` (its own readings) with ``local`` saying whether the server is on this host.
    The server is a deployment given by URL: one launch."""
    fake = FakeOmni(FakeConfig(image_work_s=work_s[0]))
    harness = Harness()
    ctx, _ = context("perf", "images-generations", fake=fake, harness=harness, root=tmp_path)
    row = RowKey((*ctx.row.items, ("hardware", hardware)))
    ctx = replace(
        ctx,
        row=row,
        gate=GateSpec(id="perf", kind="perf", version=1, budget_s=budget_s),
        provenance=Provenance(serve_config_sha256=SERVE, checkpoint_sha256=CKPT),
    )
    if baseline is not None:
        write_baseline(tmp_path, row, **{"params": params, **baseline})
    calls = iter(work_s)

    def next_work(_message: str, _fraction: float | None) -> None:
        harness.progress.append(_message)
        fake.config.image_work_s = next(calls, fake.config.image_work_s)

    ctx = replace(ctx, progress=next_work)
    check = check or PerfCheck(cpu_class=lambda: TEST_CPU, fingerprint=lambda: {"host": "test"})
    if local:
        ctx = replace(ctx, target=replace(ctx.target, pid=4242))
    if host is not None:
        # Readings in the first half of the measurement (before the second repetition ends)
        # read host[0][0], the later ones host[0][1].
        (before, after), steal = host
        probes = iter((before, before))
        ticks = iter((CpuTimes(total=100.0, steal=0.0), CpuTimes(total=200.0, steal=100 * steal)))
        check = PerfCheck(cpu_class=lambda: cpu, fingerprint=lambda: {"host": "test"},
                          host_probe=lambda: next(probes, after),
                          cpu_times=lambda: next(ticks), settle_s=0.0)  # fmt: skip
        ctx = replace(ctx, target=replace(ctx.target, pid=4242))
    return _run_virtual(check.run(ctx, params)), harness


def document(outcome: CheckOutcome, harness: Harness) -> dict[str, Any]:
    assert "perf-result.json" in {a.name for a in outcome.artifacts}
    data: dict[str, Any] = json.loads(harness.sink.blobs["perf-result.json"])
    return data


def test_twenty_percent_slower_fails_against_its_baseline(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, [0.1, 0.120, 0.121, 0.119], baseline={})
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert "latency_mean regressed" in outcome.reasons[0]
    doc = document(outcome, harness)
    comparison = doc["judgement"]["comparison"]
    assert comparison["low"] > 0.10  # the whole interval lies beyond the threshold
    assert comparison["change"] == pytest.approx(0.20, abs=0.01)
    assert [r["latency_mean"] for r in doc["repetitions"][1:]] == pytest.approx(
        [0.120, 0.121, 0.119], abs=1e-6)  # fmt: skip


def test_noise_inside_the_threshold_passes(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, [0.1, 0.103, 0.101, 0.105], baseline={})
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    comparison = document(outcome, harness)["judgement"]["comparison"]
    assert comparison["high"] <= 0.10 and comparison["decision"] == "within"


def test_a_wide_spread_is_inconclusive_after_the_ceiling(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, [0.1, 0.08, 0.16, 0.10, 0.15, 0.09], baseline={})
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert "inconclusive after 5 repetitions (max_repetitions reached)" in outcome.reasons[0]
    # Sequential: repetitions were added past the minimum of 3 before giving up.
    assert sum(m.startswith("perf: repetition") for m in harness.progress) == 5


def test_a_baseline_from_one_launch_never_judges(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, [0.1, 0.2, 0.2, 0.2], baseline={"launch_means": ()})
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("baseline set from too few launches")
    assert "set from 1 server launch," in outcome.reasons[0]
    # Nothing judged it: measured up to the ceiling, for a baseline set from this result.
    assert len(document(outcome, harness)["judgement"]["values"]) == 5


def test_twenty_percent_slower_on_a_faster_launch_never_passes(tmp_path: Path) -> None:
    # The baseline's launches were 8 % apart; this launch runs 13 % faster than their mean
    # and the build is 20 % slower: a +5 % mean, which repetitions alone would pass.
    spread = {"launch_means": (0.100, 0.108, 0.092, 0.104, 0.096)}
    work = 0.100 * 0.87 * 1.2
    outcome, _ = run(tmp_path, [0.1, work, work * 1.01, work * 0.99], baseline=spread)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    # The launches alone keep the interval across the threshold: it stops at the minimum.
    assert outcome.reasons[0].startswith("inconclusive after 3 repetitions (more cannot decide: "
                                         "the spread of the baseline's 5 sessions alone keeps a "
                                         "new session's interval at least ±13.6% wide")  # fmt: skip
    assert outcome.effective["perf"]["comparison"]["high"] > 0.10


def test_a_baseline_of_other_hardware_never_judges(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, [0.1, 0.2, 0.2, 0.2], baseline={"hardware": "1x-h100-80gb"})
    assert outcome.outcome is GateOutcome.INVALID
    assert "no baseline for this hardware/config" in outcome.reasons[0]
    assert "hardware 1x-h100-80gb" in outcome.reasons[0]


def test_a_baseline_of_another_serve_config_never_judges(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, [0.1, 0.2, 0.2, 0.2], baseline={"serve": "f" * 64})
    assert outcome.outcome is GateOutcome.INVALID
    assert "another serve configuration" in outcome.reasons[0]


def test_without_a_baseline_the_repetitions_are_still_recorded(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, [0.1, 0.1, 0.1, 0.1])
    assert outcome.outcome is GateOutcome.INVALID
    assert "does not exist" in outcome.reasons[0]
    judgement = document(outcome, harness)["judgement"]
    # Nothing to judge: measured up to max_repetitions, for a baseline's spread.
    assert judgement["values"] == pytest.approx([0.1] * 5, abs=1e-6)
    assert outcome.effective["perf"]["workload_sha256"] == workload_sha256(PARAMS, "image")


def test_a_host_too_slow_for_the_budget_is_invalid(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, [1.0], baseline={}, budget_s=5.0)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("host too slow for this workload")
