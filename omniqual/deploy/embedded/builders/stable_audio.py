"""Tiny random-weight Stable Audio checkpoint (text-to-audio, 44.1 kHz stereo).

The Oobleck VAE keeps the real hop length (2048 = 2*4*4*8*8) and sample rate, so the longest
clip is ``sample_size * 2048 / 44100`` s (about 1.49 s with 32 latent frames); longer requests
are rejected by the server with 400.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omniqual.deploy.embedded.builders.recipe import CheckpointBuilder, component_seed, heavy
from omniqual.deploy.embedded.builders.tokenizers import TINY_T5_ENCODER, save_t5_tokenizer

SAMPLE_RATE = 44_100
HOP_LENGTH = 2048

CONFIGS: dict[str, dict[str, Any]] = {
    "transformer": {
        "sample_size": 32,
        "in_channels": 3,
        "out_channels": 3,
        "num_layers": 2,
        "attention_head_dim": 4,
        "num_attention_heads": 4,
        "num_key_value_attention_heads": 2,
        "cross_attention_dim": 4,
        "time_proj_dim": 8,
        "global_states_input_dim": 8,
        "cross_attention_input_dim": 4,
    },
    "vae": {
        "encoder_hidden_size": 6,
        "downsampling_ratios": [2, 4, 4, 8, 8],
        "channel_multiples": [1, 2, 2, 2, 2],
        "decoder_channels": 6,
        "decoder_input_channels": 3,
        "audio_channels": 2,
        "sampling_rate": SAMPLE_RATE,
    },
    "text_encoder": dict(TINY_T5_ENCODER),
    "projection_model": {
        "text_encoder_dim": 32,
        "conditioning_dim": 4,
        "min_value": 0,
        "max_value": 512,
    },
    "scheduler": {
        "solver_order": 2,
        "prediction_type": "v_prediction",
        "sigma_data": 1.0,
        "sigma_schedule": "exponential",
    },
    "layout": {"t5_max_length": 128},
}


def write(target: Path, builder: CheckpointBuilder) -> None:
    import torch

    diffusers = heavy("diffusers")
    transformers = heavy("transformers")

    c = builder.fresh_configs()
    torch.manual_seed(component_seed(builder, "transformer"))
    transformer = diffusers.StableAudioDiTModel(**c["transformer"])
    torch.manual_seed(component_seed(builder, "vae"))
    vae = diffusers.AutoencoderOobleck(**c["vae"])
    torch.manual_seed(component_seed(builder, "text_encoder"))
    text_encoder = transformers.T5EncoderModel(transformers.T5Config(**c["text_encoder"]))
    torch.manual_seed(component_seed(builder, "projection_model"))
    projection_model = diffusers.StableAudioProjectionModel(**c["projection_model"])
    save_t5_tokenizer(target / "tokenizer", max_length=c["layout"]["t5_max_length"])
    pipeline = diffusers.StableAudioPipeline(
        vae=vae,
        text_encoder=text_encoder,
        projection_model=projection_model,
        tokenizer=transformers.T5Tokenizer.from_pretrained(str(target / "tokenizer")),
        transformer=transformer,
        scheduler=diffusers.CosineDPMSolverMultistepScheduler(**c["scheduler"]),
    )
    pipeline.save_pretrained(str(target), safe_serialization=True)


def check(target: Path) -> None:
    import torch

    diffusers = heavy("diffusers")

    pipeline = diffusers.StableAudioPipeline.from_pretrained(str(target), local_files_only=True)
    audios = pipeline(
        "a tiny check",
        num_inference_steps=2,
        audio_end_in_s=1.0,
        generator=torch.Generator("cpu").manual_seed(0),
    ).audios
    if audios.shape[0] != 1 or audios.shape[1] != 2 or audios.shape[2] < SAMPLE_RATE // 2:
        raise RuntimeError(f"diffusers Stable Audio check produced shape {tuple(audios.shape)}")


BUILDER = CheckpointBuilder(
    name="stable-audio-tiny", version="1", seed=20250304, configs=CONFIGS, write=write, check=check
)
