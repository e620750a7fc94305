"""After the environment fixes the embedded venv imports torchvision, torchaudio and vllm_omni."""

from __future__ import annotations

import subprocess
import sys

import pytest
from embedded_server import NEEDS_EMBEDDED

pytestmark = [pytest.mark.integration, pytest.mark.embedded, NEEDS_EMBEDDED]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )


def test_fixes_are_idempotent_and_leave_the_venv_importable() -> None:
    first = subprocess.run(
        [sys.executable, "-m", "omniqual.deploy.embedded.envfix"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    second = subprocess.run(
        [sys.executable, "-m", "omniqual.deploy.embedded.envfix"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert second.returncode == 0, second.stderr
    # Whatever the first run found, the second one changes nothing.
    assert ": applied" not in second.stderr
    assert "torchvision-nms-meta-guard: already-applied" in second.stderr
    assert "torchaudio-extension-oserror-guard: already-applied" in second.stderr

    imported = _run("import torchvision, torchaudio, vllm_omni; print(torchvision.__version__)")
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout.strip().splitlines()[-1].startswith("0.")
    torchcodec = _run("import importlib.util; print(importlib.util.find_spec('torchcodec'))")
    assert torchcodec.stdout.strip().splitlines()[-1] == "None"


def test_cpu_plugin_is_registered_and_gated_by_the_switch() -> None:
    code = (
        "import os\n"
        "from importlib.metadata import entry_points\n"
        "eps = {e.name: e for e in entry_points(group='vllm_omni.platform_plugins')}\n"
        "fn = eps['omniqual_cpu'].load()\n"
        "os.environ.pop('OMNIQUAL_CPU_PLATFORM', None)\n"
        "print(fn())\n"
        "os.environ['OMNIQUAL_CPU_PLATFORM'] = '1'\n"
        "print(fn())\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["None", "omniqual.deploy.embedded.platform.CpuOmniPlatform"]
