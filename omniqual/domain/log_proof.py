"""What a launched server's own log shows it resolved for a row's axis, held to the row's value.

A row declares, say, ``attention_backend=sdpa``; vLLM-Omni logs the backend it resolved for each
attention role at start-up. Where the axis has a ``log_pattern`` and the row's value names what
the server calls it (``served_as``), every resolution in the log must be one of those names: a
server that resolved another backend for any role served another configuration, so a pass on it
is no evidence for the row (``invalid``, saying so; ``omniqual.engine.run.launch_logs``). A log
that shows no resolution proves nothing either way, and is recorded as such.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from omniqual.domain.axes import AxisCatalog, RowKey


@dataclass(frozen=True, slots=True)
class LogProof:
    """One axis of one row, as its server's log must show it."""

    axis: str
    declared: str
    pattern: str
    accepted: tuple[str, ...]

    def judge(self, log_text: str) -> "ProofReading":
        seen: dict[str, str] = {}
        for match in re.finditer(self.pattern, log_text, re.MULTILINE):
            groups = match.groupdict()
            part = groups.get("part") or "all"
            seen[part] = groups["name"]
        wrong = {part: name for part, name in seen.items() if name not in self.accepted}
        return ProofReading(self, seen, wrong)


@dataclass(frozen=True, slots=True)
class ProofReading:
    proof: LogProof
    seen: Mapping[str, str]
    """Part (role) -> the name the log resolved; the last resolution of each part wins."""
    wrong: Mapping[str, str]

    def reason(self) -> str | None:
        if not self.wrong:
            return None
        resolved = ", ".join(f"{name} for {part!r}" for part, name in sorted(self.wrong.items()))
        accepted = ", ".join(self.proof.accepted)
        return (
            f"{self.proof.axis}_not_served: the row declares {self.proof.axis}="
            f"{self.proof.declared} (served as {accepted}) and the server's log resolved "
            f"{resolved}: what this server showed is another configuration's, not the row's"
        )


def log_proofs(catalog: AxisCatalog, row: RowKey) -> tuple[LogProof, ...]:
    """The row's axes that its server's log can prove: a pattern and the value's names."""
    proofs: list[LogProof] = []
    for axis in catalog.axes:
        declared = row.get(axis.name)
        if axis.log_pattern is None or declared is None:
            continue
        value = next((v for v in axis.values if v.name == declared), None)
        if value is not None and value.served_as:
            proofs.append(LogProof(axis.name, declared, axis.log_pattern, value.served_as))
    return tuple(proofs)
