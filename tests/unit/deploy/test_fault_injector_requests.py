"""The injector fires a denoise fault in the request it targets (the arm's ``request_seed``) and
at that request's own step, wherever several requests share the worker: step execution (one
``step_scheduler`` call per request per step) and request batches (one ``forward`` per batch).
Peers' steps never trigger it, and a step no hook can tie to a request never fires a targeted
fault. The record names the request it fired in and the pid namespace of its process."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from omniqual.deploy.fault_control import FaultChannel
from omniqual.deploy.fault_injector import hooks
from omniqual.deploy.fault_injector.core import InjectedFault, Injector
from omniqual.domain.fault_injection import FaultEvent

TARGET_SEED = 303


@dataclass
class Sampling:
    seed: int | None


@dataclass
class Request:  # an OmniDiffusionRequest
    request_id: str
    sampling_params: Sampling


@dataclass
class Batch:  # a DiffusionRequestBatch
    requests: list[Request]


@dataclass
class State:  # a StepRequestState of step execution
    request_id: str
    sampling: Sampling
    step_index: int = 0
    trace: list[int] = field(default_factory=list)


def _toy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[type, type, FaultChannel]:
    channel = FaultChannel.in_dir(tmp_path)
    monkeypatch.setitem(hooks._state, "injector", Injector(channel.control, channel.record))
    monkeypatch.setitem(hooks._state, "steps", 0)
    denoise = type(sys)("vllm_omni.diffusion.distributed.cfg_parallel")
    module = type(sys)("vllm_omni.diffusion.models.toy.pipeline_toy")

    class Mixin:
        def scheduler_step_maybe_with_cfg(self, latents: int = 0) -> int:
            return latents + 1

    class Pipeline(Mixin):
        def forward(self, req: Batch) -> list[str]:
            for _ in range(3):
                self.scheduler_step_maybe_with_cfg()
            return ["image"] * len(req.requests)

        def step_scheduler(self, state: State, noise_pred: object = None) -> None:
            self.scheduler_step_maybe_with_cfg()
            state.trace.append(state.step_index)
            state.step_index += 1

    Mixin.__module__, Mixin.__qualname__ = denoise.__name__, "Mixin"
    Pipeline.__module__, Pipeline.__qualname__ = module.__name__, "Pipeline"
    denoise.Mixin, module.Pipeline = Mixin, Pipeline  # type: ignore[attr-defined]
    hooks.patch(denoise)
    hooks.patch(module)
    return Mixin, Pipeline, channel


def _arm(channel: FaultChannel, step: int) -> str:
    """A denoise raise at ``step`` of the request sent with TARGET_SEED, as the gate arms it."""
    channel.control.write_text(json.dumps({
        "schema_version": 1, "arm_id": "target-1", "case_id": "denoise-early-raise",
        "stage": "denoise", "mode": "raise", "step": step,
        "request_seed": TARGET_SEED}))  # fmt: skip
    return "target-1"


def test_step_execution_fires_at_the_targeted_requests_own_step(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    _, pipeline, channel = _toy(monkeypatch, tmp_path)
    arm_id = _arm(channel, step=1)
    states = [State("req-a", Sampling(101)), State("req-b", Sampling(202)),
              State("req-c", Sampling(TARGET_SEED))]  # fmt: skip
    failed: list[tuple[str, int]] = []
    for step in range(3):  # one scheduler wave per step, each request stepped on its own
        for state in states:
            if any(state.request_id == f for f, _ in failed):
                continue
            try:
                pipeline().step_scheduler(state)
            except InjectedFault:
                failed.append((state.request_id, step))
    assert failed == [("req-c", 1)]
    assert states[0].trace == states[1].trace == [0, 1, 2]  # the peers ran every step
    fired = [r for r in channel.of_arm(arm_id) if r.event is FaultEvent.FIRED]
    assert [(r.request_id, r.step) for r in fired] == [("req-c", 1)]
    assert fired[0].pid_ns == os.readlink("/proc/self/ns/pid")


def test_a_request_batch_fires_only_in_the_batch_holding_the_target(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    _, pipeline, channel = _toy(monkeypatch, tmp_path)
    arm_id = _arm(channel, step=1)
    peers = Batch([Request("peer-1", Sampling(101)), Request("peer-2", Sampling(202))])
    assert pipeline().forward(peers) == ["image", "image"]  # they reach step 1 first
    with pytest.raises(InjectedFault):
        pipeline().forward(Batch([Request("faulted", Sampling(TARGET_SEED))]))
    fired = [r for r in channel.of_arm(arm_id) if r.event is FaultEvent.FIRED]
    assert [(r.request_id, r.step) for r in fired] == [("faulted", 1)]


def test_a_step_tied_to_no_request_never_fires_a_targeted_fault(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    mixin, _, channel = _toy(monkeypatch, tmp_path)
    arm_id = _arm(channel, step=1)
    for _ in range(3):  # a pipeline path whose forward carries no hook: whose step is it?
        mixin().scheduler_step_maybe_with_cfg()
    assert channel.of_arm(arm_id) == []


class Generator:  # a torch.Generator seeded by the API server
    def __init__(self, seed: int) -> None:
        self.seed = seed

    def initial_seed(self) -> int:
        return self.seed


@dataclass
class GeneratorSampling:  # /v1/audio/generate sends its seed as a seeded generator only
    generator: Generator
    seed: None = None


def test_a_request_seeded_through_its_generator_is_the_target(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # fmt: skip
    _, pipeline, channel = _toy(monkeypatch, tmp_path)
    arm_id = _arm(channel, step=0)
    peer = Request("audio-peer", GeneratorSampling(Generator(101)))  # type: ignore[arg-type]
    assert pipeline().forward(Batch([peer])) == ["image"]
    with pytest.raises(InjectedFault):
        pipeline().forward(Batch([Request("audio", GeneratorSampling(  # type: ignore[arg-type]
            Generator(TARGET_SEED)))]))  # fmt: skip
    assert [r.request_id for r in channel.of_arm(arm_id)] == ["audio"]
