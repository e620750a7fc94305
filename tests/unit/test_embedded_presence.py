"""What a live test does without the embedded target: skip outside CI, fail in CI, and say why.
The environment and what is missing are inputs; nothing is installed or served."""

from pathlib import Path

import pytest

from tests.integration.embedded.embedded_presence import missing_embedded, require_embedded

MISSING = "vllm_omni, torch"


@pytest.mark.parametrize("env", [{"CI": "true"}, {"CI": "1"}, {"CI": "True"},
                                 {"OMNIQUAL_REQUIRE_EMBEDDED": "1"}])  # fmt: skip
def test_in_ci_a_missing_target_fails_naming_what_is_missing(env: dict[str, str]) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        require_embedded(MISSING, env)
    reason = str(failed.value)
    assert "missing: vllm_omni, torch" in reason
    assert "fails rather than skips" in reason and ".ci/install-embedded.sh" in reason


@pytest.mark.parametrize("env", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"},
                                 {"OMNIQUAL_REQUIRE_EMBEDDED": "0"}])  # fmt: skip
def test_outside_ci_a_missing_target_skips_with_its_reason(env: dict[str, str]) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_embedded(MISSING, env)
    reason = str(skipped.value)
    assert "missing: vllm_omni, torch" in reason and ".ci/install-embedded.sh" in reason


@pytest.mark.parametrize("env", [{}, {"CI": "true"}])
def test_an_installed_target_neither_skips_nor_fails(env: dict[str, str]) -> None:
    assert require_embedded(None, env) is None  # neither Skipped nor Failed raised


def test_a_missing_vllm_executable_counts_as_a_missing_target(tmp_path: Path) -> None:
    found = missing_embedded(tmp_path / "vllm")
    assert found is not None and f"the `vllm` executable ({tmp_path / 'vllm'})" in found
