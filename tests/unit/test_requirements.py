"""What a test does without a piece it needs (tests/requirements.py): skip outside CI, fail in
CI or where the piece's OMNIQUAL_REQUIRE_* variable is set, and name the install step either
way. A module whose package is installed but which is itself missing always fails."""

from pathlib import Path

import pytest

from tests.requirements import require_module, require_or_skip, required_here

HINT = "install it with .ci/install-x.sh"


@pytest.mark.parametrize("env", [{"CI": "true"}, {"CI": "1"}, {"CI": "True"}, {"CI": "yes"},
                                 {"OMNIQUAL_REQUIRE_X": "1"}])  # fmt: skip
def test_ci_or_the_pieces_variable_makes_a_missing_piece_fail(env: dict[str, str]) -> None:
    assert required_here(env, "OMNIQUAL_REQUIRE_X")
    with pytest.raises(pytest.fail.Exception) as failed:
        require_or_skip("the x tool", HINT, require_variable="OMNIQUAL_REQUIRE_X", env=env)
    message = str(failed.value)
    assert "the x tool is not installed here" in message and HINT in message
    assert "fails rather than skips" in message
    assert ("CI=" if "CI" in env else "OMNIQUAL_REQUIRE_X=1") in message


@pytest.mark.parametrize("env", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"},
                                 {"OMNIQUAL_REQUIRE_X": "0"},
                                 {"OMNIQUAL_REQUIRE_Y": "1"}])  # fmt: skip
def test_outside_ci_a_missing_piece_skips_with_its_install_step(env: dict[str, str]) -> None:
    assert not required_here(env, "OMNIQUAL_REQUIRE_X")
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_or_skip("the x tool", HINT, require_variable="OMNIQUAL_REQUIRE_X", env=env)
    assert str(skipped.value) == f"the x tool is not installed here: {HINT}"


def test_an_installed_module_is_returned() -> None:
    assert require_module("json", HINT, env={"CI": "true"}).__name__ == "json"


@pytest.mark.parametrize(("env", "outcome"), [({}, pytest.skip.Exception),
                                              ({"CI": "true"}, pytest.fail.Exception)])  # fmt: skip
def test_a_missing_package_skips_or_fails_naming_it(
    env: dict[str, str], outcome: type[BaseException]
) -> None:
    with pytest.raises(outcome) as raised:
        require_module("omniqual_no_such_package.config", HINT, env=env)
    assert "the omniqual_no_such_package package" in str(raised.value) and HINT in str(raised.value)


def test_an_installed_package_without_the_module_fails_even_outside_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that moved the module: no install step brings it back, the test must move."""
    package = tmp_path / "omniqual_moved_package"
    (package / "offloader").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "offloader" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(pytest.fail.Exception) as failed:
        require_module("omniqual_moved_package.offloader.config", HINT, env={})
    message = str(failed.value)
    assert "omniqual_moved_package is installed" in message
    assert "omniqual_moved_package.offloader.config does not import" in message
