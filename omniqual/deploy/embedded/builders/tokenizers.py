"""Tokenizers made locally for the tiny checkpoints: no vocabulary is fetched from a hub.

CLIP and Qwen2 get a byte-level BPE vocabulary without merges (every byte is a token, so any
prompt tokenizes); T5/UMT5 get a small unigram vocabulary of printable characters. The vocab
sizes stay below the tiny text encoders' embedding tables.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

CLIP_VOCAB_LIMIT = 1000
T5_VOCAB_LIMIT = 256

TINY_T5_ENCODER: dict[str, Any] = {
    "vocab_size": T5_VOCAB_LIMIT,
    "d_model": 32,
    "d_kv": 8,
    "d_ff": 37,
    "num_layers": 2,
    "num_heads": 4,
    "relative_attention_num_buckets": 8,
    "feed_forward_proj": "gated-gelu",
    "pad_token_id": 0,
    "eos_token_id": 1,
}
"""The one tiny T5 text encoder every bundled pipeline that needs T5 uses (matched to the
local tokenizer's vocabulary)."""
QWEN_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)


def byte_level_alphabet() -> list[str]:
    """GPT-2's reversible byte-to-unicode alphabet (256 printable characters)."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    codes = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return [chr(code) for _, code in sorted(zip(printable, codes, strict=True))]


def clip_vocab() -> dict[str, int]:
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for char in byte_level_alphabet():
        vocab.setdefault(char, len(vocab))
        vocab.setdefault(f"{char}</w>", len(vocab))
    return vocab


def save_clip_tokenizer(target: Path) -> None:
    from omniqual.deploy.embedded.builders.recipe import heavy

    vocab = clip_vocab()
    assert len(vocab) <= CLIP_VOCAB_LIMIT
    tokenizer = heavy("transformers").CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    tokenizer.save_pretrained(str(target))


def t5_unigram_vocab() -> list[tuple[str, float]]:
    pieces = ["▁", *string.ascii_lowercase, *string.ascii_uppercase, *string.digits]
    pieces += [f"▁{c}" for c in string.ascii_lowercase]
    pieces += list(".,!?'-:;()")
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    vocab += [(piece, -float(rank + 1) / 10.0) for rank, piece in enumerate(pieces)]
    return vocab


def save_t5_tokenizer(target: Path, *, max_length: int) -> None:
    from omniqual.deploy.embedded.builders.recipe import heavy

    vocab = t5_unigram_vocab()
    tokenizer = heavy("transformers").T5Tokenizer(
        vocab=vocab, extra_ids=0, model_max_length=max_length
    )
    assert len(tokenizer) <= T5_VOCAB_LIMIT
    tokenizer.save_pretrained(str(target))


def qwen2_vocab() -> dict[str, int]:
    vocab: dict[str, int] = {}
    for char in byte_level_alphabet():
        vocab.setdefault(char, len(vocab))
    return vocab


def build_qwen2_tokenizer() -> Any:
    from omniqual.deploy.embedded.builders.recipe import heavy

    tokenizer = heavy("transformers").Qwen2Tokenizer(
        vocab=qwen2_vocab(),
        merges=[],
        unk_token=None,
        bos_token=None,
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        model_max_length=1024,
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN_SPECIAL_TOKENS[1:])})
    return tokenizer
