"""Load and check the gate specs in ``gates/*.yaml``."""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from omniqual.domain.axes import AxisCatalog, Selector
from omniqual.domain.gate import GateSpec
from omniqual.specs.source import SpecError, SpecProblem, YamlDocument, load_yaml, validate_document


@dataclass(frozen=True, slots=True)
class LoadedGate:
    spec: GateSpec
    path: Path
    sha256: str
    selector: Selector


def load_gates(directory: Path, catalog: AxisCatalog) -> Mapping[str, LoadedGate]:
    """Every gate spec directly in ``directory``; all problems are reported together."""
    problems: list[SpecProblem] = []
    gates: dict[str, LoadedGate] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            doc = load_yaml(path)
            spec = validate_document(doc, GateSpec)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        selector = _selector(doc, spec, catalog, problems)
        if spec.id in gates:
            problems.append(
                doc.problem(("id",), f"gate id {spec.id!r} already in {gates[spec.id].path}")
            )
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        gates[spec.id] = LoadedGate(spec, path, digest, selector or Selector(()))
    if problems:
        raise SpecError(problems)
    return gates


def _selector(
    doc: YamlDocument, spec: GateSpec, catalog: AxisCatalog, problems: list[SpecProblem]
) -> Selector | None:
    try:
        selector = Selector.parse(spec.applies_to)
    except ValueError as exc:
        problems.append(doc.problem(("applies_to",), str(exc)))
        return None
    for axis in selector.axes():
        if catalog.axis(axis) is None:
            problems.append(doc.problem(("applies_to",), f"unknown axis {axis!r}"))
    return selector
