"""The suite's tracks (tests/conftest.py), run on a small tree laid out like tests/: every test
gets exactly one track, fast runs first, a live test without a track stops the session, and
live tests get the live time limit unless they state their own."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]
# Files named *_sample.py: a basename of a real test module is taken in a whole-suite session.
PASSING = "def test_it():\n    pass\n"


def marked(*marks: str) -> str:
    return "import pytest\n\n" + "".join(f"@pytest.mark.{mark}\n" for mark in marks) + PASSING


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """The real conftest and the project's own marker list, over an empty tests/-like tree."""
    pyproject = tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    lines = "".join(f"    {marker}\n" for marker in markers)
    pytester.makeini(
        f"[pytest]\naddopts = --strict-markers -p no:cacheprovider\nmarkers =\n{lines}"
    )
    pytester.makeconftest((TESTS / "conftest.py").read_text(encoding="utf-8"))
    return pytester


def write(pytester: pytest.Pytester, relative: str, text: str = PASSING) -> None:
    path = pytester.path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def collected(pytester: pytest.Pytester, *args: str) -> list[pytest.Item]:
    """The session's items in the order they would run (after every collection hook)."""
    recorded = pytester.inline_run("--collect-only", *args)
    [finished] = recorded.getcalls("pytest_collection_finish")
    return list(finished.session.items)


def tracks_by_file(items: list[pytest.Item]) -> dict[str, list[str]]:
    names = ("fast", "function", "accuracy", "performance", "reliability")
    return {
        item.nodeid.split("::")[0]: [n for n in names if item.get_closest_marker(n)]
        for item in items
    }


def test_each_test_gets_one_track_from_its_directory_and_file(suite: pytest.Pytester) -> None:
    files = {
        "unit/test_a_sample.py": "fast",
        "golden/test_b_sample.py": "fast",
        "integration/checks/test_soak_embedded_sample.py": "reliability",
        "integration/checks/test_isolation_embedded_sample.py": "function",
        "integration/checks/test_reference_parity_embedded_sample.py": "accuracy",
        "integration/checks/test_perf_embedded_sample.py": "performance",
        "integration/deploy/test_killed_harness_sample.py": "reliability",
        "integration/deploy/test_launcher_process_sample.py": "function",
        "integration/bench/test_bench_command_sample.py": "performance",
    }
    for relative in files:
        write(suite, relative)
    items = collected(suite)
    assert tracks_by_file(items) == {relative: [track] for relative, track in files.items()}


def test_fast_runs_first_then_the_live_tracks_in_ci_order(suite: pytest.Pytester) -> None:
    write(suite, "integration/checks/test_abort_embedded_sample.py")
    write(suite, "integration/checks/test_api_contract_embedded_sample.py")
    write(suite, "integration/checks/test_parity_embedded_sample.py")
    write(suite, "unit/test_z_sample.py")
    items = collected(suite)
    assert [tracks_by_file([item]).popitem()[1] for item in items] == [
        ["fast"], ["function"], ["accuracy"], ["reliability"]
    ]  # fmt: skip


def test_a_live_test_matching_no_rule_stops_the_session_naming_it(
    suite: pytest.Pytester,
) -> None:
    write(suite, "unit/test_fine_sample.py")
    write(suite, "integration/checks/test_new_gate_embedded_sample.py")
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*integration/checks/test_new_gate_embedded_sample.py::test_it: no track"]
    )
    result.stdout.no_fnmatch_line("*passed*")


def test_a_written_marker_gives_the_track_and_two_are_refused(suite: pytest.Pytester) -> None:
    write(suite, "integration/checks/test_new_gate_embedded_sample.py", marked("accuracy"))
    items = collected(suite)
    assert tracks_by_file(items) == {
        "integration/checks/test_new_gate_embedded_sample.py": ["accuracy"]
    }

    write(suite, "unit/test_twice_sample.py", marked("fast", "reliability"))
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unit/test_twice_sample.py::test_it: tracks fast and reliability"]
    )


def test_a_fast_test_may_not_claim_a_live_server(suite: pytest.Pytester) -> None:
    write(suite, "unit/test_live_sample.py", marked("integration"))
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unit/test_live_sample.py::test_it: a fast test marked integration"]
    )


def test_markers_select_tracks_and_live_tests_are_integration(suite: pytest.Pytester) -> None:
    write(suite, "unit/test_a_sample.py")
    write(suite, "integration/checks/test_soak_embedded_sample.py")
    write(suite, "integration/cli/test_cli_errors_sample.py")
    suite.runpytest("-m", "fast").assert_outcomes(passed=1, deselected=2)
    suite.runpytest("-m", "reliability").assert_outcomes(passed=1, deselected=2)
    suite.runpytest("-m", "integration").assert_outcomes(passed=2, deselected=1)


def test_live_tests_get_the_live_limit_unless_they_state_one(suite: pytest.Pytester) -> None:
    write(suite, "unit/test_a_sample.py")
    write(suite, "integration/cli/test_cli_errors_sample.py")
    write(suite, "integration/checks/test_soak_embedded_sample.py", marked("timeout(2100)"))

    def limits(*args: str) -> dict[str, object]:
        items = collected(suite, *args)
        marks = {item.nodeid.split("::")[0]: item.get_closest_marker("timeout") for item in items}
        return {path: mark.args[0] if mark else None for path, mark in marks.items()}

    assert limits() == {
        "unit/test_a_sample.py": None,  # pyproject's `timeout` applies
        "integration/cli/test_cli_errors_sample.py": 1200,
        "integration/checks/test_soak_embedded_sample.py": 2100,
    }
    # A limit given on the command line is the user's: the live default steps aside for it.
    assert limits("--timeout=30")["integration/cli/test_cli_errors_sample.py"] is None
