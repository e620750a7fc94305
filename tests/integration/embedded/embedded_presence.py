"""Whether the live embedded target is here, and what a test that needs it does when it is not.

Outside CI a missing target skips the live tests and says why. In CI (``CI`` set to true, as
hosted runners do, or ``OMNIQUAL_REQUIRE_EMBEDDED=1``, set by ``.ci/run``) it fails them: CI
installs the target (``make setup``), so a missing one is a broken set-up, and a skip there
would leave the run green without a single live test. The decision is the suite's one
(tests/requirements.py).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.requirements import require_or_skip

VLLM_BIN = Path(sys.executable).parent / "vllm"
INSTALL_HINT = "install it with .ci/install-embedded.sh (make setup)"
REQUIRE_VARIABLE = "OMNIQUAL_REQUIRE_EMBEDDED"


def missing_embedded(vllm_bin: Path = VLLM_BIN) -> str | None:
    """What of the embedded target is missing here (None: all of it is installed)."""
    gone = [name for name in ("vllm_omni", "torch") if importlib.util.find_spec(name) is None]
    if not vllm_bin.exists():
        gone.append(f"the `vllm` executable ({vllm_bin})")
    return ", ".join(gone) or None


def require_embedded(missing: str | None, env: Mapping[str, str] | None = None) -> None:
    """Return when nothing is missing; else skip, or fail where CI requires the target."""
    if missing is not None:
        require_or_skip(f"the embedded vLLM-Omni target (missing: {missing})", INSTALL_HINT,
                        require_variable=REQUIRE_VARIABLE, env=env)  # fmt: skip
