"""The SKILL Gate 0 rules a contract file is held to when it loads, beside its schema: every
identifier it pins is immutable (G0-01), an input that takes several files declares their
aggregate byte cap (G0-13), audio is served on ``/v1/audio/generate`` (G0-29), and a file upload
is declared only on an endpoint that takes it as a file (G0-31). Each problem is a
``(location, message)`` pair; :mod:`omniqual.specs.contracts` places it at its line."""

import re

from omniqual.domain.contract import (
    ENDPOINT_PATHS,
    MULTIPART_MODES,
    EndpointContract,
    ModelContract,
)
from omniqual.specs.source import Loc

COMMIT = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{40}(?![0-9a-fA-F])")
"""A full git commit (or Hugging Face revision): the only immutable revision a branch is not."""
EXACT_PIN = re.compile(r"[A-Za-z0-9_.\-\[\]]+==[0-9]+(?:\.[0-9]+)+(?:[.+\-]?[A-Za-z0-9]+)*")
"""``package==1.2.3`` (post/dev/local tags allowed): a package index serves one build of it."""
EXACT_VERSION = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(?:[.+\-]?[A-Za-z0-9]+)*$")
BUNDLED = "omniqual bundled "
"""A checkpoint omniqual builds itself: its immutable identity is the checkpoint manifest's
sha256, which every result records (``Provenance.checkpoint_sha256``)."""
UPLOAD_MODES = MULTIPART_MODES | {"chat-completions"}
"""Where a file input is sent as a file: a multipart part, or (chat) a data URL in a message."""
AUDIO_MODE = "audio-generate"


def policy_problems(contract: ModelContract) -> list[tuple[Loc, str]]:
    """Every Gate 0 policy problem of ``contract``."""
    found = _pin_problems(contract)
    for index, endpoint in enumerate(contract.endpoints):
        found.extend(_endpoint_problems(("endpoints", index), endpoint))
    return found


def _pin_problems(contract: ModelContract) -> list[tuple[Loc, str]]:
    """G0-01: the official implementation, the checkpoint and the vLLM-Omni target are pinned by
    immutable identifiers (an exact version or a 40-hex commit), never a branch or a range."""
    found: list[tuple[Loc, str]] = []
    if not (EXACT_PIN.search(contract.official) or COMMIT.search(contract.official)):
        found.append((("official",), "pin the official implementation by an exact version "
                      "(package==X.Y.Z) or a 40-hex commit (SKILL G0-01)"))  # fmt: skip
    checkpoint = contract.checkpoint
    if checkpoint.startswith(BUNDLED):
        named = checkpoint[len(BUNDLED) :].split(" ", 1)[0]
        if named != contract.model:
            found.append((("checkpoint",), f"a bundled checkpoint names this contract's model "
                          f"({BUNDLED}{contract.model}), not {named!r}"))  # fmt: skip
    elif not COMMIT.search(checkpoint):
        found.append((("checkpoint",), "pin the checkpoint by its 40-hex revision (a branch, "
                      f"tag or short hash moves), or name it `{BUNDLED}<model>` "
                      "(SKILL G0-01)"))  # fmt: skip
    release = contract.target_release
    if not (EXACT_VERSION.match(release) or COMMIT.fullmatch(release)):
        found.append((("target_release",), f"{release!r} is no exact vLLM-Omni version "
                      "(X.Y.Z) or 40-hex commit: the contract is frozen against one release "
                      "(SKILL G0-01)"))  # fmt: skip
    return found


def _endpoint_problems(loc: Loc, endpoint: EndpointContract) -> list[tuple[Loc, str]]:
    found: list[tuple[Loc, str]] = []
    if endpoint.output.kind == "audio" and endpoint.api_mode != AUDIO_MODE:
        found.append(((*loc, "api_mode"), "diffusion audio is served on "
                      f"{ENDPOINT_PATHS[AUDIO_MODE]}, not {endpoint.path} "
                      "(SKILL G0-29)"))  # fmt: skip
    for index, spec in enumerate(endpoint.inputs):
        where: Loc = (*loc, "inputs", index)
        if spec.max_count > 0 and endpoint.api_mode not in UPLOAD_MODES:
            found.append(((*where, "max_count"), f"{endpoint.path} takes a JSON body: a file "
                          "input is declared on a multipart endpoint (SKILL G0-31)"))  # fmt: skip
        if spec.max_count >= 2 and spec.max_total_bytes is None:
            found.append(((*where, "max_total_bytes"), f"{spec.field!r} takes up to "
                          f"{spec.max_count} files: declare their aggregate byte cap "
                          "(SKILL G0-13)"))  # fmt: skip
    return found
