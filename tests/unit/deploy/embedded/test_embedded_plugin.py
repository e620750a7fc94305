"""The CPU platform plugin activates only on request and only without an accelerator."""

from __future__ import annotations

import subprocess
import sys

import pytest

from omniqual.deploy.embedded import plugin


@pytest.mark.parametrize(
    ("switch", "accelerator", "expected"),
    [
        (None, False, None),
        ("0", False, None),
        ("true", False, None),
        ("1", True, None),
        ("1", False, "omniqual.deploy.embedded.platform.CpuOmniPlatform"),
    ],
)
def test_activation_needs_switch_and_no_accelerator(
    monkeypatch: pytest.MonkeyPatch, switch: str | None, accelerator: bool, expected: str | None
) -> None:
    if switch is None:
        monkeypatch.delenv(plugin.ENV_SWITCH, raising=False)
    else:
        monkeypatch.setenv(plugin.ENV_SWITCH, switch)
    monkeypatch.setattr(plugin, "accelerator_present", lambda: accelerator)
    assert plugin.cpu_platform_plugin() == expected


def test_switch_off_never_probes_for_accelerators(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(plugin.ENV_SWITCH, raising=False)

    def probe() -> bool:
        raise AssertionError("probed without the switch")

    monkeypatch.setattr(plugin, "accelerator_present", probe)
    assert plugin.cpu_platform_plugin() is None


def test_importing_the_embedded_package_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "import omniqual.deploy.embedded.plugin, omniqual.deploy.embedded.catalog\n"
        "import omniqual.deploy.embedded.envfix, omniqual.deploy.embedded.manifest\n"
        "heavy = ('torch', 'vllm', 'vllm_omni', 'diffusers', 'transformers')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
