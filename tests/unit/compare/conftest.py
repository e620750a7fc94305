"""Fixtures for the compare tests: a seeded generator and random images."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


@pytest.fixture
def noise_image(rng: np.random.Generator) -> Callable[..., np.ndarray]:
    def make(height: int = 48, width: int = 64, channels: int = 3) -> np.ndarray:
        return rng.integers(0, 256, size=(height, width, channels), dtype=np.uint8)

    return make
