"""Idempotent fixes that make the embedded CPU install of vLLM-Omni importable.

The registry only carries CUDA builds of torchvision, torchaudio and torchcodec, which cannot load
their native extensions next to the CPU torch wheel. Three precise fixes get round that:

1. torchvision registers fake kernels for ``torchvision::nms``/``qnms`` unconditionally, which
   raises ``operator torchvision::nms does not exist``; the two decorators are guarded with
   ``torchvision.extension._has_ops()`` (the guard the other registrations already use).
2. torchaudio lets the ``OSError`` from loading ``_torchaudio`` escape; it is caught so the
   package imports without its extension (vLLM-Omni imports it in the audio serving path).
3. torchcodec cannot load at all and vLLM tolerates its absence, so it is uninstalled.

Files are located with ``importlib.util.find_spec`` on the top-level package, which does not
execute the broken module, and rewritten atomically. Every edit carries a marker so a second run
reports ``already-applied`` and changes nothing.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict

logger = logging.getLogger(__name__)

MARKER = "omniqual-envfix"


class EnvFixStatus(StrEnum):
    APPLIED = "applied"
    ALREADY_APPLIED = "already-applied"
    NOT_NEEDED = "not-needed"


class EnvFix(BaseModel):
    """Outcome of one environment fix."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: EnvFixStatus
    detail: str


class EnvFixError(RuntimeError):
    """A fix could not be applied (ambiguous source text, failed uninstall, unwritable file)."""


@dataclass(frozen=True, slots=True)
class TextPatch:
    """Replace one exact, unique snippet; ``replacement`` must contain ``MARKER``."""

    original: str
    replacement: str


@dataclass(frozen=True, slots=True)
class TextPatchResult:
    text: str
    status: EnvFixStatus


TORCHVISION_FAKE_NMS_PATCHES: tuple[TextPatch, ...] = tuple(
    TextPatch(
        original=f'\n@torch.library.register_fake("torchvision::{op}")\n',
        replacement=(
            f'\n@(torch.library.register_fake("torchvision::{op}")'
            " if torchvision.extension._has_ops() else (lambda fn: fn))"
            f"  # {MARKER}: no native ops in this build\n"
        ),
    )
    for op in ("nms", "qnms")
)

TORCHAUDIO_EXTENSION_PATCH = TextPatch(
    original='\n_IS_TORCHAUDIO_EXT_AVAILABLE = _load_lib("_torchaudio")\n',
    replacement=(
        f"\ntry:  # {MARKER}: the CUDA build's extension cannot load next to CPU torch\n"
        '    _IS_TORCHAUDIO_EXT_AVAILABLE = _load_lib("_torchaudio")\n'
        f"except OSError:  # {MARKER}\n"
        "    _IS_TORCHAUDIO_EXT_AVAILABLE = False\n"
    ),
)


def apply_text_patch(text: str, patch: TextPatch) -> TextPatchResult:
    """Apply ``patch`` to ``text`` exactly once; report what was done.

    Raises EnvFixError when the original snippet is ambiguous (found more than once).
    """
    if patch.replacement in text:
        return TextPatchResult(text, EnvFixStatus.ALREADY_APPLIED)
    count = text.count(patch.original)
    if count == 0:
        return TextPatchResult(text, EnvFixStatus.NOT_NEEDED)
    if count > 1:
        raise EnvFixError(f"snippet found {count} times, refusing an ambiguous edit")
    return TextPatchResult(text.replace(patch.original, patch.replacement, 1), EnvFixStatus.APPLIED)


def apply_text_patches(text: str, patches: Sequence[TextPatch]) -> TextPatchResult:
    """Apply several patches; the combined status is the 'strongest' one seen."""
    statuses: list[EnvFixStatus] = []
    for patch in patches:
        result = apply_text_patch(text, patch)
        text = result.text
        statuses.append(result.status)
    if EnvFixStatus.APPLIED in statuses:
        return TextPatchResult(text, EnvFixStatus.APPLIED)
    if EnvFixStatus.ALREADY_APPLIED in statuses:
        return TextPatchResult(text, EnvFixStatus.ALREADY_APPLIED)
    return TextPatchResult(text, EnvFixStatus.NOT_NEEDED)


def package_dir(package: str) -> Path | None:
    """Directory of an installed top-level package, found without executing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _write_atomically(path: Path, text: str) -> None:
    mode = path.stat().st_mode
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def patch_installed_file(
    name: str, package: str, relative: str, patches: Sequence[TextPatch]
) -> EnvFix:
    """Apply ``patches`` to ``<package dir>/<relative>`` of the running interpreter's install."""
    root = package_dir(package)
    if root is None:
        return EnvFix(name=name, status=EnvFixStatus.NOT_NEEDED, detail=f"{package} not installed")
    path = root / relative
    if not path.is_file():
        return EnvFix(name=name, status=EnvFixStatus.NOT_NEEDED, detail=f"{path} does not exist")
    try:
        result = apply_text_patches(path.read_text(encoding="utf-8"), patches)
    except EnvFixError as exc:
        raise EnvFixError(f"{name}: {path}: {exc}") from exc
    if result.status is EnvFixStatus.APPLIED:
        _write_atomically(path, result.text)
    detail = {
        EnvFixStatus.APPLIED: f"patched {path}",
        EnvFixStatus.ALREADY_APPLIED: f"{path} already carries the guard",
        EnvFixStatus.NOT_NEEDED: f"{path} has no unguarded snippet to patch",
    }[result.status]
    return EnvFix(name=name, status=result.status, detail=detail)


def fix_torchvision_fake_nms() -> EnvFix:
    return patch_installed_file(
        "torchvision-nms-meta-guard",
        "torchvision",
        "_meta_registrations.py",
        TORCHVISION_FAKE_NMS_PATCHES,
    )


def fix_torchaudio_extension() -> EnvFix:
    return patch_installed_file(
        "torchaudio-extension-oserror-guard",
        "torchaudio",
        "_extension/__init__.py",
        (TORCHAUDIO_EXTENSION_PATCH,),
    )


def _distribution_installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def remove_torchcodec(python: Path | None = None) -> EnvFix:
    """Uninstall torchcodec unless it actually imports here (then it is left alone)."""
    name = "remove-torchcodec"
    if not _distribution_installed("torchcodec"):
        return EnvFix(name=name, status=EnvFixStatus.NOT_NEEDED, detail="torchcodec not installed")
    interpreter = str(python or sys.executable)
    probe = subprocess.run(
        [interpreter, "-c", "import torchcodec.decoders"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode == 0:
        return EnvFix(name=name, status=EnvFixStatus.NOT_NEEDED, detail="torchcodec imports here")
    removal = subprocess.run(
        [interpreter, "-m", "pip", "uninstall", "--yes", "torchcodec"],
        capture_output=True,
        text=True,
        check=False,
    )
    if removal.returncode != 0:
        raise EnvFixError(f"{name}: pip uninstall failed: {removal.stderr.strip()[-500:]}")
    last_error = probe.stderr.strip().splitlines()[-1:] or ["<no stderr>"]
    return EnvFix(
        name=name,
        status=EnvFixStatus.APPLIED,
        detail=f"uninstalled torchcodec (import failed with: {last_error[0][:200]})",
    )


def apply_environment_fixes() -> list[EnvFix]:
    """Apply all three fixes to the running interpreter's environment; safe to repeat."""
    return [fix_torchvision_fake_nms(), fix_torchaudio_extension(), remove_torchcodec()]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m omniqual.deploy.embedded.envfix``; 0 on success, 1 on error."""
    del argv
    logging.basicConfig(level=logging.INFO, format="%(levelname)s envfix: %(message)s")
    try:
        fixes = apply_environment_fixes()
    except (EnvFixError, OSError) as exc:
        logger.error("environment fix failed: %s", exc)
        return 1
    for fix in fixes:
        logger.info("%s: %s (%s)", fix.name, fix.status.value, fix.detail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
