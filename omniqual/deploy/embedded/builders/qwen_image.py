"""Tiny random-weight Qwen-Image-Edit checkpoint (image edit; also served as QwenImagePipeline).

Components: a byte-level Qwen2 tokenizer with the seven special tokens the prompt templates use,
a tiny Qwen2.5-VL text encoder saved in bf16 (fp32 fails the server warmup with a dtype
mismatch), a Qwen2-VL processor (image processor capped at 224x224 pixels plus the video
processor transformers 5.14 requires), the Qwen-Image VAE (scale 8) and a two-layer transformer.
The token ids in the text encoder config are those the local tokenizer assigns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder, component_seed, heavy
from omniqual.deploy.embedded.builders.tokenizers import build_qwen2_tokenizer

# Ids the local byte-level tokenizer gives its special tokens (256 bytes come first).
_TOKEN_IDS = {
    "eos_token_id": 256,
    "pad_token_id": 256,
    "vision_start_token_id": 259,
    "vision_end_token_id": 260,
    "image_token_id": 261,
    "video_token_id": 262,
}

CONFIGS: dict[str, dict[str, Any]] = {
    "transformer": {
        "patch_size": 2,
        "in_channels": 64,
        "out_channels": 16,
        "num_layers": 2,
        "attention_head_dim": 16,
        "num_attention_heads": 2,
        "joint_attention_dim": 32,
        "guidance_embeds": False,
        "axes_dims_rope": [8, 4, 4],
    },
    "vae": {
        "base_dim": 8,
        "z_dim": 16,
        "dim_mult": [1, 1, 1, 1],
        "num_res_blocks": 1,
        "temperal_downsample": [False, True, True],
    },
    "text_encoder": {
        "text_config": {
            "vocab_size": 300,
            "hidden_size": 32,
            "intermediate_size": 37,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "max_position_embeddings": 2048,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 2, 4]},
            "rope_theta": 1000000.0,
            "bos_token_id": None,
            **_TOKEN_IDS,
        },
        "vision_config": {
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 37,
            "num_heads": 2,
            "out_hidden_size": 32,
            "fullatt_block_indexes": [1],
        },
        "dtype": "bfloat16",
        **_TOKEN_IDS,
    },
    "processor": {"min_pixels": 56 * 56, "max_pixels": 224 * 224},
    "scheduler": {
        "base_image_seq_len": 256,
        "base_shift": 0.5,
        "max_image_seq_len": 8192,
        "max_shift": 0.9,
        "num_train_timesteps": 1000,
        "shift": 1.0,
        "shift_terminal": 0.02,
        "time_shift_type": "exponential",
        "use_dynamic_shifting": True,
    },
}


def write(target: Path, builder: CheckpointBuilder) -> None:
    import torch

    diffusers = heavy("diffusers")
    transformers = heavy("transformers")

    c = builder.fresh_configs()
    encoder_config = {k: v for k, v in c["text_encoder"].items() if k != "dtype"}
    torch.manual_seed(component_seed(builder, "transformer"))
    transformer = diffusers.QwenImageTransformer2DModel(**c["transformer"])
    torch.manual_seed(component_seed(builder, "vae"))
    vae = diffusers.AutoencoderKLQwenImage(**c["vae"])
    torch.manual_seed(component_seed(builder, "text_encoder"))
    text_encoder = transformers.Qwen2_5_VLForConditionalGeneration(
        transformers.Qwen2_5_VLConfig(**encoder_config)
    )
    text_encoder = text_encoder.to(getattr(torch, c["text_encoder"]["dtype"]))
    tokenizer: Any = build_qwen2_tokenizer()
    pixels = c["processor"]
    processor = transformers.Qwen2VLProcessor(
        image_processor=transformers.Qwen2VLImageProcessor(
            min_pixels=pixels["min_pixels"], max_pixels=pixels["max_pixels"]
        ),
        tokenizer=tokenizer,
        video_processor=transformers.Qwen2VLVideoProcessor(),
    )
    pipeline = diffusers.QwenImageEditPipeline(
        scheduler=diffusers.FlowMatchEulerDiscreteScheduler(**c["scheduler"]),
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        processor=processor,
        transformer=transformer,
    )
    pipeline.save_pretrained(str(target), safe_serialization=True)


def check(target: Path) -> None:
    import torch

    diffusers = heavy("diffusers")
    pil_image = heavy("PIL.Image")

    pipeline = diffusers.QwenImageEditPipeline.from_pretrained(
        str(target), local_files_only=True, dtype=torch.float32
    )
    images = pipeline(
        image=pil_image.new("RGB", (64, 64), (40, 120, 200)),
        prompt="make it red",
        height=64,
        width=64,
        num_inference_steps=2,
        true_cfg_scale=1.0,
        generator=torch.Generator("cpu").manual_seed(0),
        output_type="np",
    ).images
    if images.shape != (1, 64, 64, 3):
        raise RuntimeError(f"diffusers Qwen-Image-Edit check produced shape {images.shape}")


BUILDER = CheckpointBuilder(
    name="qwen-image-edit-tiny",
    version="1",
    seed=20250305,
    configs=CONFIGS,
    write=write,
    check=check,
)
