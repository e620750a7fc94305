"""G0-33: the negative cases run before any positive request, so a side effect a rejection leaves
is seen before any request could have caused it, with a gate budget too (the probe that times
the served requests then comes after the rejections). A rejection the contract declares the
release serves (a declared deviation answered 2xx) is a served request: it comes after."""

from __future__ import annotations

from pathlib import Path

from conftest import CONTRACTS, run_gate
from served_fake import ServedFake

from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig

EXPECTED_REJECTION = ("4", "5")


def _ids(run: object) -> list[str]:
    return [c.id for c in run.outcome.cases]  # type: ignore[attr-defined]


def test_with_a_budget_every_rejection_runs_before_the_probe(fake_config: FakeConfig) -> None:
    run = run_gate(ServedFake(fake_config), api_modes=["images-generations"],
                   temp_dirs=[str(fake_config.temp_dir)], budget_s=600.0)  # fmt: skip
    cases = run.outcome.cases
    probe = _ids(run).index("images-generations/probe")
    rejected = [i for i, c in enumerate(cases) if c.expected_status.startswith(EXPECTED_REJECTION)]
    assert rejected and max(rejected) < probe, _ids(run)


def test_a_slow_host_is_told_so_after_the_rejections(fake_config: FakeConfig) -> None:
    fake_config.image_work_s = 0.2
    run = run_gate(ServedFake(fake_config), api_modes=["images-generations"],
                   temp_dirs=[str(fake_config.temp_dir)], budget_s=1.0)  # fmt: skip
    assert run.outcome.outcome is GateOutcome.INVALID
    ids = _ids(run)
    assert ids[-1] == "images-generations/probe"
    before = [c for c in run.outcome.cases[:-1] if c.id.startswith("images-generations/")]
    assert before and all(c.expected_status.startswith(EXPECTED_REJECTION) for c in before)


def test_a_served_deviation_comes_after_the_pure_rejections(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    served = source.replace(
        "deviations:\n",
        'deviations:\n  - release: "0.30.*"\n    cases: [images-generations/n/above-max]\n'
        "    observed_status: 200\n    reason: the fake serves one image too many\n",
    )
    (tmp_path / "fake-omni.yaml").write_text(served)
    fake_config.max_n = 10**6  # it serves any n
    run = run_gate(ServedFake(fake_config), contracts_dir=tmp_path,
                   api_modes=["images-generations"], temp_dirs=[str(fake_config.temp_dir)],
                   budget_s=600.0)  # fmt: skip
    ids = _ids(run)
    probe, deviation = (
        ids.index("images-generations/probe"),
        ids.index("images-generations/n/above-max"),
    )
    pure = [i for i, c in enumerate(run.outcome.cases)
            if c.expected_status.startswith(EXPECTED_REJECTION) and i != deviation]  # fmt: skip
    assert max(pure) < probe < deviation, ids
