"""The in-server injector's decisions, without a server: control parsing, the mtime cache,
exclusive firing across processes, record lines, the faults themselves, and inertness."""

import json
import os
import sys
from pathlib import Path

import pytest

from omniqual.deploy.fault_control import BOOT_DIR, FaultChannel
from omniqual.deploy.fault_injector import core, hooks
from omniqual.deploy.fault_injector.core import InjectedFault, Injector, parse_arm
from omniqual.domain import fault_injection as contract
from omniqual.domain.fault_injection import FaultEvent, FaultMode, FaultStage


class Calls:
    def __init__(self) -> None:
        self.slept: list[float] = []
        self.exits: list[int] = []


def _injector(tmp_path: Path, calls: Calls) -> tuple[FaultChannel, Injector]:
    channel = FaultChannel.in_dir(tmp_path)
    injector = Injector(channel.control, channel.record, sleep=calls.slept.append,
                        exit=calls.exits.append, clock=lambda: 1000.0)  # fmt: skip
    return channel, injector


def test_the_injector_speaks_the_domain_contract() -> None:
    assert (core.CONTROL_ENV, core.RECORD_ENV) == (contract.CONTROL_ENV, contract.RECORD_ENV)
    assert set(core.STAGES) == {s.value for s in FaultStage}
    assert set(core.MODES) == {m.value for m in FaultMode}
    assert core.SCHEMA_VERSION == contract.FAULT_SCHEMA_VERSION


def test_control_parsing_rejects_what_is_not_an_arm() -> None:
    assert parse_arm("") is None
    assert parse_arm("{not json") is None
    assert parse_arm(json.dumps({"arm_id": "a", "stage": "nowhere", "mode": "raise"})) is None
    assert parse_arm(json.dumps({"arm_id": "a", "stage": "encode", "mode": "raise",
                                 "schema_version": 99})) is None  # fmt: skip
    arm = parse_arm(json.dumps({"arm_id": "a", "case_id": "c", "stage": "denoise",
                                "mode": "hang", "step": 3, "hang_s": 1.5, "times": 2}))  # fmt: skip
    assert arm == core.Arm("a", "c", "denoise", "hang", 3, 1.5, 2)


def test_the_control_file_is_parsed_again_only_when_it_changed(tmp_path: Path) -> None:
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    assert injector.reader.current() is None
    first = channel.arm("c1", FaultStage.ENCODE, FaultMode.RAISE)
    for _ in range(5):
        current = injector.reader.current()
        assert current is not None and current.arm_id == first.arm_id
    assert injector.reader.parses == 1
    second = channel.arm("c2", FaultStage.DECODE, FaultMode.RAISE)
    current = injector.reader.current()
    assert current is not None and current.arm_id == second.arm_id
    assert injector.reader.parses == 2
    channel.disarm()
    assert injector.reader.current() is None


def test_a_fault_fires_only_at_its_stage_and_step_and_is_recorded(tmp_path: Path) -> None:
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    arm = channel.arm("late-step", FaultStage.DENOISE, FaultMode.RAISE, step=2)
    injector.at("encode", "m:encode")
    injector.at("denoise", "m:step", 0)
    injector.at("denoise", "m:step", 1)
    with pytest.raises(InjectedFault, match="omniqual injected fault: late-step"):
        injector.at("denoise", "m:step", 2)
    injector.at("denoise", "m:step", 2)  # times=1: spent
    fired = channel.of_arm(arm.arm_id)
    assert [(r.event, r.step, r.where, r.pid) for r in fired] == [
        (FaultEvent.FIRED, 2, "m:step", os.getpid())]


def test_firings_are_exclusive_across_injectors_of_the_tree(tmp_path: Path) -> None:
    calls = Calls()
    channel, one = _injector(tmp_path, calls)
    other = Injector(channel.control, channel.record, sleep=calls.slept.append)
    arm = channel.arm("twice", FaultStage.DECODE, FaultMode.HANG, hang_s=7.0, times=2)
    for injector in (one, other, one, other):
        injector.at("decode", "m:decode")
    assert calls.slept == [7.0, 7.0]
    events = [r.event for r in channel.of_arm(arm.arm_id)]
    assert events == [FaultEvent.FIRED, FaultEvent.HANG_ENDED] * 2


def test_each_mode_does_its_fault(tmp_path: Path) -> None:
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    channel.arm("oom", FaultStage.DENOISE, FaultMode.OOM)
    with pytest.raises(BaseException) as oom:
        injector.at("denoise", "m:step", 0)
    assert oom.type is core.oom_error() and "out of memory" in str(oom.value)
    channel.arm("exit", FaultStage.DENOISE, FaultMode.EXIT)
    injector.at("denoise", "m:step", 0)
    assert calls.exits == [1]
    late = channel.arm("late", FaultStage.RESULT, FaultMode.LATE, hang_s=2.0)
    with pytest.raises(InjectedFault, match="late"):
        injector.at("result", "m:result")
    assert calls.slept == [2.0]
    assert [r.event for r in channel.of_arm(late.arm_id)] == [FaultEvent.FIRED,
                                                             FaultEvent.HANG_ENDED]


def test_oom_is_torch_out_of_memory_when_torch_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    class OutOfMemoryError(RuntimeError):
        pass

    fake_torch = type(sys)("torch")
    fake_torch.OutOfMemoryError = OutOfMemoryError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert core.oom_error() is OutOfMemoryError
    monkeypatch.delitem(sys.modules, "torch")
    assert core.oom_error() is MemoryError


def test_without_both_variables_nothing_is_patched(tmp_path: Path) -> None:
    before = list(sys.meta_path)
    assert hooks.install({"OMNIQUAL_FAULT_CONTROL": str(tmp_path / "c")}) is False
    assert hooks.install({}) is False
    assert sys.meta_path == before and hooks._state["injector"] is None


def test_patched_functions_fire_at_their_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               ) -> None:  # fmt: skip
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    monkeypatch.setitem(hooks._state, "injector", injector)
    module = type(sys)("vllm_omni.diffusion.models.toy.pipeline_toy")

    class Pipeline:
        def forward(self) -> list[int]:
            return [self.step() for _ in range(3)]

        def step(self) -> int:
            return 0

    Pipeline.__module__ = module.__name__
    module.Pipeline = Pipeline  # type: ignore[attr-defined]
    denoise = type(sys)("vllm_omni.diffusion.distributed.cfg_parallel")

    class Mixin:
        def scheduler_step_maybe_with_cfg(self) -> int:
            return 1

    Mixin.__module__, Mixin.__qualname__ = denoise.__name__, "Mixin"
    denoise.Mixin = Mixin  # type: ignore[attr-defined]
    hooks.patch(module)
    hooks.patch(denoise)
    hooks.patch(denoise)  # idempotent: one hook per function
    Pipeline.step = Mixin.scheduler_step_maybe_with_cfg  # type: ignore[assignment]
    arm = channel.arm("step1", FaultStage.DENOISE, FaultMode.RAISE, step=1)
    with pytest.raises(InjectedFault):
        Pipeline().forward()
    fired = channel.of_arm(arm.arm_id)
    assert [(r.step, r.where) for r in fired] == [
        (1, "vllm_omni.diffusion.distributed.cfg_parallel:Mixin.scheduler_step_maybe_with_cfg")]
    assert Pipeline().forward() == [1, 1, 1]  # spent; the next request counts from 0 again


def test_audio_encoding_and_chunked_vae_decode_are_hooked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    monkeypatch.setitem(hooks._state, "injector", injector)
    audio = type(sys)("vllm_omni.entrypoints.openai.audio_utils_mixin")
    vae = type(sys)("vllm_omni.diffusion.distributed.autoencoders.autoencoder_kl_toy")

    class AudioMixin:
        def create_audio(self) -> bytes:
            return b"RIFF"

    class Vae:
        def decode_with_chunks(self) -> int:
            return 2

    AudioMixin.__module__, Vae.__module__ = audio.__name__, vae.__name__
    AudioMixin.__qualname__ = "AudioMixin"
    audio.AudioMixin, vae.Vae = AudioMixin, Vae  # type: ignore[attr-defined]
    assert hooks.wanted(audio.__name__) and hooks.wanted(vae.__name__)
    hooks.patch(audio)
    hooks.patch(vae)
    assert AudioMixin().create_audio() == b"RIFF" and Vae().decode_with_chunks() == 2  # disarmed
    out = channel.arm("out", FaultStage.OUTPUT, FaultMode.RAISE)
    with pytest.raises(InjectedFault):
        AudioMixin().create_audio()
    assert [r.where for r in channel.of_arm(out.arm_id)] == [
        "vllm_omni.entrypoints.openai.audio_utils_mixin:AudioMixin.create_audio"]
    dec = channel.arm("dec", FaultStage.DECODE, FaultMode.RAISE)
    with pytest.raises(InjectedFault):
        Vae().decode_with_chunks()
    assert [r.stage for r in channel.of_arm(dec.arm_id)] == [FaultStage.DECODE]


def test_the_bootstrap_is_a_lone_sitecustomize() -> None:
    assert sorted(p.name for p in BOOT_DIR.iterdir() if p.suffix == ".py") == ["sitecustomize.py"]
    env = FaultChannel(Path("/c"), Path("/r")).env()
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(BOOT_DIR)


def test_a_hold_waits_at_its_point_then_lets_the_request_go_on(tmp_path: Path) -> None:
    """A cancel point: the request is held (not failed) and goes on once the hold ends."""
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    hold = channel.arm("cancel-before-decode", FaultStage.DECODE, FaultMode.HOLD, hang_s=3.0)
    injector.at("decode", "m:decode")  # returns: the call goes on after the hold
    assert calls.slept == [3.0]
    assert [r.event for r in channel.of_arm(hold.arm_id)] == [FaultEvent.FIRED,
                                                             FaultEvent.HANG_ENDED]


def test_the_point_after_encoding_is_the_pipelines_latent_preparation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    calls = Calls()
    channel, injector = _injector(tmp_path, calls)
    monkeypatch.setitem(hooks._state, "injector", injector)
    module = type(sys)("vllm_omni.diffusion.models.toy.pipeline_toy")
    order: list[str] = []

    class Pipeline:
        def encode_prompt(self) -> None:
            order.append("encode")

        def prepare_latents(self) -> int:
            order.append("latents")
            return 7

    Pipeline.__module__, Pipeline.__qualname__ = module.__name__, "Pipeline"
    module.Pipeline = Pipeline  # type: ignore[attr-defined]
    hooks.patch(module)
    arm = channel.arm("cancel-after-encode", FaultStage.ENCODED, FaultMode.HOLD, hang_s=1.0)
    Pipeline().encode_prompt()
    assert channel.of_arm(arm.arm_id) == []  # encoding itself is not the point
    assert Pipeline().prepare_latents() == 7
    fired = [r for r in channel.of_arm(arm.arm_id) if r.event is FaultEvent.FIRED]
    where = "vllm_omni.diffusion.models.toy.pipeline_toy:Pipeline.prepare_latents"
    assert [(r.stage, r.where) for r in fired] == [(FaultStage.ENCODED, where)]
    assert order == ["encode", "latents"] and calls.slept == [1.0]
