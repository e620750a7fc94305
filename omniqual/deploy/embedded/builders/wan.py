"""Tiny random-weight Wan 2.x checkpoints: text-to-video and (Wan 2.2 style) image-to-video.

Both share the VAE (spatial scale 8, temporal 4, so frame counts round to 4k+1) and a UMT5 text
encoder with a local unigram tokenizer. The image-to-video transformer takes 36 input channels
(16 noisy latents + 4 mask + 16 image latents) and has no CLIP image encoder, like Wan 2.2 A14B.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder, component_seed, heavy
from omniqual.deploy.embedded.builders.tokenizers import TINY_T5_ENCODER, save_t5_tokenizer

_TRANSFORMER: dict[str, Any] = {
    "patch_size": [1, 2, 2],
    "num_attention_heads": 2,
    "attention_head_dim": 12,
    "in_channels": 16,
    "out_channels": 16,
    "text_dim": 32,
    "freq_dim": 32,
    "ffn_dim": 32,
    "num_layers": 2,
    "cross_attn_norm": True,
    "qk_norm": "rms_norm_across_heads",
    "rope_max_seq_len": 32,
}

_SHARED: dict[str, dict[str, Any]] = {
    "vae": {
        "base_dim": 3,
        "z_dim": 16,
        "dim_mult": [1, 1, 1, 1],
        "num_res_blocks": 1,
        "temperal_downsample": [False, True, True],
    },
    "text_encoder": dict(TINY_T5_ENCODER),
    "scheduler": {"shift": 3.0},
    "layout": {"t5_max_length": 512},
}

T2V_CONFIGS: dict[str, dict[str, Any]] = {"transformer": _TRANSFORMER, **_SHARED}
I2V_CONFIGS: dict[str, dict[str, Any]] = {
    "transformer": {**_TRANSFORMER, "in_channels": 36},
    **_SHARED,
}


def _write(target: Path, builder: CheckpointBuilder, *, image_to_video: bool) -> None:
    import torch

    diffusers = heavy("diffusers")
    transformers = heavy("transformers")

    c = builder.fresh_configs()
    torch.manual_seed(component_seed(builder, "transformer"))
    transformer = diffusers.WanTransformer3DModel(**c["transformer"])
    torch.manual_seed(component_seed(builder, "vae"))
    vae = diffusers.AutoencoderKLWan(**c["vae"])
    torch.manual_seed(component_seed(builder, "text_encoder"))
    text_encoder = transformers.UMT5EncoderModel(transformers.T5Config(**c["text_encoder"]))
    save_t5_tokenizer(target / "tokenizer", max_length=c["layout"]["t5_max_length"])
    tokenizer = transformers.T5Tokenizer.from_pretrained(str(target / "tokenizer"))
    scheduler = diffusers.FlowMatchEulerDiscreteScheduler(**c["scheduler"])
    components: dict[str, Any] = {
        "transformer": transformer,
        "vae": vae,
        "text_encoder": text_encoder,
        "tokenizer": tokenizer,
        "scheduler": scheduler,
    }
    pipeline = (
        diffusers.WanImageToVideoPipeline(**components, image_encoder=None, image_processor=None)
        if image_to_video
        else diffusers.WanPipeline(**components)
    )
    pipeline.save_pretrained(str(target), safe_serialization=True)
    _drop_absent_components(target / "model_index.json")


def _drop_absent_components(model_index: Path) -> None:
    """Remove ``[null, null]`` entries diffusers writes for absent optional components.

    vLLM-Omni's Wan I2V pipeline treats the mere key ``transformer_2`` as "two-stage model" and
    then fails with ``Cannot find any model weights``; diffusers itself accepts the key missing.
    """
    index = json.loads(model_index.read_text(encoding="utf-8"))
    kept = {k: v for k, v in index.items() if v != [None, None]}
    model_index.write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_t2v(target: Path, builder: CheckpointBuilder) -> None:
    _write(target, builder, image_to_video=False)


def write_i2v(target: Path, builder: CheckpointBuilder) -> None:
    _write(target, builder, image_to_video=True)


def _prompt_embeds(pipeline: Any, prompt: str) -> Any:
    """Encode the prompt directly: diffusers' Wan prompt cleaning needs ftfy, absent here."""
    import torch

    ids = pipeline.tokenizer(
        [prompt], padding="max_length", max_length=16, truncation=True, return_tensors="pt"
    ).input_ids
    with torch.no_grad():
        return pipeline.text_encoder(ids).last_hidden_state


def check_t2v(target: Path) -> None:
    diffusers = heavy("diffusers")
    pipeline = diffusers.WanPipeline.from_pretrained(str(target), local_files_only=True)
    _check_frames(pipeline, "T2V")


def check_i2v(target: Path) -> None:
    diffusers = heavy("diffusers")
    pil_image = heavy("PIL.Image")
    pipeline = diffusers.WanImageToVideoPipeline.from_pretrained(str(target), local_files_only=True)
    _check_frames(pipeline, "I2V", image=pil_image.new("RGB", (32, 32), (200, 40, 40)))


def _check_frames(pipeline: Any, label: str, **inputs: Any) -> None:
    """Run the plain diffusers pipeline once and check it yields 5 frames of 32x32 RGB."""
    import torch

    frames = pipeline(
        prompt_embeds=_prompt_embeds(pipeline, "a tiny check"),
        height=32,
        width=32,
        num_frames=5,
        num_inference_steps=2,
        guidance_scale=1.0,
        generator=torch.Generator("cpu").manual_seed(0),
        output_type="np",
        **inputs,
    ).frames
    if tuple(frames.shape) != (1, 5, 32, 32, 3):
        raise RuntimeError(f"diffusers Wan {label} check produced shape {tuple(frames.shape)}")


T2V_BUILDER = CheckpointBuilder(
    name="wan-t2v-tiny",
    version="2",
    seed=20250302,
    configs=T2V_CONFIGS,
    write=write_t2v,
    check=check_t2v,
)

I2V_BUILDER = CheckpointBuilder(
    name="wan-i2v-tiny",
    version="2",
    seed=20250303,
    configs=I2V_CONFIGS,
    write=write_i2v,
    check=check_i2v,
)
