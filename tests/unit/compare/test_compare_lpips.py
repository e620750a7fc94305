"""LPIPS is a number only with the package and both weight files on disk; otherwise None and
the reason. Nothing is downloaded, and torch is not imported until it can be used."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from omniqual.compare import LpipsResult, lpips_distance, lpips_unavailable
from omniqual.compare.lpips import BACKBONE_CHECKPOINTS, torch_hub_checkpoints

IMAGE = np.full((32, 32, 3), 128, dtype=np.uint8)


def test_without_the_lpips_package_the_value_is_absent_with_the_reason(monkeypatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "lpips" else real_find_spec(name, *a),
    )

    result = lpips_distance(IMAGE, IMAGE)

    assert result == LpipsResult(
        value=None, absent_reason="the lpips package is not installed", net="alex"
    )
    assert result.to_measurements() == ()


@pytest.fixture
def fake_lpips_package(tmp_path: Path, monkeypatch) -> Path:
    """An importable ``lpips`` package with no weights, found before any installed one."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("torchvision") is None:
        pytest.skip("torch and torchvision are checked before lpips")
    package = tmp_path / "site" / "lpips"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Stand-in without weights."""\n')
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    return package


def test_missing_linear_weights_are_the_reason(fake_lpips_package: Path) -> None:
    reason = lpips_unavailable("alex")
    assert reason is not None
    assert reason.startswith("the LPIPS linear-layer weights are missing")
    assert str(fake_lpips_package / "weights" / "v0.1" / "alex.pth") in reason


def test_missing_backbone_weights_in_the_hub_cache_are_the_reason(
    fake_lpips_package: Path, tmp_path: Path
) -> None:
    weights = fake_lpips_package / "weights" / "v0.1"
    weights.mkdir(parents=True)
    (weights / "alex.pth").write_bytes(b"")

    result = lpips_distance(IMAGE, IMAGE)

    expected = tmp_path / "torch-home" / "hub" / "checkpoints" / BACKBONE_CHECKPOINTS["alex"]
    assert result.value is None
    assert result.absent_reason == (
        f"the alex backbone weights are not in the local torch hub cache ({expected})"
    )


def test_an_unknown_network_is_refused_by_name() -> None:
    result = lpips_distance(IMAGE, IMAGE, net="resnet")
    assert result.value is None
    assert (
        result.absent_reason is not None
        and "unknown LPIPS network 'resnet'" in result.absent_reason
    )


def test_the_hub_cache_follows_torch_home_then_xdg(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert torch_hub_checkpoints() == tmp_path / "th" / "hub" / "checkpoints"
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert torch_hub_checkpoints() == tmp_path / "xdg" / "torch" / "hub" / "checkpoints"


@pytest.mark.skipif(lpips_unavailable() is not None, reason=str(lpips_unavailable()))
def test_with_local_weights_identical_images_are_zero_apart(rng: np.random.Generator) -> None:
    image = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
    assert lpips_distance(image, image).value == pytest.approx(0.0, abs=1e-6)
    noisy = lpips_distance(image, 255 - image)
    assert noisy.value is not None and noisy.value > 0.1


def test_importing_compare_pulls_in_no_torch_http_or_decoders() -> None:
    code = (
        "import sys, omniqual.compare\n"
        "heavy = {'torch', 'httpx', 'lpips', 'av', 'skimage', 'soundfile', 'matplotlib'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert done.stdout.strip() == "[]"


@pytest.fixture
def local_random_backbone(tmp_path: Path, monkeypatch) -> dict[str, object]:
    """A torchvision AlexNet checkpoint (random weights, built here) in a private hub cache."""
    if importlib.util.find_spec("lpips") is None:
        pytest.skip("the lpips package is not installed")
    import torch
    import torchvision

    torch.manual_seed(0)
    state = torchvision.models.alexnet(weights=None).state_dict()
    hub = tmp_path / "torch-home" / "hub" / "checkpoints"
    hub.mkdir(parents=True)
    torch.save(state, hub / BACKBONE_CHECKPOINTS["alex"])
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))
    return state


@pytest.mark.slow
def test_the_backbone_is_loaded_from_the_hub_cache_file(
    local_random_backbone: dict[str, object], rng: np.random.Generator
) -> None:
    import torch

    from omniqual.compare.lpips import _model

    _model.cache_clear()
    try:
        image = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
        assert lpips_unavailable() is None
        assert lpips_distance(image, image).value == pytest.approx(0.0, abs=1e-6)
        different = lpips_distance(image, 255 - image)
        assert different.value is not None and different.value > 0
        assert different.to_measurements()[0].name == "image_lpips_alex"
        loaded = _model("alex").net.slice2.state_dict()["3.weight"]
        assert torch.equal(loaded, local_random_backbone["features.3.weight"])
    finally:
        _model.cache_clear()
