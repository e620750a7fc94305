"""LPIPS perceptual distance, computed only from weights already on this host.

LPIPS needs the ``lpips`` package (which ships its linear-layer weights) and the torchvision
backbone checkpoint in torch's hub cache. Nothing is ever downloaded: availability is checked on
the filesystem first, the backbone is built untrained and its weights loaded from the cached file.
Torch is imported only inside :func:`lpips_distance`, after those checks pass.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from omniqual.compare.measure import finite_measurements
from omniqual.domain.evidence import Measurement

# torchvision's checkpoint file per LPIPS backbone (the names its model URLs end in).
BACKBONE_CHECKPOINTS = {
    "alex": "alexnet-owt-7be5be79.pth",
    "vgg": "vgg16-397923af.pth",
    "squeeze": "squeezenet1_1-b8a52dc0.pth",
}
LPIPS_VERSION = "0.1"


@dataclass(frozen=True)
class LpipsResult:
    """The LPIPS distance (lower is closer; 0 for identical images), or None and why."""

    value: float | None
    absent_reason: str | None
    net: str = "alex"

    def to_measurements(self, prefix: str = "image_") -> tuple[Measurement, ...]:
        return finite_measurements([(f"{prefix}lpips_{self.net}", self.value, "1")])


def torch_hub_checkpoints() -> Path:
    """Where torch's hub keeps checkpoints, resolved as ``torch.hub.get_dir`` does, sans torch."""
    if torch_home := os.environ.get("TORCH_HOME"):
        return Path(torch_home).expanduser() / "hub" / "checkpoints"
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(cache_home) / "torch" / "hub" / "checkpoints"


def lpips_unavailable(net: str = "alex") -> str | None:
    """Why LPIPS cannot be computed here without a download, or None when it can."""
    if net not in BACKBONE_CHECKPOINTS:
        return f"unknown LPIPS network {net!r}; known: {', '.join(BACKBONE_CHECKPOINTS)}"
    for package in ("torch", "torchvision", "lpips"):
        if importlib.util.find_spec(package) is None:
            return f"the {package} package is not installed"
    spec = importlib.util.find_spec("lpips")
    if spec is None or spec.origin is None:
        return "the lpips package has no files on disk"
    linear = Path(spec.origin).parent / "weights" / f"v{LPIPS_VERSION}" / f"{net}.pth"
    if not linear.is_file():
        return f"the LPIPS linear-layer weights are missing ({linear})"
    backbone = torch_hub_checkpoints() / BACKBONE_CHECKPOINTS[net]
    if not backbone.is_file():
        return f"the {net} backbone weights are not in the local torch hub cache ({backbone})"
    return None


@cache
def _model(net: str) -> Any:
    """The LPIPS model with local weights only (``pnet_rand`` stops torchvision downloading)."""
    import lpips
    import torch

    with warnings.catch_warnings():
        # lpips 0.1.4 builds its backbone with torchvision's deprecated ``pretrained=`` argument;
        # the deprecation is lpips's to fix and says nothing about this measurement.
        warnings.simplefilter("ignore", UserWarning)
        model = lpips.LPIPS(net=net, version=LPIPS_VERSION, pnet_rand=True, verbose=False)
    backbone = torch.load(
        torch_hub_checkpoints() / BACKBONE_CHECKPOINTS[net], map_location="cpu", weights_only=True
    )
    # LPIPS splits torchvision's ``features`` into slices that keep each layer's index:
    # ``slice2.3.weight`` is torchvision's ``features.3.weight``.
    mapped = {key: backbone["features." + key.split(".", 1)[1]] for key in model.net.state_dict()}
    model.net.load_state_dict(mapped, strict=True)
    return model.eval()


def _as_tensor_input(image: npt.NDArray[np.generic]) -> npt.NDArray[np.float32]:
    """H×W×C uint8 → 1×3×H×W in [−1, 1]; alpha dropped, grayscale repeated to three channels."""
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    scaled = array[:, :, :3].astype(np.float32) / 127.5 - 1.0
    return np.ascontiguousarray(scaled.transpose(2, 0, 1)[np.newaxis])


def lpips_distance(
    reference: npt.NDArray[np.generic], candidate: npt.NDArray[np.generic], *, net: str = "alex"
) -> LpipsResult:
    """LPIPS between two H×W×C uint8 images, or None with the reason it cannot be computed."""
    if reason := lpips_unavailable(net):
        return LpipsResult(value=None, absent_reason=reason, net=net)
    if np.shape(reference) != np.shape(candidate):
        return LpipsResult(
            value=None,
            absent_reason=f"shapes differ: {np.shape(candidate)} vs {np.shape(reference)}",
            net=net,
        )
    if min(np.shape(reference)[:2]) < 16:
        # AlexNet's stride-4 stem and pooling leave nothing of a smaller image.
        return LpipsResult(value=None, absent_reason="image smaller than 16x16", net=net)
    import torch

    model = _model(net)
    with torch.no_grad():
        distance = model(
            torch.from_numpy(_as_tensor_input(reference)),
            torch.from_numpy(_as_tensor_input(candidate)),
        )
    return LpipsResult(value=float(distance.item()), absent_reason=None, net=net)
