"""Where the injector sits in vLLM-Omni, patched lazily as the modules are imported.

``install`` puts a meta-path finder first on ``sys.meta_path``; when a module in ``TARGETS`` is
imported, its loader runs as usual and the module is patched right after (a module imported
before ``install`` is patched at once). The hook points (vLLM-Omni 0.30):

- encode: ``encode_prompt`` of every pipeline class in ``vllm_omni.diffusion.models.*.pipeline_*``;
  their ``forward`` (a request batch), and step execution's ``prepare_encode``, ``step_scheduler``
  and ``post_decode`` (one request state), open the frame naming the requests a call serves
  (``frames``);
- encoded (encoding done, denoising not begun): the pipelines' ``prepare_latents``, which
  ``forward`` and ``prepare_encode`` call after the prompt's encoding and before the first step
  (a pipeline that prepares its latents elsewhere has no such point: a hold there never fires);
- denoise: ``scheduler_step_maybe_with_cfg`` of ``CFGParallelMixin`` / ``PipelineParallelMixin``
  (``vllm_omni.diffusion.distributed``), called once per denoise step of a ``forward``: its k-th
  call there is step k of the batch; under step execution a pipeline's ``step_scheduler`` is
  called once per request per step (and calls it in turn): the step is that request's
  ``step_index``, and a fault raised there fails that request alone;
- decode: ``decode`` of the VAE classes in ``vllm_omni.diffusion.distributed.autoencoders.*``
  (and ``decode_with_chunks``, Wan's decode when the worker pre-encodes the MP4);
- output: the image/video/audio byte encoding of the API server (``image_api_utils`` /
  ``video_api_utils`` functions in ``vllm_omni.entrypoints.openai``: ``_encode_video_bytes`` is
  the encoding of both ``/v1/videos/sync`` and an async job's stored content; for audio
  ``AudioMixin.create_audio`` of ``audio_utils_mixin``, which ``/v1/audio/generate`` encodes
  with);
- result: ``DiffusionWorker.execute_model`` / ``execute_model_batch``, after the pipeline
  returned and before the result goes back to the engine.
"""

from __future__ import annotations

import functools
import importlib.abc
import os
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

from omniqual.deploy.fault_injector import frames
from omniqual.deploy.fault_injector.core import CONTROL_ENV, RECORD_ENV, Injector

_PIPELINES = "vllm_omni.diffusion.models."
_DENOISE = ("vllm_omni.diffusion.distributed.cfg_parallel",
            "vllm_omni.diffusion.distributed.pipeline_parallel")  # fmt: skip
_VAES = "vllm_omni.diffusion.distributed.autoencoders."
_OUTPUT: dict[str, tuple[str, ...]] = {
    "vllm_omni.entrypoints.openai.image_api_utils": (
        "encode_image_base64", "encode_image_base64_with_compression"),
    "vllm_omni.entrypoints.openai.video_api_utils": ("_encode_video_bytes",),
}  # fmt: skip
_OUTPUT_METHODS: dict[str, tuple[str, ...]] = {
    "vllm_omni.entrypoints.openai.audio_utils_mixin": ("create_audio",),
}
_WORKER = "vllm_omni.diffusion.worker.diffusion_worker"

_state: dict[str, Any] = {"injector": None}
_SCOPES = ("forward", "prepare_encode", "post_decode")  # calls that serve known requests


def wanted(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return ((name.startswith(_PIPELINES) and last.startswith("pipeline_")) or name in _DENOISE
            or name.startswith(_VAES) or name in _OUTPUT or name in _OUTPUT_METHODS
            or name == _WORKER)  # fmt: skip


def _fire(stage: str, where: str, step: int | None = None) -> None:
    injector: Injector | None = _state["injector"]
    if injector is not None:
        frame = frames.current()
        injector.at(stage, where, step, None if frame is None else frame.requests)


def _subject(args: tuple[Any, ...], kwargs: dict[str, Any], *names: str) -> Any:
    """A hooked method's first argument after ``self`` (by position or by one of ``names``)."""
    if len(args) > 1:
        return args[1]
    return next((kwargs[n] for n in names if n in kwargs), None)


def _before(stage: str, fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        _fire(stage, where)
        return fn(*args, **kwargs)

    hooked.__omniqual_fault_hook__ = True  # type: ignore[attr-defined]
    return hooked


def _step(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        frame = frames.current()
        if frame is None:  # a step no hooked call frames: no step index can be told
            _fire("denoise", where)
        elif not frame.stepwise:  # the outer step-execution hook already fired this step
            step, frame.steps = frame.steps, frame.steps + 1
            _fire("denoise", where, step)
        return fn(*args, **kwargs)

    hooked.__omniqual_fault_hook__ = True  # type: ignore[attr-defined]
    return hooked


def _scoped(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    """A call serving the requests its argument names: its hooks fire in their frame. A call
    nested in a frame that names no requests of its own serves the outer frame's (and counts on
    in its steps)."""

    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        requests = frames.requests_of(_subject(args, kwargs, "req", "state"))
        if requests is None and frames.current() is not None:
            return fn(*args, **kwargs)
        with frames.entered(frames.Frame(requests)):
            return fn(*args, **kwargs)

    hooked.__omniqual_fault_hook__ = True  # type: ignore[attr-defined]
    return hooked


def _stepwise(fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    """Step execution's per-request scheduler step: denoise step ``state.step_index`` of the
    one request ``state`` is."""

    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        state = _subject(args, kwargs, "state")
        step = getattr(state, "step_index", None)
        with frames.entered(frames.Frame(frames.requests_of(state), stepwise=True)):
            _fire("denoise", where, step if isinstance(step, int) else None)
            return fn(*args, **kwargs)

    hooked.__omniqual_fault_hook__ = True  # type: ignore[attr-defined]
    return hooked


def _after(stage: str, fn: Callable[..., Any], where: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        served = frames.requests_of(_subject(args, kwargs, "req", "scheduler_output"))
        with frames.entered(frames.Frame(served)):
            _fire(stage, where)
        return result

    hooked.__omniqual_fault_hook__ = True  # type: ignore[attr-defined]
    return hooked


def _own_classes(module: ModuleType) -> list[type]:
    return [v for v in vars(module).values()
            if isinstance(v, type) and v.__module__ == module.__name__]  # fmt: skip


Wrapper = Callable[[Callable[..., Any], str], Callable[..., Any]]


def _wrap_methods(module: ModuleType, names: Sequence[str], wrap: Wrapper) -> None:
    for cls in _own_classes(module):
        for name in names:
            fn = cls.__dict__.get(name)
            if callable(fn) and not getattr(fn, "__omniqual_fault_hook__", False):
                setattr(cls, name, wrap(fn, f"{module.__name__}:{cls.__qualname__}.{name}"))


def patch(module: ModuleType) -> None:
    """Hook the stage functions ``module`` defines (idempotent)."""
    name = module.__name__
    if name.startswith(_PIPELINES):
        _wrap_methods(module, ("encode_prompt",), functools.partial(_before, "encode"))
        _wrap_methods(module, ("prepare_latents",), functools.partial(_before, "encoded"))
        _wrap_methods(module, _SCOPES, _scoped)
        _wrap_methods(module, ("step_scheduler",), _stepwise)
    if name in _DENOISE:
        _wrap_methods(module, ("scheduler_step_maybe_with_cfg",), _step)
    if name.startswith(_VAES):
        _wrap_methods(module, ("decode", "decode_with_chunks"),
                      functools.partial(_before, "decode"))  # fmt: skip
    if name in _OUTPUT_METHODS:
        _wrap_methods(module, _OUTPUT_METHODS[name], functools.partial(_before, "output"))
    for attr in _OUTPUT.get(name, ()):
        fn = getattr(module, attr, None)
        if callable(fn) and not getattr(fn, "__omniqual_fault_hook__", False):
            setattr(module, attr, _before("output", fn, f"{name}:{attr}"))
    if name == _WORKER:
        _wrap_methods(module, ("execute_model", "execute_model_batch"),
                      functools.partial(_after, "result"))  # fmt: skip


class PatchingFinder(importlib.abc.MetaPathFinder):
    """Finds wanted modules through the other finders, and patches them once executed."""

    def __init__(self) -> None:
        self._busy: set[str] = set()

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:  # fmt: skip
        if not wanted(fullname) or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.discard(fullname)
        loader = None if spec is None else spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        executed = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            executed(module)
            patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(environ: dict[str, str] | None = None) -> bool:
    """Start injecting in this process when both variables are set; False (inert) otherwise."""
    env = os.environ if environ is None else environ
    control, record = env.get(CONTROL_ENV), env.get(RECORD_ENV)
    if not control or not record or _state["injector"] is not None:
        return False
    injector = Injector(Path(control), Path(record))
    _state["injector"] = injector
    injector.loaded()
    if hasattr(os, "register_at_fork"):  # a forked child is another process: it says so
        os.register_at_fork(after_in_child=injector.loaded)
    sys.meta_path.insert(0, PatchingFinder())
    for name, module in list(sys.modules.items()):
        if module is not None and wanted(name):
            patch(module)
    return True
