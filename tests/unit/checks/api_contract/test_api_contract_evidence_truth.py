"""Evidence truth for the api_contract gate: reproduced
declared deviations are limitations, stale ones fail; the judge names fields precisely; parity
on an unserved path fails; a side-effect check that cannot run makes the gate invalid; video
outputs without a sample table fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONTRACTS, GateRun, run_gate

from omniqual.checks.api_contract.judge import names_field
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import FakeConfig, FakeOmni


def _reasons(run: GateRun) -> str:
    return "\n".join(run.outcome.reasons)


def _cases(run: GateRun) -> dict[str, object]:
    return {c.id: c for c in run.outcome.cases}


def _with_deviation(tmp_path: Path, cases: str, status: int, reason: str) -> Path:
    text = (CONTRACTS / "fake-omni.yaml").read_text() + (
        f'  - release: "0.30.*"\n    cases: [{cases}]\n    observed_status: {status}\n'
        f"    reason: {reason}\n"
    )
    (tmp_path / "fake-omni.yaml").write_text(text)
    return tmp_path


def test_reproduced_deviation_is_a_limitation_naming_the_case(fake_config: FakeConfig) -> None:
    run = run_gate(
        FakeOmni(fake_config), api_modes=["images-edits"], temp_dirs=[str(fake_config.temp_dir)]
    )
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert run.outcome.limitations == (
        "the server answers 422, not 400, to an edit without an image (seen: "
        "images-edits/image/missing-input (no image) -> HTTP 422).",
    )


def test_stale_deviation_fails_until_removed(fake_config: FakeConfig, tmp_path: Path) -> None:
    contracts = _with_deviation(
        tmp_path, "images-generations/n/above-max", 200, "accepts n above 10"
    )
    run = run_gate(
        FakeOmni(fake_config),
        contracts_dir=contracts,
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "stale deviation: upstream fixed it? images-generations/n/above-max" in _reasons(run)
    assert run.outcome.limitations == ()


def test_error_param_or_whole_word_names_the_field(fake_config: FakeConfig) -> None:
    fake_config.faults.vague_errors = True  # "Invalid request parameters", no param
    run = run_gate(FakeOmni(fake_config), api_modes=["images-generations"])
    below = _cases(run)["images-generations/n/below-min"]
    assert below.outcome is GateOutcome.FAILED  # type: ignore[attr-defined]
    assert "does not name the field 'n'" in _reasons(run)


@pytest.mark.parametrize(
    ("param", "message", "field", "named"),
    [
        ("body.n", "anything", "n", True),
        ("seed", "n must be at least 1", "n", False),  # the param decides when it is filled
        (None, "Invalid value", "n", False),  # "invalid" contains an n, not the word n
        (None, "n: Input should be greater than or equal to 1", "n", True),
        (None, "num inference steps must be >= 1", "num_inference_steps", True),
        (None, "num_inference_steps_x is off", "num_inference_steps", False),
    ],
)
def test_names_field(param: str | None, message: str, field: str, named: bool) -> None:
    assert names_field(param, message, field) is named


def test_parity_on_an_unserved_path_fails(fake_config: FakeConfig) -> None:
    fake_config.faults.sync_video_not_served = True
    run = run_gate(
        FakeOmni(fake_config), api_modes=["videos-async"], temp_dirs=[str(fake_config.temp_dir)]
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    parity = _cases(run)["parity/videos-async~videos-sync"]
    assert parity.outcome is GateOutcome.FAILED  # type: ignore[attr-defined]
    assert "/v1/videos/sync is not served (HTTP 404)" in _reasons(run)


def test_no_job_list_is_a_recorded_case_and_invalid(fake_config: FakeConfig) -> None:
    fake_config.faults.no_video_list = True
    run = run_gate(
        FakeOmni(fake_config),
        api_modes=["videos-async"],
        parity=False,
        temp_dirs=[str(fake_config.temp_dir)],
    )
    jobs = _cases(run)["side-effects/async-jobs"]
    assert jobs.outcome is GateOutcome.SKIPPED  # type: ignore[attr-defined]
    assert "GET /v1/videos answered HTTP 405" in jobs.note  # type: ignore[attr-defined]
    assert run.outcome.outcome is GateOutcome.INVALID
    assert "side-effects/async-jobs not checked" in _reasons(run)


def test_mp4_without_sample_table_fails(fake_config: FakeConfig) -> None:
    fake_config.faults.mp4_without_sample_table = True
    run = run_gate(
        FakeOmni(fake_config),
        api_modes=["videos-sync"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "no stsz box: frame count unverifiable" in _reasons(run)


def test_a_deviation_naming_no_case_fails(fake_config: FakeConfig, tmp_path: Path) -> None:
    contracts = _with_deviation(tmp_path, "images-generations/n/abvoe-max", 200, "typo")
    run = run_gate(
        FakeOmni(fake_config),
        contracts_dir=contracts,
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "case pattern 'images-generations/n/abvoe-max' names no case" in _reasons(run)


@pytest.mark.parametrize(
    ("pattern", "status"),
    [("images-generations/default/n", 200),  # the field-effect gate's served default
     ("images-generations/lora/missing-path", 500)],  # the lora gate's refusal of a bad adapter
)  # fmt: skip
def test_a_deviation_of_another_gate_on_the_same_contract_names_a_case(
    fake_config: FakeConfig, tmp_path: Path, pattern: str, status: int
) -> None:
    # The field-effect gate judges `default/<field>`, the lora gate `lora/<refusal>`, of the
    # same contract: no typo to flag.
    contracts = _with_deviation(tmp_path, pattern, status, "another gate's case")
    run = run_gate(
        FakeOmni(fake_config),
        contracts_dir=contracts,
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert "names no case" not in " ".join(_reasons(run))


def test_a_lora_case_the_gate_does_not_send_is_a_typo(
    fake_config: FakeConfig, tmp_path: Path
) -> None:
    contracts = _with_deviation(tmp_path, "images-generations/lora/missing-pth", 500, "typo")
    run = run_gate(
        FakeOmni(fake_config),
        contracts_dir=contracts,
        api_modes=["images-generations"],
        temp_dirs=[str(fake_config.temp_dir)],
    )
    assert "case pattern 'images-generations/lora/missing-pth' names no case" in _reasons(run)


def _observing(tmp_path: Path, line: str) -> Path:
    """fake-omni's contract with its 422 deviation declaring what it observes (``line``)."""
    declared = "    observed_status: 422\n"
    text = (CONTRACTS / "fake-omni.yaml").read_text()
    assert declared in text
    (tmp_path / "fake-omni.yaml").write_text(text.replace(declared, declared + line))
    return tmp_path


@pytest.mark.parametrize(
    "line",
    ["    observed_error: size must be a multiple of 16\n",
     "    observed_defect: accepted-but-invalid\n"],
)  # fmt: skip
def test_a_deviation_absorbs_only_the_problem_it_declares(
    fake_config: FakeConfig, tmp_path: Path, line: str
) -> None:
    # Same case, same status (422), another observed problem: a failure, not the deviation.
    run = run_gate(FakeOmni(fake_config), contracts_dir=_observing(tmp_path, line),
                   api_modes=["images-edits"], temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    assert run.outcome.outcome is GateOutcome.FAILED, _reasons(run)
    missing = _cases(run)["images-edits/image/missing-input"]
    assert not missing.deviation  # type: ignore[attr-defined]
    assert "images-edits/image/missing-input" in _reasons(run)
    assert run.outcome.limitations == ()


@pytest.mark.parametrize(
    "line",
    ["    observed_error: \"'image' or 'url' is required\"\n",
     "    observed_defect: expected HTTP 400, observed HTTP 422\n"],
)  # fmt: skip
def test_a_deviation_absorbs_the_problem_it_declares(
    fake_config: FakeConfig, tmp_path: Path, line: str
) -> None:
    run = run_gate(FakeOmni(fake_config), contracts_dir=_observing(tmp_path, line),
                   api_modes=["images-edits"], temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    assert run.outcome.outcome is GateOutcome.PASSED, _reasons(run)
    assert _cases(run)["images-edits/image/missing-input"].deviation  # type: ignore[attr-defined]
