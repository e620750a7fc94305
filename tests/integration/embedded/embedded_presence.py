"""Whether the live embedded target is here, and what a test that needs it does when it is not.

Outside CI a missing target skips the live tests and says why. In CI (``CI`` set to true, as
hosted runners do, or ``OMNIQUAL_REQUIRE_EMBEDDED=1``, set by ``.ci/run``) it fails them: CI
installs the target (``make setup``), so a missing one is a broken set-up, and a skip there
would leave the run green without a single live test.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

VLLM_BIN = Path(sys.executable).parent / "vllm"
INSTALL_HINT = "install it with .ci/install-embedded.sh (make setup)"


@dataclass(frozen=True, slots=True)
class Absence:
    """The embedded target is missing: fail (``required``) or skip, with ``reason``."""

    required: bool
    reason: str


def missing_embedded(vllm_bin: Path = VLLM_BIN) -> str | None:
    """What of the embedded target is missing here (None: all of it is installed)."""
    gone = [name for name in ("vllm_omni", "torch") if importlib.util.find_spec(name) is None]
    if not vllm_bin.exists():
        gone.append(f"the `vllm` executable ({vllm_bin})")
    return ", ".join(gone) or None


def required_here(env: Mapping[str, str]) -> bool:
    """CI providers set ``CI=true`` (some ``CI=1``); ``.ci/run`` sets OMNIQUAL_REQUIRE_EMBEDDED."""
    return env.get("CI", "").strip().lower() in ("true", "1", "yes") or (
        env.get("OMNIQUAL_REQUIRE_EMBEDDED") == "1"
    )


def absence(env: Mapping[str, str], missing: str | None) -> Absence | None:
    """None when nothing is missing; else whether to fail or skip, and the reason to give."""
    if missing is None:
        return None
    what = f"the embedded vLLM-Omni target is not installed here (missing: {missing}); "
    if required_here(env):
        return Absence(True, f"{what}CI requires it, so its live tests fail rather than skip: "
                             f"{INSTALL_HINT}")  # fmt: skip
    return Absence(False, what + INSTALL_HINT)
