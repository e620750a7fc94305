"""Request validation of the fake server, shaped like the real one: pydantic models for types
(so errors carry pydantic codes such as `missing`, `int_parsing`, `string_type`), then explicit
range / alignment checks that the `accepts_out_of_range` fault can switch off."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tests.fakes.fake_config import FakeConfig

_SIZE_RE = re.compile(r"^(\d+)x(\d+)$")


class Rejection(Exception):
    """An error answer: status, message, and the field it is about."""

    def __init__(self, status: int, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param


def rejection_from(exc: ValidationError, what: str) -> Rejection:
    """400 like vLLM's RequestValidationError handler: str(exc) plus the error list."""
    errors = [{"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    param = ".".join(str(p) for p in exc.errors()[0]["loc"]) if errors else None
    return Rejection(400, f"{what}: {exc} {errors}", param)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")  # like the real server: unknown fields ignored


class ImageGenerationBody(_Body):
    prompt: str
    model: str | None = None
    n: int = 1
    size: str | None = None
    response_format: Literal["b64_json", "file"] = "b64_json"
    output_format: str | None = None
    negative_prompt: str | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    true_cfg_scale: float | None = None
    seed: int | None = None
    user: str | None = None


class ImageEditForm(_Body):
    prompt: str
    model: str | None = None
    n: int = 1
    size: str = "auto"
    response_format: str = "b64_json"
    output_format: str | None = None
    negative_prompt: str | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    true_cfg_scale: float | None = None
    strength: float | None = None
    seed: int | None = None


class VideoForm(_Body):
    prompt: str
    model: str | None = None
    seconds: str | None = Field(default=None, pattern=r"^[1-9]\d*$")
    size: str | None = Field(default=None, pattern=r"^\d+x\d+$")
    width: int | None = None
    height: int | None = None
    num_frames: int | None = None
    fps: int | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    guidance_scale_2: float | None = None
    true_cfg_scale: float | None = None
    boundary_ratio: float | None = None
    flow_shift: float | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    lora: str | None = None
    extra_params: str | None = None


class AudioBody(_Body):
    input: str
    model: str | None = None
    response_format: str = "wav"
    audio_length: float | None = None
    audio_start: float = 0.0
    negative_prompt: str | None = None
    guidance_scale: float | None = None
    num_inference_steps: int | None = None
    seed: int | None = None
    speed: float = 1.0


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="allow")  # the OpenAI SDK may flatten extra_body keys

    messages: list[dict[str, Any]]
    model: str | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


class ChatParams(_Body):
    height: int | None = None
    width: int | None = None
    size: str | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    seed: int | None = None
    negative_prompt: str | None = None
    num_outputs_per_prompt: int = 1


class Checks:
    """Range and alignment checks against the fake model's contract."""

    def __init__(self, config: FakeConfig) -> None:
        self.config = config
        self.enforce = not config.faults.accepts_out_of_range

    def in_range(
        self, name: str, value: float | None, lo: float | None = None, hi: float | None = None
    ) -> None:
        if value is None or not self.enforce:
            return
        if lo is not None and value < lo:
            raise Rejection(
                400,
                f"{name}: Input should be greater than or equal to {lo} "
                f"[type=greater_than_equal, input_value={value}]",
                name,
            )
        if hi is not None and value > hi:
            raise Rejection(
                400,
                f"{name}: Input should be less than or equal to {hi} "
                f"[type=less_than_equal, input_value={value}]",
                name,
            )

    def sampling(self, steps: int | None, *guidance: tuple[str, float | None]) -> None:
        self.in_range("num_inference_steps", steps, self.config.min_steps, self.config.max_steps)
        for name, value in guidance:
            self.in_range(name, value, 0, self.config.max_guidance)

    def model(self, requested: str | None) -> None:
        if requested is not None and requested != self.config.model_name:
            raise Rejection(
                400,
                f"Model mismatch: request specifies '{requested}' but server is running "
                f"'{self.config.model_name}'.",
                "model",
            )

    def dims(self, width: int, height: int, field: str = "size") -> tuple[int, int]:
        """Check a requested size; returns the size the fake actually renders (clamped when
        the out-of-range fault let a bad size through)."""
        cfg = self.config
        if self.enforce:
            for name, value in (("width", width), ("height", height)):
                where = f"{field} {name}" if field == "size" else name
                if value < cfg.min_side or value > cfg.max_side:
                    raise Rejection(
                        400,
                        f"Invalid {where} {value}: must be between {cfg.min_side} and "
                        f"{cfg.max_side}",
                        field if field == "size" else name,
                    )
                if value % cfg.size_multiple:
                    raise Rejection(
                        400,
                        f"Invalid {where} {value}: must be a multiple of {cfg.size_multiple}",
                        field if field == "size" else name,
                    )
            if width * height > cfg.max_pixels:
                raise Rejection(
                    400,
                    f"Requested image size {width}x{height} exceeds the maximum allowed size",
                    field,
                )
        return (min(max(width, 1), 512), min(max(height, 1), 512))


def parse_size(text: str, field: str = "size") -> tuple[int, int]:
    """'WIDTHxHEIGHT' -> (w, h); any other string is a 400 whatever the faults say."""
    match = _SIZE_RE.match(text.strip())
    if match is None:
        raise Rejection(
            400,
            f"Invalid {field} format: '{text}'. {field} must be in format 'WIDTHxHEIGHT' "
            "with positive integers.",
            field,
        )
    return int(match.group(1)), int(match.group(2))


def parse_json_dict(text: str | None, field: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Rejection(400, f"Invalid JSON in form field '{field}': {exc}", field) from exc
    if not isinstance(value, dict):
        raise Rejection(400, f"Invalid JSON in form field '{field}': expected dict", field)
    return value
