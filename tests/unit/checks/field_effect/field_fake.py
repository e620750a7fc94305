"""A fake images server whose pixels depend on every field that should change them (prompt,
size, steps, guidance, seed, negative prompt) and on nothing else, serving the defaults of the
test contract (``contracts/fake.yaml``) for what a request omits. Each misbehaviour the
field-effect gate must see is one switch: a field it ignores (its served default stays), a
served default other than the official one, a seed that does not reproduce, or a jitter of a
level or two that a reproducible server's same-seed answers may still show."""

from __future__ import annotations

import base64
import json
import random
import secrets
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import httpx

from tests.fakes import FakeOmni
from tests.fakes.fake_core import Outcome, Reply
from tests.fakes.fake_media import make_image, perturb_image

CONTRACTS = Path(__file__).parent / "contracts"
ROUTE = "/v1/images/generations"
SERVED_DEFAULTS: Mapping[str, object] = {
    "size": "48x48",
    "n": 1,
    "num_inference_steps": 4,
    "guidance_scale": 5.0,
    "negative_prompt": None,
    "response_format": "b64_json",
}
"""What the faithful fake does with an omitted field: the contract's official defaults."""
RENDERED = ("prompt", "size", "num_inference_steps", "guidance_scale", "seed", "negative_prompt")
"""The fields the pixels depend on (``n`` sets the count, ``response_format`` the wrapping)."""


class FieldFake(FakeOmni):
    def __init__(
        self,
        *,
        ignores: Iterable[str] = (),
        defaults: Mapping[str, object] | None = None,
        reproducible: bool = True,
        jitter: int = 0,
    ) -> None:
        super().__init__()
        self.ignores = frozenset(ignores)
        self.served = {**SERVED_DEFAULTS, **(defaults or {})}
        self.reproducible = reproducible
        self.jitter = jitter
        self.bodies: list[dict[str, object]] = []

    def plan(self, request: httpx.Request) -> Outcome:
        if request.method != "POST" or request.url.path != ROUTE:
            return super().plan(request)
        body = json.loads(request.content)
        self.bodies.append(body)
        effective = {**self.served, **{k: v for k, v in body.items() if v is not None}}
        for name in self.ignores:
            effective[name] = self.served.get(name)
        width, height = (int(side) for side in str(effective["size"]).split("x"))
        identity = [repr(effective.get(name)) for name in RENDERED]
        if not self.reproducible:
            identity.append(secrets.token_hex(8))  # a seed drawn afresh: other pixels each time
        images = []
        for index in range(int(str(effective["n"]))):
            image = make_image(width, height, "png", *identity, index)
            if self.jitter:
                image = perturb_image(image, self.jitter, random.Random(secrets.randbits(64)))
            images.append(image)
        if effective["response_format"] == "file":
            headers = {"content-type": "image/png"}
            return Reply(httpx.Response(200, content=images[0], headers=headers), f"POST {ROUTE}")
        payload = {
            "created": int(time.time()),
            "data": [{"b64_json": base64.b64encode(i).decode()} for i in images],
            "output_format": "png",
        }
        return self.ok_json(payload, f"POST {ROUTE}")
