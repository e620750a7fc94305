"""Test doubles: the fake vLLM-Omni server (in-process transport or real socket)."""

from tests.fakes.fake_config import FakeConfig, FakeFaults, LatencySpike
from tests.fakes.fake_core import FakeJob, FakeState
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.fake_socket import serve_fake

__all__ = [
    "FakeConfig",
    "FakeFaults",
    "FakeJob",
    "FakeOmni",
    "FakeState",
    "LatencySpike",
    "serve_fake",
]
