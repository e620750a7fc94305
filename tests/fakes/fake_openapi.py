"""``GET /openapi.json`` of the fake, shaped like vLLM-Omni 0.30's (FastAPI over pydantic): the
images request model with its ``$ref`` enum, ``anyOf [X, null]`` optionals, 64-bit seed limits
rendered as floats, bounds only where the server's model states them, and prose-only choices for
``output_format``. Like the real one, its ``response_format`` enum lists ``url``, which the
routes reject."""

from __future__ import annotations

from typing import Any

from tests.fakes.fake_config import FakeConfig

_ENUM_REF = "vllm_omni__entrypoints__openai__protocol__images__ResponseFormat"


def _optional(inner: dict[str, Any], title: str, description: str) -> dict[str, Any]:
    return {"anyOf": [inner, {"type": "null"}], "title": title, "description": description}


def openapi_document(config: FakeConfig) -> dict[str, Any]:
    request = {
        "type": "object",
        "title": "ImageGenerationRequest",
        "required": ["prompt"],
        "properties": {
            "prompt": {"type": "string", "title": "Prompt", "description": "Text description"},
            "model": _optional({"type": "string"}, "Model", "Model to use"),
            "n": {"type": "integer", "minimum": 1.0, "maximum": float(config.max_n),
                  "title": "N", "default": 1, "description": "Number of images to generate"},
            "size": _optional({"type": "string"}, "Size", "Image dimensions in WIDTHxHEIGHT "
                              "format (e.g., '1024x1024', uses model defaults if omitted)"),
            "response_format": {"$ref": f"#/components/schemas/{_ENUM_REF}",
                                "default": "b64_json", "description": "Format of the image"},
            "user": _optional({"type": "string"}, "User", "User identifier for tracking"),
            "negative_prompt": _optional({"type": "string"}, "Negative Prompt", "What to avoid"),
            "num_inference_steps": _optional(
                {"type": "integer", "minimum": float(config.min_steps),
                 "maximum": float(config.max_steps)},
                "Num Inference Steps", "Number of steps (uses model defaults if not specified)"),
            "guidance_scale": _optional(
                {"type": "number", "minimum": 0.0, "maximum": config.max_guidance},
                "Guidance Scale", "CFG scale (uses model defaults if not specified)"),
            "true_cfg_scale": _optional(
                {"type": "number", "minimum": 0.0, "maximum": config.max_guidance},
                "True Cfg Scale", "True CFG scale (model-specific parameter)"),
            "seed": _optional(
                {"type": "integer", "maximum": 9.223372036854776e18,
                 "minimum": -9.223372036854776e18}, "Seed", "Random seed for reproducibility"),
            "output_format": _optional({"type": "string"}, "Output Format", "Output image "
                                       "format: 'png', 'jpeg', or 'webp'. Defaults to 'png'."),
            "extra_params": _optional({"type": "object", "additionalProperties": True},
                                      "Extra Params", "Passed to the model"),
        },
    }  # fmt: skip
    enum = {"type": "string", "enum": ["b64_json", "url", "file"], "title": "ResponseFormat"}
    body = {"$ref": "#/components/schemas/ImageGenerationRequest"}
    post = {"requestBody": {"content": {"application/json": {"schema": body}}, "required": True}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "vLLM-Omni (fake)", "version": "0.30.0"},
        "paths": {"/v1/images/generations": {"post": post}, "/health": {"get": {}}},
        "components": {"schemas": {"ImageGenerationRequest": request, _ENUM_REF: enum}},
    }
