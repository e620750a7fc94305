"""Tiny random-weight Stable Diffusion 3 checkpoint (text-to-image).

The server's startup warmup always renders 512x512, so the VAE keeps SD3's spatial scale factor
of 8 (four blocks) and the transformer's ``pos_embed_max_size`` covers a 64x64 latent with patch
2. The transformer is saved sharded (several ``*.safetensors`` plus the index JSON) to exercise
vLLM-Omni's sharded loading.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder, component_seed, heavy
from omniqual.deploy.embedded.builders.tokenizers import (
    CLIP_VOCAB_LIMIT,
    TINY_T5_ENCODER,
    save_clip_tokenizer,
    save_t5_tokenizer,
)

TRANSFORMER_SHARD_BYTES = 200_000

_CLIP: dict[str, Any] = {
    "vocab_size": CLIP_VOCAB_LIMIT,
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "projection_dim": 32,
    "hidden_act": "gelu",
    "bos_token_id": 0,
    "eos_token_id": 1,
    "pad_token_id": 1,
    "max_position_embeddings": 77,
}

CONFIGS: dict[str, dict[str, Any]] = {
    "transformer": {
        "sample_size": 32,
        "patch_size": 2,
        "in_channels": 4,
        "out_channels": 4,
        "num_layers": 2,
        "attention_head_dim": 8,
        "num_attention_heads": 4,
        "joint_attention_dim": 32,
        "caption_projection_dim": 32,
        "pooled_projection_dim": 64,
        "pos_embed_max_size": 64,
    },
    "vae": {
        "in_channels": 3,
        "out_channels": 3,
        "down_block_types": ["DownEncoderBlock2D"] * 4,
        "up_block_types": ["UpDecoderBlock2D"] * 4,
        "block_out_channels": [8, 8, 8, 8],
        "layers_per_block": 1,
        "latent_channels": 4,
        "norm_num_groups": 4,
        "sample_size": 64,
        "scaling_factor": 1.5035,
        "shift_factor": 0.0609,
        "use_quant_conv": False,
        "use_post_quant_conv": False,
    },
    "text_encoder": _CLIP,
    "text_encoder_2": _CLIP,
    "text_encoder_3": dict(TINY_T5_ENCODER),
    "scheduler": {"shift": 3.0, "num_train_timesteps": 1000},
    "layout": {"transformer_max_shard_size": TRANSFORMER_SHARD_BYTES, "t5_max_length": 256},
}


def write(target: Path, builder: CheckpointBuilder) -> None:
    import torch

    diffusers = heavy("diffusers")
    transformers = heavy("transformers")

    c = builder.fresh_configs()
    torch.manual_seed(component_seed(builder, "transformer"))
    transformer = diffusers.SD3Transformer2DModel(**c["transformer"])
    torch.manual_seed(component_seed(builder, "vae"))
    vae = diffusers.AutoencoderKL(**c["vae"])
    torch.manual_seed(component_seed(builder, "text_encoder"))
    text_encoder = transformers.CLIPTextModelWithProjection(
        transformers.CLIPTextConfig(**c["text_encoder"])
    )
    torch.manual_seed(component_seed(builder, "text_encoder_2"))
    text_encoder_2 = transformers.CLIPTextModelWithProjection(
        transformers.CLIPTextConfig(**c["text_encoder_2"])
    )
    torch.manual_seed(component_seed(builder, "text_encoder_3"))
    text_encoder_3 = transformers.T5EncoderModel(transformers.T5Config(**c["text_encoder_3"]))
    for directory in ("tokenizer", "tokenizer_2"):
        save_clip_tokenizer(target / "staging" / directory)
    save_t5_tokenizer(target / "staging" / "tokenizer_3", max_length=c["layout"]["t5_max_length"])

    pipeline = diffusers.StableDiffusion3Pipeline(
        transformer=transformer,
        scheduler=diffusers.FlowMatchEulerDiscreteScheduler(**c["scheduler"]),
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        text_encoder_3=text_encoder_3,
        tokenizer=transformers.CLIPTokenizer.from_pretrained(str(target / "staging" / "tokenizer")),
        tokenizer_2=transformers.CLIPTokenizer.from_pretrained(
            str(target / "staging" / "tokenizer_2")
        ),
        tokenizer_3=transformers.T5Tokenizer.from_pretrained(
            str(target / "staging" / "tokenizer_3")
        ),
    )
    shutil.rmtree(target / "staging")
    pipeline.save_pretrained(str(target), safe_serialization=True)
    shutil.rmtree(target / "transformer")
    transformer.save_pretrained(
        str(target / "transformer"),
        safe_serialization=True,
        max_shard_size=c["layout"]["transformer_max_shard_size"],
    )
    shards = list((target / "transformer").glob("*.safetensors"))
    if len(shards) < 2 or not list((target / "transformer").glob("*.safetensors.index.json")):
        raise RuntimeError(f"expected a sharded transformer, got {len(shards)} shard(s)")


def check(target: Path) -> None:
    import torch

    diffusers = heavy("diffusers")

    pipeline = diffusers.StableDiffusion3Pipeline.from_pretrained(
        str(target), local_files_only=True
    )
    images = pipeline(
        "a tiny check",
        height=64,
        width=64,
        num_inference_steps=2,
        guidance_scale=1.0,
        generator=torch.Generator("cpu").manual_seed(0),
        output_type="np",
    ).images
    if images.shape != (1, 64, 64, 3):
        raise RuntimeError(f"diffusers SD3 check produced shape {images.shape}")


BUILDER = CheckpointBuilder(
    name="sd3-tiny", version="1", seed=20250301, configs=CONFIGS, write=write, check=check
)
