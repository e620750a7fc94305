"""The PR evidence checklist's routing: which check kind fills which section, which CI track a
section belongs to, the per-gate verdicts, and what an empty section says (the gate that would
fill it, on which rows)."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from omniqual.domain.gate import TRACK_CI_LEVELS, Track
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.blocks import NO_EVIDENCE, Table
from omniqual.report.evidence_blocks import REASONS_LIMIT, RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

SECTION_BY_KIND: Mapping[str, str] = {
    # Built-in check kinds (omniqual.checks.registry.BUILTIN).
    "api_contract": "contract",
    "fails_fast": "contract",
    "field_effect": "contract",
    "strict_load": "accuracy",
    "soak": "performance",
    "abort": "fault",
    "candidate_parity": "accuracy",
    "reference_parity": "accuracy",
    "offload_sweep": "performance",
    "isolation": "output",
    # Kinds the architecture plans; listed so their results land in the right section.
    "parity": "accuracy",
    "fp8_parity": "accuracy",
    "quality": "accuracy",
    "load": "performance",
    "benchmark": "performance",
    "output_contract": "output",
    "stage_accounting": "output",
    "transport": "output",
    "abort_fault": "fault",
    "fault_injection": "fault",
}
"""Check kind → checklist section; extend it when a new check kind is added."""

TRACK_BY_SECTION: Mapping[str, str] = {
    "contract": "function",
    "output": "function",
    "accuracy": "accuracy",
    "performance": "performance",
    "fault": "reliability",
}
"""The seed's four CI tracks (Function/Accuracy/Performance/Reliability) by checklist section."""
TRACKS = ("function", "accuracy", "performance", "reliability")


VERDICT_CELL = 100
"""A verdict cell quotes at most this many characters; longer or several reasons are counted
there and listed in full below the verdicts (``verdict_reasons``)."""
DEVIATION_PREFIX = "declared deviation"


def reasons_text(result: GateResult, limit: int = REASONS_LIMIT) -> str:
    """The reasons (or the error) of a result, bounded: a contract result may list hundreds."""
    if not result.reasons:
        return f"{result.error.type}: {safe_text(result.error.message)}" if result.error else "—"
    shown = safe_text("; ".join(result.reasons), limit=limit)
    return shown if len(result.reasons) == 1 else f"{len(result.reasons)} reasons: {shown}"


def _folded(result: GateResult) -> bool:
    """Its reasons do not fit a verdict cell whole."""
    return len(result.reasons) > 1 or any(len(r) > VERDICT_CELL for r in result.reasons)


def verdict_cell(result: GateResult) -> str:
    """A short reason for the verdict table: the one reason when it is short, else how many
    (how many of them declared deviations) and the start of the first."""
    if not _folded(result):
        return reasons_text(result, limit=VERDICT_CELL)
    count = len(result.reasons)
    deviations = sum(r.startswith(DEVIATION_PREFIX) for r in result.reasons)
    counted = f"{count} reason{'s' * (count != 1)}"
    if deviations:
        counted += f" ({deviations} declared deviation{'s' * (deviations != 1)})"
    first = safe_text(result.reasons[0], limit=VERDICT_CELL // 2)
    return f"{counted}, in full below; first: {first}"


def section_results(results: Iterable[GateResult], section: str) -> tuple[GateResult, ...]:
    return tuple(r for r in results if SECTION_BY_KIND.get(r.gate_kind, "other") == section)


def latest_results(results: Iterable[GateResult]) -> tuple[GateResult, ...]:
    """The latest result per (gate, row), in gate then row order."""
    latest: dict[tuple[str, str], GateResult] = {}
    for r in results:
        held = latest.get((r.gate_id, r.row))
        if held is None or (r.finished_at, r.result_id) >= (held.finished_at, held.result_id):
            latest[(r.gate_id, r.row)] = r
    return tuple(latest[k] for k in sorted(latest))


def _verdict_order(results: Iterable[GateResult], labels: RowLabels) -> list[GateResult]:
    order = {key: i for i, key in enumerate(labels)}
    return sorted(latest_results(results), key=lambda r: (r.gate_id, order.get(r.row, -1)))


def verdict_table(results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks) -> Table:
    """Per gate and row, the latest verdict with a short reason (the gates a PR closes or not)."""
    latest = _verdict_order(results, labels)
    rows = tuple(
        (r.gate_id, row_label(labels, r.row), r.outcome.value, verdict_cell(r),
         f"{r.run_id}/{r.result_id}")
        for r in latest
    )  # fmt: skip
    hrefs = tuple(links.result(r.run_id, r.result_id) for r in latest)
    headers = ("Gate", "Row", "Verdict", "Reasons", "Result")
    return Table("Per-gate verdicts (latest result per gate and row)", headers, rows, links=hrefs)


def verdict_reasons(
    results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks
) -> Table:
    """Every reason of the verdicts whose cell was shortened, one line per gate and reason; a
    reason several rows share word for word is one line naming them all (its link is the first
    row's record)."""
    lines: dict[tuple[str, str], list[str]] = {}
    hrefs: dict[tuple[str, str], str] = {}
    for r in _verdict_order(results, labels):
        if not _folded(r):
            continue
        for reason in r.reasons:
            key = (r.gate_id, safe_text(reason, limit=REASONS_LIMIT))
            lines.setdefault(key, []).append(row_label(labels, r.row))
            hrefs.setdefault(key, links.result(r.run_id, r.result_id))
    rows = tuple((gate, ", ".join(rows), reason) for (gate, reason), rows in lines.items())
    return Table("Reasons behind the verdicts, in full", ("Gate", "Rows", "Reason"), rows,
                 links=tuple(hrefs[k] for k in lines))  # fmt: skip


@dataclass(frozen=True, slots=True)
class GateDirectory:
    """What the report knows of the gates: each gate's check kind and the rows requiring it."""

    kinds: Mapping[str, str]
    rows_by_gate: Mapping[str, tuple[str, ...]]
    tracks: Mapping[str, str] = field(default_factory=dict)
    """Tracks declared in the gate specs (``GateSpec.track``)."""

    @classmethod
    def of(
        cls,
        matrix: CompiledMatrix,
        results: Iterable[GateResult],
        kinds: Mapping[str, str],
        tracks: Mapping[str, str] | None = None,
    ) -> "GateDirectory":
        known = dict(kinds)
        for r in results:
            known.setdefault(r.gate_id, r.gate_kind)
        rows: dict[str, list[str]] = {}
        for row in matrix.rows:
            for gate in row.required_gates:
                rows.setdefault(gate, []).append(row.key)
        return cls(known, {g: tuple(keys) for g, keys in rows.items()}, dict(tracks or {}))

    def track(self, gate: str) -> tuple[str, str]:
        """(track, how it is known): declared in the spec, else inferred from the check kind."""
        if gate in self.tracks:
            return self.tracks[gate], "declared"
        inferred = TRACK_BY_SECTION.get(SECTION_BY_KIND.get(self.kinds.get(gate, ""), ""), "")
        return inferred, "inferred from the check kind" if inferred else ""


def fill_note(section: str, gates: GateDirectory, labels: RowLabels) -> str:
    """``No evidence: run gate `soak` on rows #3, #5`` (or the check kinds, when no gate of the
    matrix fills the section)."""
    kinds = sorted(k for k, s in SECTION_BY_KIND.items() if s == section)
    wanted = sorted(g for g, k in gates.kinds.items() if k in kinds)
    parts = []
    for gate in wanted:
        rows = [row_label(labels, key) for key in gates.rows_by_gate.get(gate, ())]
        where = f" on rows {', '.join(rows)}" if rows else " (no row of this matrix requires it)"
        parts.append(f"gate `{gate}`{where}")
    if parts:
        return f"{NO_EVIDENCE}: run {'; '.join(parts)}"
    return (
        f"{NO_EVIDENCE}: no gate of this matrix fills this section; add a gate of kind "
        + " or ".join(f"`{k}`" for k in kinds)
        + " to the rows' `requires` and run it"
    )


def ci_tracks_table(
    results: Iterable[GateResult], gates: GateDirectory, labels: RowLabels
) -> Table:
    """Per CI track, the gates of this report in it (as declared, else by check kind), the CI
    levels that run it and the latest verdicts."""
    latest = latest_results(results)
    every = sorted(set(gates.kinds) | set(gates.rows_by_gate) | set(gates.tracks))
    rows = []
    for track in (*TRACKS, ""):
        names = [g for g in every if gates.track(g)[0] == track]
        if not names or (not track and not set(names) & set(gates.rows_by_gate)):
            continue
        verdicts = [r for r in latest if r.gate_id in names]
        passed = sum(r.outcome is GateOutcome.PASSED for r in verdicts)
        open_ = [f"{r.gate_id} {row_label(labels, r.row)}: {r.outcome.value}"
                 for r in verdicts if r.outcome is not GateOutcome.PASSED]  # fmt: skip
        unrun = sorted(
            f"{g} {row_label(labels, key)}"
            for g in names for key in gates.rows_by_gate.get(g, ())
            if not any(r.gate_id == g and r.row == key for r in verdicts)
        )  # fmt: skip
        levels = TRACK_CI_LEVELS.get(Track(track)) if track else None
        shown = [f"{g} ({gates.track(g)[1]})" if track else g for g in names]
        rows.append((
            track or "none (no track declared, check kind unknown or outside the checklist)",
            ", ".join(levels) if levels else "—", ", ".join(shown),
            f"{passed} of {len(verdicts)}", "; ".join(open_) or "none", "; ".join(unrun) or "none",
        ))  # fmt: skip
    headers = ("Track", "CI levels", "Gates", "Latest verdicts passed", "Not passed",
               "Required, never run")  # fmt: skip
    return Table("CI tracks of the gates in this report", headers, tuple(rows))


def gate_status(
    results: tuple[GateResult, ...], matrix: CompiledMatrix
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(gates closed, gates open): closed when the latest result on every row it ran on passed;
    open when required by the matrix or run here and not closed."""
    latest = {(r.gate_id, r.row): r for r in latest_results(results)}
    gates = {gate for row in matrix.rows for gate in row.required_gates} | {
        gate for gate, _ in latest
    }
    closed = {
        gate
        for gate in gates
        if any(g == gate for g, _ in latest)
        and all(r.outcome is GateOutcome.PASSED for (g, _), r in latest.items() if g == gate)
    }
    return tuple(sorted(closed)), tuple(sorted(gates - closed))
