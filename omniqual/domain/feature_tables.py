"""How vLLM-Omni's diffusion feature tables map onto matrix axes: the loaded form of
``matrices/vllm-omni-features.yaml`` (read by ``omniqual.specs.feature_tables``).

A column is one feature of the upstream tables, realized by a set of values on one axis; a
section is one modality table (ImageGen, VideoGen, AudioGen), holding the models that have rows
of its tasks; ``models`` maps the names the upstream document uses to matrix models. Nothing
here holds a state: every cell is derived from compiled rows (``omniqual.report.support_tables``).
"""

import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def label_key(text: str) -> str:
    """A column or section label as compared: emoji, punctuation, spacing and case dropped
    ("⚡Cache-DiT" and "cache dit" compare equal)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _NOT_WORD.sub("", folded)


@dataclass(frozen=True, slots=True)
class FeatureColumn:
    """One feature: rows whose ``axis`` holds one of ``values`` use it, or, for a feature a gate
    qualifies on a row's own server (per-request LoRA: no axis, the request carries it), rows
    that require ``gate``. Neither: nothing in the matrix can measure it, so its cells are never
    anything but not verified."""

    label: str
    axis: str | None
    values: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    gate: str | None = None

    def used_by(self, axes: Mapping[str, str], gates: Collection[str] = ()) -> bool:
        if self.gate is not None:
            return self.gate in gates
        return self.axis is not None and axes.get(self.axis) in self.values

    def named(self, text: str) -> bool:
        key = label_key(text)
        return bool(key) and any(label_key(n) == key for n in (self.label, *self.aliases))


@dataclass(frozen=True, slots=True)
class ModalitySection:
    name: str
    tasks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FeatureTableMap:
    """The whole mapping: model-table columns, the pairwise table's features, doc model names."""

    sections: tuple[ModalitySection, ...]
    columns: tuple[FeatureColumn, ...]
    pairs: tuple[FeatureColumn, ...]
    models: tuple[tuple[str, str], ...]
    """(name in the document, matrix model), in declared order."""
    source: str = ""

    def doc_name(self, model: str) -> str:
        """The first document name declared for ``model``; the model itself when none is."""
        return next((doc for doc, m in self.models if m == model), model)

    def matrix_model(self, doc_name: str) -> str | None:
        """The matrix model a document name maps to; None when the mapping does not declare it
        (bold, links and spacing around the name are the caller's to strip)."""
        wanted = " ".join(doc_name.split()).casefold()
        return next((m for doc, m in self.models if doc.casefold() == wanted), None)

    def section(self, heading: str) -> ModalitySection | None:
        key = label_key(heading)
        return next((s for s in self.sections if label_key(s.name) == key), None)


def column_named(columns: tuple[FeatureColumn, ...], text: str) -> FeatureColumn | None:
    return next((c for c in columns if c.named(text)), None)
