"""Which requests the call a hook runs in serves (standard library only).

A worker serves several requests at once in two ways: a request batch runs one pipeline
``forward`` for all of them, and step execution interleaves them, one ``step_scheduler`` call
per request per denoise step. The hooks open a :class:`Frame` around those calls (and around
step execution's per-request ``prepare_encode`` and ``post_decode``), per thread, naming the
requests by the server's request id and the seed they were sent with (the one mark of a request
the harness chooses itself). A fault aimed at one request fires only in a frame that holds it,
and a denoise step counts within its frame: the k-th scheduler step of a ``forward`` is step k
of its batch, and a step-execution call is at its request's own ``step_index``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_local = threading.local()


@dataclass(frozen=True, slots=True)
class Request:
    request_id: str
    seed: int | None


@dataclass(slots=True)
class Frame:
    requests: tuple[Request, ...] | None  # None: the call's requests cannot be told
    steps: int = 0  # scheduler steps taken in this frame (a forward's batch)
    stepwise: bool = False  # a step-execution call: its own hook counted and fired the step


def current() -> Frame | None:
    frame: Frame | None = getattr(_local, "frame", None)
    return frame


@contextmanager
def entered(frame: Frame) -> Iterator[Frame]:
    outer = current()
    _local.frame = frame
    try:
        yield frame
    finally:
        _local.frame = outer


def requests_of(subject: Any) -> tuple[Request, ...] | None:
    """The requests a pipeline or worker call's argument stands for: a request batch
    (``requests``), a scheduler output (``scheduled_new_reqs``) or a list of scheduled requests
    (each one's ``req``), one request or step state (``request_id`` with ``sampling_params`` or
    ``sampling``); None when it is none of these."""
    if subject is None:
        return None
    items = subject if isinstance(subject, list | tuple) else (
        getattr(subject, "requests", None) or getattr(subject, "scheduled_new_reqs", None))
    if isinstance(items, list | tuple):
        found: list[Request] = []
        for item in items:
            found += requests_of(getattr(item, "req", item)) or ()
        return tuple(found) if found else None
    request_id = getattr(subject, "request_id", None)
    if not isinstance(request_id, str):
        return None
    sampling = getattr(subject, "sampling_params", None) or getattr(subject, "sampling", None)
    return (Request(request_id, seed_of(sampling)),)


def seed_of(sampling: Any) -> int | None:
    """The seed a request was sent with: its ``seed``, else the initial seed of the generator
    the API server seeded with it (``/v1/audio/generate`` passes only a generator)."""
    seed = getattr(sampling, "seed", None)
    if seed is None:
        generator = getattr(sampling, "generator", None)
        if isinstance(generator, list | tuple):
            generator = generator[0] if generator else None
        initial = getattr(generator, "initial_seed", None)
        try:
            seed = initial() if callable(initial) else None
        except Exception:  # a generator of another kind: the seed stays unknown
            seed = None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None
