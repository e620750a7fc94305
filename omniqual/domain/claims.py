"""Claims a row key keeps apart (SKILL MX-18): a producer's output (the pipeline's own tensors,
in process) is no transport evidence, and public streaming is no evidence of a buffered answer
nor the other way round. So a producer row (``output_transport`` raw-float-local) is an offline
row and an offline row is a producer row, and a streaming row names a streaming transport, not
one of the buffered bodies. Rows are exact and evidence never moves between them, so each
claim is decided on its own row. Pure: :mod:`omniqual.specs.promotion` places each problem."""

import re
from collections.abc import Mapping

PRODUCER_TRANSPORT = "raw-float-local"
IN_PROCESS_MODE = "offline"
STREAMING_MODE = "streaming"
BUFFERED_TRANSPORTS = ("b64-json", "data-url", "mp4-bytes", "async-artifact", "wav-bytes")
"""Transports that deliver the whole output in one answer (or one stored artifact)."""


def claim_problems(values: Mapping[str, str]) -> list[tuple[str, str]]:
    """(``key.<axis>``, message) for every claim ``values`` mixes up."""
    mode, transport = values.get("api_mode"), values.get("output_transport")
    if mode is None or transport is None:
        return []
    found: list[tuple[str, str]] = []
    if transport == PRODUCER_TRANSPORT and mode != IN_PROCESS_MODE:
        found.append(("key.output_transport", f"{PRODUCER_TRANSPORT} is the producer's own "
                      f"output, in process: a served row ({mode}) names the transport its "
                      "client receives (SKILL MX-18)"))  # fmt: skip
    if mode == IN_PROCESS_MODE and transport != PRODUCER_TRANSPORT:
        found.append(("key.api_mode", f"an {IN_PROCESS_MODE} row is a producer claim: its "
                      f"output is {PRODUCER_TRANSPORT}, not the transport {transport} "
                      "(SKILL MX-18)"))  # fmt: skip
    if mode == STREAMING_MODE and (transport in BUFFERED_TRANSPORTS or
                                   transport == PRODUCER_TRANSPORT):  # fmt: skip
        found.append(("key", f"public streaming is its own claim: a {STREAMING_MODE} row names "
                      f"its streaming transport, not {transport} (SKILL MX-18)"))  # fmt: skip
    return found


ONLINE_FP8_SCOPES = ("dit", "te", "vae", "all")
"""What online FP8 quantizes: the DiT, the text encoder, the VAE, or every component."""
PREQUANTIZED = ("fp8-prequantized", "gguf")
"""Checkpoints quantized ahead of time: a model and loading lane of their own."""
_ABLATION = "ablation"


def lane_problems(
    values: Mapping[str, str], parent: Mapping[str, str] | None, texts: Mapping[str, str]
) -> list[tuple[str, str]]:
    """SKILL G3-08: online FP8 names its component scope, so the text encoder's and the VAE's
    are rows of their own; a pre-quantized checkpoint is its own lane (a baseline, held to the
    official pipeline), never a candidate of a dense row that differs from it in quantization
    alone, and no row text of it calls it an ablation. ``texts``: field -> the row's words."""
    quantization = values.get("quantization", "")
    found: list[tuple[str, str]] = []
    if quantization.startswith("fp8-online") and quantization.removeprefix(
        "fp8-online-"
    ) not in ONLINE_FP8_SCOPES:
        scopes = ", ".join(f"fp8-online-{s}" for s in ONLINE_FP8_SCOPES)
        found.append(("key.quantization", f"online FP8 names its component scope ({scopes}), "
                      f"not {quantization!r} (SKILL G3-08)"))  # fmt: skip
    if quantization in PREQUANTIZED:
        if parent is not None and parent.get("quantization") != quantization:
            found.append(("parent_row", f"a pre-quantized checkpoint ({quantization}) is its own "
                          "model and loading lane: a baseline row held to the official pipeline, "
                          "not a quantization swap of a dense row (SKILL G3-08)"))  # fmt: skip
        found += [(name, f"a pre-quantized lane ({quantization}) is no {_ABLATION} of the dense "
                   "checkpoint: say what it is (SKILL G3-08)")
                  for name, text in texts.items() if _ABLATION in text.lower()]  # fmt: skip
    return found


_READINESS = re.compile(r"production[\s_-]*ready|ready\s+for\s+production|day[\s_-]*0\s+ready",
                        re.IGNORECASE)  # fmt: skip


def readiness_problems(texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """SKILL G8-16: readiness is what the evidence derives (a `validated` row whose every gate
    of the Definition of Done passed, the Day-0 milestone kept apart), never a row's words: a
    note or limitation that calls the row production-ready, or Day-0 ready, is refused."""
    return [(name, f"{found.group(0)!r} is no word a row may claim: its state is derived from "
             "its gates' evidence (validated only when every gate of the Definition of Done "
             "passed), say what was measured instead (SKILL G8-16)")
            for name, text in texts.items() if (found := _READINESS.search(text))]  # fmt: skip
