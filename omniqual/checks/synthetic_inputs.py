"""What load sends besides its shape: harmless synthetic prompts and a deterministic edit input.

Prompts are made of a few fixed words, varied by the request's seed (a handful of distinct ones
per shape, which lets ``load_binding.wire_call`` build each request once); they are never
logged.
"""

import functools
import io

from PIL import Image

from omniqual.loadgen.workload import PlannedRequest

_WORDS = ("lighthouse", "harbor", "dawn", "fog", "granite", "gull", "lantern", "tide", "cliff")


def synthetic_prompt(tokens: int, seed: int) -> str:
    """A harmless prompt of about ``tokens`` words, varied by ``seed`` (never logged)."""
    # Only the seed's residue picks the words: a load client asks per request, it is cached.
    return _prompt(max(tokens, 1), seed % len(_WORDS))


@functools.lru_cache(maxsize=1024)
def _prompt(tokens: int, residue: int) -> str:
    return " ".join(_WORDS[(residue + i * 7) % len(_WORDS)] for i in range(tokens))


def request_prompt(planned: PlannedRequest) -> str:
    """The synthetic prompt ``wire_call`` sends for ``planned``."""
    p = planned.params
    return synthetic_prompt(p.prompt_tokens or 8, p.seed if p.seed is not None else planned.index)


@functools.lru_cache(maxsize=32)
def reference_png(width: int, height: int) -> bytes:
    """A small deterministic gradient PNG used as the edit input."""
    image = Image.new("RGB", (width, height))
    pixels = [((x * 5) % 256, (y * 5) % 256, 128) for y in range(height) for x in range(width)]
    image.putdata(pixels)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


@functools.lru_cache(maxsize=32)
def variant_png(variant: int, width: int = 64, height: int = 64) -> bytes:
    """A deterministic edit input per ``variant``: the same size, different pixels (a diagonal
    gradient shifted and tinted by the variant), so requests that differ only in their input
    image have different truths."""
    image = Image.new("RGB", (width, height))
    shift, tint = variant * 37, (variant * 71) % 256
    pixels = [((x * 4 + shift) % 256, (y * 4 + 2 * shift) % 256, tint)
              for y in range(height) for x in range(width)]  # fmt: skip
    image.putdata(pixels)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
