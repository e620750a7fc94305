"""A fake images server that applies a per-request LoRA adapter the way vLLM-Omni 0.30 does:
an adapter named by a path it has changes the pixels by its path and scale, scale 0 is no
adapter, and an adapter with no name, or a path it does not have, is refused with 400. Each
misbehaviour the ``lora`` gate must see is one switch."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx

from tests.fakes.fake_core import Outcome, Reply
from tests.unit.checks.field_effect.field_fake import ROUTE, FieldFake

ADAPTERS = {"a": "/adapters/a", "b": "/adapters/b"}
BROKEN = {"no-layer": "/adapters/no-layer", "malformed": "/adapters/malformed"}


@dataclass(frozen=True)
class LoraFaults:
    ignores: bool = False
    """Every adapter is accepted and nothing is applied (a silent fallback)."""
    scale_zero_acts: bool = False
    indistinct: bool = False
    """Every adapter renders as the first one loaded (a cache keyed by something they share)."""
    churn: bool = False
    """An adapter loaded again after another took its slot renders otherwise."""
    leaks: bool = False
    """A request without an adapter gets the last one applied."""
    missing_status: int = 400
    """What a path the server does not have is answered (200: served without it)."""
    broken_status: int = 400
    """What a broken adapter (no layer matched, weights not safetensors) is answered (200: served
    without its weights, the base output)."""
    accepts_bad_numbers: bool = False
    """A scale that is not a number and an int_id below 1 are served as if absent."""
    keeps_per_load_mib: int = 0
    """Memory an adapter load keeps (read on /metrics as the server's resident memory)."""


class LoraFake(FieldFake):
    def __init__(self, faults: LoraFaults | None = None, *, known: tuple[str, ...] = (),
                 **field_fake: object) -> None:  # fmt: skip
        super().__init__(**field_fake)  # type: ignore[arg-type]
        self.lora_faults = faults or LoraFaults()
        self.known = known or tuple(ADAPTERS.values())
        """The adapter paths the server has."""
        self.slot: str | None = None
        self.loaded: set[str] = set()
        self.first: str | None = None
        self.last: str | None = None
        self.lora_bodies: list[object] = []

    def plan(self, request: httpx.Request) -> Outcome:
        if request.method != "POST" or request.url.path != ROUTE:
            return super().plan(request)
        body = json.loads(request.content)
        lora = body.pop("lora", None)
        self.lora_bodies.append(lora)
        applied = self._applied(lora)
        if isinstance(applied, Reply):
            return applied
        if applied is not None:
            body["prompt"] = f"{body['prompt']} [lora {applied}]"
        return super().plan(httpx.Request("POST", request.url, json=body))

    def _applied(self, lora: object) -> str | Reply | None:
        """What the pixels carry: the adapter and scale, None, or the refusal."""
        if lora is None:
            return self.last if self.lora_faults.leaks else None
        assert isinstance(lora, dict)
        if not lora.get("name") or not lora.get("path"):
            message = "Invalid lora object: both name and path are required."
            return Reply(self.error(400, message, None), f"POST {ROUTE}")
        path, raw_scale = str(lora["path"]), lora.get("scale", 1.0)
        bad_number = not isinstance(raw_scale, int | float) or int(lora.get("int_id", 1)) < 1
        if bad_number and not self.lora_faults.accepts_bad_numbers:
            refused = self.error(400, "could not convert string to float", None)
            return Reply(refused, f"POST {ROUTE}")
        scale = float(raw_scale) if isinstance(raw_scale, int | float) else 1.0
        if path in BROKEN.values():
            if self.lora_faults.broken_status == 200:
                return None
            message = "Image generation failed: While loading <path>, expected target modules in"
            status = self.lora_faults.broken_status
            return Reply(self.error(status, message, None), f"POST {ROUTE}")
        if path not in self.known:
            if self.lora_faults.missing_status == 200:
                return None
            message = "Image generation failed: [Errno 2] No such file or directory: '<path>'"
            status = self.lora_faults.missing_status
            return Reply(self.error(status, message, None), f"POST {ROUTE}")
        if self.lora_faults.ignores or (scale == 0 and not self.lora_faults.scale_zero_acts):
            return None
        reloaded = path in self.loaded and self.slot != path
        if self.slot != path:
            self.state.leaked_bytes += self.lora_faults.keeps_per_load_mib * 1024 * 1024
        self.loaded.add(path)
        self.slot = path
        self.first = self.first or path
        rendered = self.first if self.lora_faults.indistinct else path
        if self.lora_faults.churn and reloaded:
            rendered += " reloaded"
        self.last = f"{rendered} x{scale}"
        return self.last
