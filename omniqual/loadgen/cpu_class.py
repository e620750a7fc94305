"""The CPU class of the measuring host: the vendor and the instruction-set extensions that decide
which kernels a server's libraries pick.

A perf baseline is carried from one host to another by the reference workload's ratio
(:mod:`omniqual.loadgen.host_speed`), and that ratio only stands for the server where both hosts
run the same kernels. Across CPU classes they do not: MKL and oneDNN choose AVX-512 or AMX code
on a Sapphire Rapids guest whatever ``ONEDNN_MAX_CPU_ISA`` says for the rest, and none of it on
an AVX2 part, so a capped server ran faster on the Intel guest than on the AMD one that set the
embedded baseline while the reference workload read the same on both; a 30 % slower build then
passed. A baseline therefore judges only runs on its own CPU class. The class is read from
``/proc/cpuinfo`` (Linux); elsewhere it is unknown, and a probed baseline cannot judge there.
"""

import platform
import re
from pathlib import Path

KERNEL_FLAGS = ("amx_tile", "avx512_bf16", "avx512f", "avx2")
"""The flags that change the CPU kernels of torch, MKL, oneDNN and OpenBLAS (best first)."""
CPUINFO = Path("/proc/cpuinfo")


def cpu_class_of(cpuinfo: str, machine: str) -> str | None:
    """``<vendor> <machine> <kernel flags...>`` from a ``/proc/cpuinfo`` text, or None when it
    names no vendor (a format this reader does not know)."""
    vendor = re.search(r"^vendor_id\s*:\s*(\S+)", cpuinfo, re.MULTILINE)
    flags = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    if vendor is None:
        return None
    present = set(flags.group(1).split()) if flags else set()
    kept = [flag for flag in KERNEL_FLAGS if flag in present]
    return " ".join([vendor.group(1), machine, *kept])


def host_cpu_class() -> str | None:
    """This host's CPU class, or None where ``/proc/cpuinfo`` is not readable."""
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return cpu_class_of(text, platform.machine())

