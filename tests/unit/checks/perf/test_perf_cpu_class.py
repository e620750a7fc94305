"""A probed baseline judges only runs on its own CPU class: across classes the server's
libraries pick other kernels, which the reference workload does not see, so a slower build on a
host whose probe reads like the baseline's must not pass there. The class's own file is found
beside the row's plain one."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.perf.host import OTHER_CPU
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.perf_baseline import cpu_class_slug
from tests.unit.checks.perf.test_perf_gate import TEST_CPU, document, run

AMX = "GenuineIntel x86_64 amx_tile avx512_bf16 avx512f avx2"
SLOWER_30 = [0.1, 0.130, 0.131, 0.129]
SAME = [0.1, 0.101, 0.099, 0.100]
PROBED = {"host_probe_s": 0.010}


def test_a_slower_build_on_another_cpu_class_is_never_passed(tmp_path: Path) -> None:
    # The reference workload reads exactly as when the baseline was set: on another class of
    # CPU that says nothing of the server, so no verdict, naming both classes.
    outcome, _ = run(tmp_path, SLOWER_30, baseline=PROBED, host=((0.010, 0.010), 0.0), cpu=AMX)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    reason = next(r for r in outcome.reasons if r.startswith(OTHER_CPU))
    assert TEST_CPU in reason and AMX in reason


def test_on_its_own_cpu_class_the_same_baseline_fails_the_slower_build(tmp_path: Path) -> None:
    outcome, harness = run(tmp_path, SLOWER_30, baseline=PROBED, host=((0.010, 0.010), 0.0))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert document(outcome, harness)["judgement"]["host"]["cpu_class"] == TEST_CPU


def test_a_probed_baseline_that_records_no_cpu_class_judges_no_probed_run(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SAME, baseline={**PROBED, "host_cpu_class": None},
                     host=((0.010, 0.010), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith(OTHER_CPU) and "does not record" in r for r in outcome.reasons)


def test_a_host_of_unknown_class_is_not_judged_by_a_probed_baseline(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, SAME, baseline=PROBED, host=((0.010, 0.010), 0.0), cpu=None)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith(OTHER_CPU) for r in outcome.reasons)


def test_the_baseline_set_on_this_cpu_class_judges_beside_the_plain_file(tmp_path: Path) -> None:
    # The row's plain file was set on another class: alone, it judges nothing here.
    outcome, harness = run(tmp_path, SAME, baseline={**PROBED, "host_cpu_class": AMX},
                           host=((0.010, 0.010), 0.0))  # fmt: skip
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    plain = tmp_path / document(outcome, harness)["judgement"]["baseline_path"]
    # The file of this host's class, beside it, does.
    own = plain.with_name(f"{plain.stem}__{cpu_class_slug(TEST_CPU)}.yaml")
    own.write_text(plain.read_text().replace(AMX, TEST_CPU))
    outcome, harness = run(tmp_path, SAME, host=((0.010, 0.010), 0.0))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert document(outcome, harness)["judgement"]["baseline_path"].endswith(own.name)
    assert AMX in plain.read_text()  # the other class's file is left as it was
