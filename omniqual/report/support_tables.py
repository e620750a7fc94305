"""vLLM-Omni's diffusion support tables, generated from a compiled matrix: per hardware, one
table per modality section (a row per model, a column per feature) and the pairwise feature
compatibility table, in the shape of the project's hand-written ``diffusion_features.md``.

✅ stands only where every decided covering row passed (validated, or limited with a numbered note
stating the bound); ❌ where a covering row was proven refused, with the refusal in a note; ❓
everywhere else, with a note naming the failure when a covering row failed a required gate. Every
✅ and ❌ links the evidence of the row it stands on, and every heading names the hardware its
cells were measured on (cells are derived in ``support_cells``).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.domain.feature_tables import FeatureColumn, FeatureTableMap, ModalitySection
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.support_cells import FeatureCell, covering_rows, derive_cell
from omniqual.report.templates import markdown_escape

LEGEND = (
    "- ✅: validated on this hardware: every measured configuration of the feature passed every "
    "gate it requires; with a note number, limited: it works within the bound the note states",
    "- ❌: refused early with an actionable error (in the configuration the note names); the "
    "note quotes the refusal",
    "- ❓: not verified yet and not recommended: no adequate evidence on this hardware, or a "
    "configuration failed a required gate (the note names it)",
)


@dataclass(frozen=True, slots=True)
class ModelSection:
    """One model's row of one modality table."""

    section: str
    cells: tuple[FeatureCell, ...]


@dataclass(frozen=True, slots=True)
class ModelSupportTable:
    """Every modality-table row of one model on one hardware, structured and as Markdown."""

    model: str
    label: str
    hardware: str
    columns: tuple[str, ...]
    sections: tuple[ModelSection, ...]
    markdown: str


def hardware_values(compiled: CompiledMatrix) -> tuple[str, ...]:
    return tuple(sorted({row.axes["hardware"] for row in compiled.rows if "hardware" in row.axes}))


def chosen_hardware(compiled: CompiledMatrix, hardware: str | None) -> tuple[str, ...]:
    known = hardware_values(compiled)
    if hardware is None:
        return known
    if hardware not in known:
        listed = ", ".join(known) or "none"
        raise ValueError(f"no row of {compiled.name} is on hardware {hardware!r} ({listed})")
    return (hardware,)


def section_models(
    rows: Sequence[CompiledRow], mapping: FeatureTableMap, section: ModalitySection, hardware: str
) -> tuple[str, ...]:
    """Models with a row of the section's tasks on ``hardware``: declared ones first."""
    found = {
        row.axes.get("model", "")
        for row in rows
        if row.axes.get("hardware") == hardware and row.axes.get("task") in section.tasks
    }
    declared = [m for _, m in mapping.models if m in found]
    ordered = list(dict.fromkeys(declared)) + sorted(found - set(declared))
    return tuple(m for m in ordered if m)


def model_cells(
    rows: Sequence[CompiledRow], mapping: FeatureTableMap, model: str, section: ModalitySection,
    hardware: str,
) -> tuple[FeatureCell, ...]:  # fmt: skip
    cells = []
    for column in mapping.columns:
        covering = covering_rows(rows, mapping.columns, frozenset({column.label}),
                                 hardware=hardware, model=model, tasks=section.tasks)  # fmt: skip
        cells.append(derive_cell(column.label, covering))
    return tuple(cells)


def pair_cell(
    rows: Sequence[CompiledRow], pairs: Sequence[FeatureColumn], a: str, b: str, hardware: str
) -> FeatureCell:
    return derive_cell(f"{a} + {b}", covering_rows(rows, pairs, frozenset({a, b}),
                                                   hardware=hardware))  # fmt: skip


def _target(link: str) -> str:
    if any(ch in link for ch in " ()<>"):
        return "<" + link.replace("<", "%3C").replace(">", "%3E") + ">"
    return link


def cell_markdown(cell: FeatureCell, notes: list[str], title: str = "") -> str:
    """The cell's symbol, linked to its evidence; a note (numbered on from ``notes``, which it
    is appended to) when the cell is limited, refused or failed verification."""
    text = cell.symbol
    if cell.link and cell.state is not CellState.NOT_TESTED:
        titled = f' "{markdown_escape(title).replace(chr(34), "")}"' if title else ""
        text = f"[{text}]({_target(cell.link)}{titled})"
    if cell.note:
        notes.append(cell.note)
        text += f"<sup>{len(notes)}</sup>"
    return text


def table_header(first: str, labels: Sequence[str]) -> list[str]:
    return [
        "| " + " | ".join((first, *labels)) + " |",
        "|" + "|".join(("---", *(":---:" for _ in labels))) + "|",
    ]


def notes_markdown(notes: list[str], start: int) -> list[str]:
    if len(notes) <= start:
        return []
    listed = [f"{n}. {markdown_escape(text)}" for n, text in enumerate(notes, 1)][start:]
    return ["", "Notes:", "", *listed]


def model_row_markdown(label: str, cells: Sequence[FeatureCell], notes: list[str]) -> str:
    return "| " + " | ".join((f"**{label}**", *(cell_markdown(c, notes) for c in cells))) + " |"


def model_support_table(
    compiled: CompiledMatrix, mapping: FeatureTableMap, model: str, hardware: str
) -> ModelSupportTable:
    """One model's cells in every modality section it has rows in, on ``hardware``."""
    chosen_hardware(compiled, hardware)
    label = mapping.doc_name(model)
    labels = tuple(c.label for c in mapping.columns)
    sections: list[ModelSection] = []
    lines: list[str] = []
    notes: list[str] = []
    for section in mapping.sections:
        if model not in section_models(compiled.rows, mapping, section, hardware):
            continue
        cells = model_cells(compiled.rows, mapping, model, section, hardware)
        sections.append(ModelSection(section.name, cells))
        start = len(notes)
        lines += ["", f"### {section.name} on {hardware}", "", *table_header("Model", labels)]
        lines += [model_row_markdown(label, cells, notes), *notes_markdown(notes, start)]
    markdown = "\n".join(lines[1:]) + "\n" if lines else f"No row of {label} is on {hardware}.\n"
    return ModelSupportTable(model, label, hardware, labels, tuple(sections), markdown)
