"""Fake routes for images (generations, edits), diffusion chat and audio generation."""

from __future__ import annotations

import base64
import hashlib
import io
import random
import secrets
import time
import zipfile

import httpx

from tests.fakes.fake_core import FakeCore, Reply, validated
from tests.fakes.fake_media import image_size, make_image, make_wav, perturb_image, rng_for
from tests.fakes.fake_validation import (
    AudioBody,
    ChatBody,
    ChatParams,
    ImageEditForm,
    ImageGenerationBody,
    Rejection,
    parse_size,
)

_MAX_RENDERED = 16  # an accepted absurd n must not make the fake render thousands of images
_FORMATS = {"png", "jpeg", "jpg", "webp"}


def _format(requested: str | None) -> str:
    fmt = (requested or "png").lower()
    return fmt if fmt in _FORMATS else "jpeg"  # the real server silently falls back to jpeg


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _seed(seed: int | None) -> int:
    return seed if seed is not None else secrets.randbits(32)


def images_generations(core: FakeCore, request: httpx.Request) -> Reply:
    cfg, checks = core.config, core.checks
    body = core.json_model(request, ImageGenerationBody, "ImageGenerationRequest")
    checks.model(body.model)
    checks.in_range("n", body.n, 1, cfg.max_n)
    checks.sampling(
        body.num_inference_steps,
        ("guidance_scale", body.guidance_scale),
        ("true_cfg_scale", body.true_cfg_scale),
    )
    width, height = cfg.default_image_size
    if body.size is not None:
        width, height = checks.dims(*parse_size(body.size))
    fmt, seed = _format(body.output_format), _seed(body.seed)
    faults = cfg.faults
    count = min(max(body.n, 0) + faults.extra_outputs, _MAX_RENDERED)
    steps = body.num_inference_steps
    steps = steps + faults.steps_offset if steps is not None else None
    width, height = width + faults.size_offset, height + faults.size_offset
    images = [
        _precision(core, make_image(width, height, fmt, seed + faults.seed_offset, body.prompt,
                                    i, steps), fmt, (seed, body.prompt, i, steps))
        for i in range(count)
    ]  # fmt: skip
    core.leave_temp_file("image")
    route = "POST /v1/images/generations"
    if body.response_format == "file":
        return Reply(_file_response(images), route, cfg.image_work_s)
    payload = {
        "created": int(time.time()),
        "data": [{"b64_json": _b64(img), "url": None, "revised_prompt": None} for img in images],
        "output_format": fmt,
        "size": body.size,
    }
    return core.ok_json(payload, route, cfg.image_work_s)


def _precision(core: FakeCore, image: bytes, fmt: str, identity: tuple[object, ...]) -> bytes:
    """fp32 served for real rounds differently from bf16: pixels move by one level, the same way
    for the same request; ``run_jitter`` moves them at random on every answer."""
    if fmt != "png":
        return image
    cfg = core.config
    if cfg.dtype == "fp32" and not cfg.faults.ignores_dtype:
        image = perturb_image(image, 1, rng_for("fp32", *identity))
    if cfg.faults.run_jitter:
        image = perturb_image(image, cfg.faults.run_jitter, random.Random(secrets.randbits(64)))
    return image


def _file_response(images: list[bytes]) -> httpx.Response:
    if len(images) == 1:
        return httpx.Response(200, content=images[0], headers={"content-type": "image/png"})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for index, data in enumerate(images):
            archive.writestr(f"image_{index}.png", data)
    return httpx.Response(200, content=out.getvalue(), headers={"content-type": "application/zip"})


def _decode_data_url(url: str, field: str) -> bytes:
    head, _, payload = url.partition(",")
    if not (head.startswith("data:image") and head.endswith(";base64")):
        raise Rejection(400, f"Failed to download image from URL (fake has no network): {field}")
    try:
        return base64.b64decode(payload, validate=True)
    except ValueError as exc:
        raise Rejection(400, f"Invalid base64 image: {exc}", field) from exc


def images_edits(core: FakeCore, request: httpx.Request) -> Reply:
    cfg, checks = core.config, core.checks
    form = core.form(request)
    inputs = [data for name in ("image", "image[]") for _, data in form.files.get(name, [])]
    urls = [u for name in ("url", "url[]") for u in form.fields.get(name, [])]
    body = validated(ImageEditForm, form.text_fields(), "ImageEditRequest")
    if not inputs and not urls:
        raise Rejection(422, "Field 'image' or 'url' is required", "image")
    inputs += [_decode_data_url(u, "url") for u in urls]
    if len(inputs) > cfg.max_edit_images:
        raise Rejection(
            400,
            f"Received {len(inputs)} input images. At most {cfg.max_edit_images} images are "
            "supported by this model.",
            "image",
        )
    sizes = [image_size(data) for data in inputs]
    if any(s is None for s in sizes):
        raise Rejection(400, "Failed to open uploaded file: not a decodable image", "image")
    checks.model(body.model)
    if body.response_format != "b64_json":
        raise Rejection(400, "Only response_format 'b64_json' is supported now.", "response_format")
    checks.in_range("n", body.n, 1, cfg.max_n)
    checks.sampling(body.num_inference_steps, ("guidance_scale", body.guidance_scale))
    checks.in_range("strength", body.strength, 0, 1)
    first = sizes[0]
    assert first is not None
    width, height = first if body.size == "auto" else checks.dims(*parse_size(body.size))
    width, height = min(width, 512), min(height, 512)
    fmt, seed = _format(body.output_format), _seed(body.seed)
    digest = hashlib.sha256(b"".join(inputs)).hexdigest()
    images = [
        make_image(width, height, fmt, seed, body.prompt, digest, i)
        for i in range(min(max(body.n, 0), _MAX_RENDERED))
    ]
    core.leave_temp_file("edit")
    payload = {
        "created": int(time.time()),
        "data": [{"b64_json": _b64(img), "url": None, "revised_prompt": None} for img in images],
        "output_format": fmt,
        "size": f"{width}x{height}",
    }
    return core.ok_json(payload, "POST /v1/images/edits", cfg.image_work_s)


def chat_completions(core: FakeCore, request: httpx.Request) -> Reply:
    cfg, checks = core.config, core.checks
    body = core.json_model(request, ChatBody, "ChatCompletionRequest")
    flattened = {k: v for k, v in (body.model_extra or {}).items() if k in ChatParams.model_fields}
    params = validated(ChatParams, {**flattened, **body.extra_body}, "extra_body")
    checks.model(body.model)
    prompt, refs = _chat_inputs(body)
    if prompt is None or not prompt.strip():
        raise Rejection(400, "No text prompt found in messages", "messages")
    if len(refs) > cfg.max_edit_images:
        raise Rejection(400, "Received multiple input images. Only a single image is supported.")
    checks.in_range("num_outputs_per_prompt", params.num_outputs_per_prompt, 1, cfg.max_n)
    checks.sampling(params.num_inference_steps, ("guidance_scale", params.guidance_scale))
    width, height = cfg.default_image_size
    if params.size is not None:
        width, height = checks.dims(*parse_size(params.size))
    elif params.width is not None or params.height is not None:
        width, height = checks.dims(params.width or width, params.height or height, "width")
    seed = _seed(params.seed)
    digest = hashlib.sha256(b"".join(refs)).hexdigest()
    parts = [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + _b64(img)},
        }
        for img in (
            make_image(width, height, "png", seed, prompt, digest, i, params.num_inference_steps)
            for i in range(min(max(params.num_outputs_per_prompt, 0), _MAX_RENDERED))
        )
    ]
    core.leave_temp_file("chat")
    payload = {
        "id": core.next_id("chatcmpl-fake-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": cfg.model_name,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": parts},
                "finish_reason": "stop",
            }
        ],
    }
    return core.ok_json(payload, "POST /v1/chat/completions", cfg.image_work_s)


def _chat_inputs(body: ChatBody) -> tuple[str | None, list[bytes]]:
    prompt: str | None = None
    refs: list[bytes] = []
    for message in body.messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str) and content.strip():
            prompt = content
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                prompt = part["text"]
            image_url = part.get("image_url")
            if part.get("type") == "image_url" and isinstance(image_url, dict):
                refs.append(_decode_data_url(str(image_url.get("url", "")), "image_url"))
    return prompt, refs


def audio_generate(core: FakeCore, request: httpx.Request) -> Reply:
    cfg, checks = core.config, core.checks
    body = core.json_model(request, AudioBody, "OpenAICreateAudioGenerateRequest")
    if body.model is not None and body.model != cfg.model_name:
        raise Rejection(404, f"The model `{body.model}` does not exist.", "model")
    if body.response_format not in {"wav", "pcm"}:
        raise Rejection(
            400, f"response_format '{body.response_format}' is not supported", "response_format"
        )
    length = cfg.default_audio_s if body.audio_length is None else body.audio_length
    if checks.enforce and not 0 < length <= cfg.max_audio_s:
        raise Rejection(
            400,
            f"audio_length {length} must be in (0, {cfg.max_audio_s}] seconds for this model",
            "audio_length",
        )
    checks.in_range("audio_start", body.audio_start, 0, 512)
    checks.in_range("speed", body.speed, 0.25, 4.0)
    checks.sampling(body.num_inference_steps, ("guidance_scale", body.guidance_scale))
    seed = _seed(body.seed)
    length = min(max(length, 0.01), cfg.max_audio_s)
    wav = make_wav(length, cfg.audio_sample_rate, cfg.audio_channels, seed, body.input)
    core.leave_temp_file("audio")
    content, content_type = (
        (wav, "audio/wav")
        if body.response_format == "wav"
        else (
            wav[44:],
            "audio/pcm",
        )
    )
    response = httpx.Response(200, content=content, headers={"content-type": content_type})
    return Reply(response, "POST /v1/audio/generate", cfg.audio_work_s)
