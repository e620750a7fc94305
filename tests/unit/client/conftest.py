"""Fixtures for the client unit tests: the fake server reached through `httpx.MockTransport`
(no sockets), a manual clock for the video lifecycle, and a runner for async scenarios."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

# `tests.fakes` is imported as a package from the repository root; make sure the root is on
# sys.path even when pytest's rootdir handling has not put it there.
_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from omniqual.client import OmniClient  # noqa: E402
from tests.fakes import FakeOmni  # noqa: E402

T = TypeVar("T")
Scenario = Callable[[OmniClient], Awaitable[T]]


class ManualClock:
    """A clock that only moves when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def fake(clock: ManualClock) -> FakeOmni:
    return FakeOmni(clock=clock)


def run_client(fake: FakeOmni, scenario: Scenario[T], **client_kwargs: Any) -> T:
    """Run `scenario(client)` on a fresh event loop with a client wired to `fake` in-process."""

    async def main() -> T:
        async with OmniClient(
            "http://fake.test", transport=fake.transport(), **client_kwargs
        ) as client:
            return await scenario(client)

    return asyncio.run(main())


@pytest.fixture
def drive(fake: FakeOmni) -> Callable[..., Any]:
    """`drive(scenario, **client_kwargs)` runs a scenario against the `fake` fixture."""

    def _drive(scenario: Scenario[T], **client_kwargs: Any) -> T:
        return run_client(fake, scenario, **client_kwargs)

    return _drive


@pytest.fixture
def run() -> Callable[..., Any]:
    """`run(fake, scenario, **client_kwargs)` for tests that build their own configured fake."""
    return run_client
