"""Pydantic v2 shapes of vLLM-Omni's diffusion HTTP API: typed requests, responses, the error
envelope (`{"error": {...}}`, with FastAPI's `{"detail": ...}` tolerated), and form encoding.

Request models accept extra fields (`extra="allow"`) so model-specific knobs pass through;
deliberately invalid traffic goes through `OmniClient.send_raw`, not through these models.
Response models also allow extras: fields differ between server versions.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

FormFields = dict[str, str | list[str]]
FormFiles = list[tuple[str, tuple[str, bytes, str]]]

TERMINAL_VIDEO_STATUSES = frozenset({"completed", "failed", "cancelled"})


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow")


def form_value(value: Any) -> str:
    """Form fields are strings on the wire; dicts travel as JSON text (as the server expects)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


class _Request(_Wire):
    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def _form_fields(self, skip: frozenset[str]) -> FormFields:
        return {k: form_value(v) for k, v in self.to_json().items() if k not in skip}


# ---------------------------------------------------------------------------- error envelope


class ErrorBody(_Wire):
    message: str = ""
    type: str | None = None
    param: str | None = None
    code: int | str | None = None


class ErrorEnvelope(_Wire):
    error: ErrorBody


class DetailEnvelope(_Wire):
    detail: str | list[Any] | dict[str, Any]


class ErrorInfo(BaseModel):
    """An error answer normalised from either envelope shape."""

    model_config = ConfigDict(frozen=True)

    shape: Literal["error", "detail"]
    message: str
    type: str | None = None
    param: str | None = None
    code: int | str | None = None


def parse_error_info(body: bytes) -> ErrorInfo | None:
    """Parse `{"error": {...}}` or `{"detail": ...}`; None when the body is neither."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict):
        return None
    try:
        if "error" in doc and isinstance(doc["error"], dict):
            err = ErrorEnvelope.model_validate(doc).error
            return ErrorInfo(
                shape="error", message=err.message, type=err.type, param=err.param, code=err.code
            )
        if "detail" in doc:
            detail = DetailEnvelope.model_validate(doc).detail
            text = detail if isinstance(detail, str) else json.dumps(detail)
            return ErrorInfo(shape="detail", message=text, param=_detail_param(detail))
    except ValidationError:
        return None
    return None


def _detail_param(detail: str | list[Any] | dict[str, Any]) -> str | None:
    """FastAPI's 422 detail is a list of {loc: [...], msg, type}; the last loc item is the field."""
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        loc = detail[0].get("loc")
        if isinstance(loc, list) and loc:
            return str(loc[-1])
    return None


# ---------------------------------------------------------------------------- images


class ImageGenerationRequest(_Request):
    """`POST /v1/images/generations` (JSON)."""

    prompt: str
    model: str | None = None
    n: int | None = None
    size: str | None = None
    response_format: str | None = None
    output_format: str | None = None
    negative_prompt: str | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    true_cfg_scale: float | None = None
    seed: int | None = None
    user: str | None = None
    lora: dict[str, Any] | None = None
    extra_params: dict[str, Any] | None = None


class ImageEditRequest(_Request):
    """`POST /v1/images/edits` (multipart): each of `images` is sent as an `image` file part."""

    prompt: str
    images: list[bytes] = []
    image_content_type: str = "image/png"
    urls: list[str] = []
    model: str | None = None
    n: int | None = None
    size: str | None = None
    response_format: str | None = None
    output_format: str | None = None
    negative_prompt: str | None = None
    num_inference_steps: int | None = None
    guidance_scale: float | None = None
    true_cfg_scale: float | None = None
    strength: float | None = None
    seed: int | None = None

    def to_multipart(self) -> tuple[FormFields, FormFiles]:
        fields = self._form_fields(frozenset({"images", "image_content_type", "urls"}))
        if self.urls:
            fields["url"] = list(self.urls)
        ext = self.image_content_type.rsplit("/", 1)[-1]
        files: FormFiles = [
            ("image", (f"image_{i}.{ext}", data, self.image_content_type))
            for i, data in enumerate(self.images)
        ]
        return fields, files


class ImageDatum(_Wire):
    b64_json: str | None = None
    url: str | None = None
    revised_prompt: str | None = None


class ImageGenerationResponse(_Wire):
    created: int | None = None
    data: list[ImageDatum]
    output_format: str | None = None
    size: str | None = None
    metrics: dict[str, Any] | None = None


# ---------------------------------------------------------------------------- videos


class VideoCreateRequest(_Request):
    """Form of `POST /v1/videos` and `POST /v1/videos/sync` (multipart)."""

    prompt: str
    model: str | None = None
    seconds: str | None = None
    size: str | None = None
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
    lora: dict[str, Any] | None = None
    extra_params: dict[str, Any] | None = None
    input_reference: bytes | None = None
    input_reference_content_type: str = "image/png"

    def to_multipart(self) -> tuple[FormFields, FormFiles]:
        fields = self._form_fields(frozenset({"input_reference", "input_reference_content_type"}))
        files: FormFiles = []
        if self.input_reference is not None:
            ext = self.input_reference_content_type.rsplit("/", 1)[-1]
            part = (f"reference.{ext}", self.input_reference, self.input_reference_content_type)
            files.append(("input_reference", part))
        return fields, files


class VideoJobError(_Wire):
    code: int | str | None = None
    message: str | None = None


class VideoJob(_Wire):
    """One async video job as `GET /v1/videos/{id}` reports it."""

    id: str
    object: str = "video"
    status: str
    progress: float = 0
    model: str | None = None
    size: str | None = None
    seconds: str | None = None
    created_at: int | float | None = None
    completed_at: int | float | None = None
    error: VideoJobError | None = None
    file_name: str | None = None
    inference_time_s: float | None = None
    stage_durations: dict[str, Any] | None = None
    peak_memory_mb: float | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_VIDEO_STATUSES


class VideoList(_Wire):
    object: str = "list"
    data: list[VideoJob]
    first_id: str | None = None
    last_id: str | None = None
    has_more: bool = False


class VideoDeleted(_Wire):
    id: str
    deleted: bool
    object: str = "video.deleted"


# ---------------------------------------------------------------------------- audio


class AudioGenerateRequest(_Request):
    """`POST /v1/audio/generate` (JSON); the answer is raw audio bytes."""

    input: str
    model: str | None = None
    response_format: str | None = None
    audio_length: float | None = None
    audio_start: float | None = None
    negative_prompt: str | None = None
    guidance_scale: float | None = None
    num_inference_steps: int | None = None
    seed: int | None = None


# ---------------------------------------------------------------------------- chat


class ChatDiffusionRequest(_Request):
    """Diffusion through `POST /v1/chat/completions`: the prompt and optional reference images
    become one user message; the diffusion knobs travel in `extra_body`."""

    prompt: str
    model: str | None = None
    images: list[bytes] = []
    image_content_type: str = "image/png"
    extra_body: dict[str, Any] = {}

    def to_json(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": self.prompt}]
        for data in self.images:
            url = f"data:{self.image_content_type};base64,{base64.b64encode(data).decode()}"
            content.append({"type": "image_url", "image_url": {"url": url}})
        body: dict[str, Any] = {"messages": [{"role": "user", "content": content}]}
        if self.model is not None:
            body["model"] = self.model
        if self.extra_body:
            body["extra_body"] = dict(self.extra_body)
        return body


class ChatImageUrl(_Wire):
    url: str


class ChatContentPart(_Wire):
    type: str
    text: str | None = None
    image_url: ChatImageUrl | None = None


class ChatMessage(_Wire):
    role: str = "assistant"
    content: str | list[ChatContentPart] | None = None


class ChatChoice(_Wire):
    index: int = 0
    message: ChatMessage
    finish_reason: str | None = None


class ChatCompletionResponse(_Wire):
    id: str | None = None
    object: str | None = None
    created: int | None = None
    model: str | None = None
    choices: list[ChatChoice]
    metrics: dict[str, Any] | None = None


# ---------------------------------------------------------------------------- models


class ModelCard(_Wire):
    id: str
    object: str = "model"
    root: str | None = None
    parent: str | None = None
    owned_by: str | None = None
    created: int | None = None
    max_model_len: int | None = None


class ModelList(_Wire):
    object: str = "list"
    data: list[ModelCard]
