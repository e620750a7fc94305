"""How this host's CPU computes: torch's dispatch capability, the numeric cpuinfo flags, and
whether bf16 is native or emulated, measured.

Without AVX512-BF16 or AMX, torch emulates bf16 arithmetic: on an AVX2-only CPU a bf16 matmul
runs 10-30x slower than the same one in fp32, so every bf16 request of a CPU target is that
much slower. The probe runs in a child interpreter (torch is never imported by the harness
itself) with this process's environment, so ISA caps (``ATEN_CPU_CAPABILITY``,
``ONEDNN_MAX_CPU_ISA``) act on it as they act on a server launched from here."""

import functools
import importlib.util
import json
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Literal

from omniqual.domain.run import CpuNumerics

logger = logging.getLogger(__name__)

NUMERIC_FLAGS = (
    "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16",
    # aarch64 Features
    "asimd", "fphp", "asimdhp", "sve", "sve2", "bf16", "i8mm",
)  # fmt: skip
CAP_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")
EMULATED_AT = 3.0
"""A bf16 matmul this many times slower than fp32 is emulated (native: about 0.3-1.5x)."""
PROBE_TIMEOUT_S = 120.0

_PROBE = """
import json, time, torch
torch.set_num_threads(1)
a, b = torch.randn(512, 256), torch.randn(256, 256)
def best(x, y):
    x @ y
    times = []
    for _ in range(5):
        t = time.perf_counter(); x @ y; times.append(time.perf_counter() - t)
    return min(times)
fp32 = best(a, b)
bf16 = best(a.bfloat16(), b.bfloat16())
print(json.dumps({"capability": torch.backends.cpu.get_cpu_capability(), "ratio": bf16 / fp32}))
"""


def cpu_flags(cpuinfo: str | None = None) -> tuple[str, ...]:
    """The numeric flags the first CPU of /proc/cpuinfo lists (x86 ``flags``, arm ``Features``)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
                cpuinfo = handle.read()
        except OSError:
            return ()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            present = set(value.split())
            return tuple(f for f in NUMERIC_FLAGS if f in present)
    return ()


def caps_in_force(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {name: env[name] for name in CAP_VARIABLES if env.get(name)}


Bf16 = Literal["native", "emulated", "unknown"]


def classify(ratio: float | None, flags: tuple[str, ...], caps: Mapping[str, str]) -> Bf16:
    """native / emulated from the measured ratio; without one, from the flags and caps."""
    if ratio is not None:
        return "emulated" if ratio >= EMULATED_AT else "native"
    if not flags:
        return "unknown"
    capped = any(v.lower() in ("avx2", "default") for v in caps.values())
    native = {"avx512_bf16", "amx_bf16", "bf16"} & set(flags)
    return "native" if native and not capped else "emulated"


def measure(python: str | None = None) -> tuple[str | None, float | None]:
    """(torch's capability, bf16/fp32 ratio) from a child interpreter; (None, None) when torch
    is not importable there or the probe fails."""
    if python is None and importlib.util.find_spec("torch") is None:
        return None, None
    try:
        done = subprocess.run(
            [python or sys.executable, "-c", _PROBE], capture_output=True, text=True,
            timeout=PROBE_TIMEOUT_S, check=True,
        )  # fmt: skip
        found = json.loads(done.stdout.strip().splitlines()[-1])
        return str(found["capability"]), round(float(found["ratio"]), 2)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError) as exc:
        logger.debug("CPU numerics probe failed: %s", exc)
        return None, None


@functools.cache
def probe_cpu_numerics() -> CpuNumerics:
    """This host's numerics, probed once per process."""
    flags, caps = cpu_flags(), caps_in_force()
    capability, ratio = measure()
    return CpuNumerics(
        capability=capability, flags=flags, bf16=classify(ratio, flags, caps),
        bf16_slowdown=ratio, caps=caps,
    )  # fmt: skip
