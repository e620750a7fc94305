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


@pytest.mark.parametrize(
    ("cap", "expected"),
    [("AVX2", True), ("avx2", True), ("AVX", True), ("AVX512_CORE_AMX", False), ("", False)],
)
def test_only_a_cap_at_or_below_avx2_caps_the_probes(cap: str, expected: bool) -> None:
    assert plugin.isa_capped_below_avx512({"ONEDNN_MAX_CPU_ISA": cap}) is expected


def test_an_avx2_cap_makes_torch_report_no_amx_or_avx512(monkeypatch: pytest.MonkeyPatch) -> None:
    # On an AMX host the probes read CPUID, not the cap: vLLM would pick AMX kernels that oneDNN
    # then refuses, aborting the server. Capped, every probe beyond AVX2 answers False.
    import torch
    for name in plugin.ISA_PROBES_ABOVE_AVX2:
        if hasattr(torch.cpu, name):
            monkeypatch.setattr(torch.cpu, name, lambda: True)
    capped = plugin.cap_isa_probes({"ONEDNN_MAX_CPU_ISA": "AVX2"})
    assert "_is_amx_tile_supported" in capped
    assert all(getattr(torch.cpu, name)() is False for name in capped)


def test_no_cap_leaves_the_probes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert plugin.cap_isa_probes({}) == []
    assert torch.cpu._is_amx_tile_supported() is True


@pytest.mark.parametrize(("switch", "compiles"), [(None, False), ("0", False), ("1", True)])
def test_the_diffusion_compile_runs_only_where_the_launch_asks_for_it(
    monkeypatch: pytest.MonkeyPatch, switch: str | None, compiles: bool
) -> None:
    # vLLM-Omni compiles a DiT only where the platform allows inductor: every row but a compile
    # row must measure the eager pipeline whatever --enforce-eager says.
    from omniqual.deploy.embedded.platform import TORCH_COMPILE_ENV, CpuOmniPlatform

    if switch is None:
        monkeypatch.delenv(TORCH_COMPILE_ENV, raising=False)
    else:
        monkeypatch.setenv(TORCH_COMPILE_ENV, switch)
    assert CpuOmniPlatform.supports_torch_inductor() is compiles
