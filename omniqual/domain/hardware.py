"""Whether a host can have produced evidence for a matrix row's ``hardware`` value.

A result counts for a row only if the host it was measured on is of the row's hardware class.
What is known of that host is what its run's environment fingerprint records, when the target
ran there (launched by omniqual; a URL deployment's host is not visible): the machine
architecture and the GPUs NVML listed (:class:`MeasuredOn`). The check is conservative: it
contradicts a hardware value only on those facts, and a value it cannot read (an open-ended
axis may hold any name) or a host it knows nothing of never contradicts.

Read values: ``cpu-<arch>-…`` (served on the CPU of a host of that architecture: the
machine ``<arch>``; a GPU beside it does not contradict) and ``<n>x-<gpu>-…`` (a GPU host:
some recorded GPU's name holds ``<gpu>`` as a word, ``1x-h200-141gb`` needs e.g. "NVIDIA
H200"). The core count, ISA and memory are not compared:
the embedded servers cap their ISA (see ``isa_caps``), so any x86_64 host measures the
``cpu-x86_64-2core-avx2`` class.
"""

import json
import re
from dataclasses import dataclass

from omniqual.domain.run import EnvironmentFingerprint

_ARCH = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}
_GPU_ROW = re.compile(r"(?P<count>\d+)x-(?P<gpu>[a-z0-9]+)(?:-.*)?")


def _arch(name: str) -> str:
    lowered = name.lower()
    return _ARCH.get(lowered, lowered)


@dataclass(frozen=True, slots=True)
class MeasuredOn:
    """The facts of a measuring host that a hardware value can contradict."""

    machine: str | None
    gpus: tuple[str, ...]
    """GPU names as NVML gave them; empty: none recorded."""

    def describe(self) -> str:
        where = self.machine or "an unknown architecture"
        if not self.gpus:
            return f"{where} with no GPU recorded"
        names = sorted(set(self.gpus))
        return f"{where} with {len(self.gpus)} GPU(s) ({', '.join(names)})"

    def encode(self) -> str:
        """One string, as a run digest keeps it per result."""
        return json.dumps({"machine": self.machine, "gpus": list(self.gpus)}, sort_keys=True)

    @classmethod
    def decode(cls, text: str) -> "MeasuredOn | None":
        """The encoded facts; None (unknown) for text that is not an encoding."""
        try:
            data = json.loads(text)
            machine, gpus = data["machine"], tuple(str(g) for g in data["gpus"])
        except (ValueError, KeyError, TypeError):
            return None
        return cls(machine if isinstance(machine, str) and machine else None, gpus)


def measured_on(fingerprint: EnvironmentFingerprint) -> MeasuredOn:
    return MeasuredOn(fingerprint.machine or None, tuple(g.name for g in fingerprint.gpus))


def contradiction(hardware: str | None, host: MeasuredOn | None) -> str | None:
    """Why ``host`` cannot have measured a row of ``hardware``, or None when it may have (or
    either side is unknown)."""
    if not hardware or host is None:
        return None
    value = hardware.lower()
    wrong = f"measured on {host.describe()}, not {hardware}"
    if value.startswith("cpu-"):
        arch = value.split("-")[1] if value.count("-") >= 1 else ""
        # A GPU beside the CPU does not contradict: the embedded target serves on the CPU
        # whatever else the host holds (its platform plugin is chosen, not detected).
        if arch and host.machine is not None and _arch(host.machine) != _arch(arch):
            return wrong
        return None
    found = _GPU_ROW.fullmatch(value)
    if found is None:
        return None
    word = re.compile(rf"(?<![a-z0-9]){re.escape(found['gpu'])}(?![a-z0-9])")
    if not any(word.search(name.lower()) for name in host.gpus):
        return wrong
    return None
