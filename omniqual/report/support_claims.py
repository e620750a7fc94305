"""The "Support claims" section of a PR report, built from the compiled matrix: vLLM-Omni's
support table for each model under qualification (a model with a recorded result on any of its
rows), on each hardware it was measured on, and, given a hand-written table, the audit's
contradictions of it first."""

from collections.abc import Sequence

from omniqual.domain.feature_tables import FeatureTableMap
from omniqual.domain.matrix import CompiledMatrix
from omniqual.report.claims_audit import ClaimsAudit, Verdict, render_finding
from omniqual.report.support_claims_view import SupportClaimsView
from omniqual.report.support_tables import model_support_table


def models_under_qualification(compiled: CompiledMatrix) -> tuple[tuple[str, str], ...]:
    """(model, hardware) of every row with a recorded gate outcome, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for row in compiled.rows:
        model, hardware = row.axes.get("model"), row.axes.get("hardware")
        if row.gate_outcomes and model and hardware:
            seen.setdefault((model, hardware), None)
    return tuple(seen)


def support_claims_view(
    compiled: CompiledMatrix, mapping: FeatureTableMap, audit: ClaimsAudit | None = None
) -> SupportClaimsView | None:
    """None when no model has a result (nothing to claim for)."""
    tables = [model_support_table(compiled, mapping, model, hardware)
              for model, hardware in models_under_qualification(compiled)]  # fmt: skip
    tables = [t for t in tables if t.sections]
    if not tables:
        return None
    columns = tables[0].columns
    rows: list[tuple[str, ...]] = []
    for table in tables:
        for section in table.sections:
            cells = tuple(_cell_text(c.symbol, c.note) for c in section.cells)
            rows.append((table.label, f"{section.section} on {table.hardware}", *cells))
    contradictions: Sequence[str] = ()
    if audit is not None:
        contradictions = tuple(render_finding(f) for f in audit.findings
                               if f.verdict is Verdict.CONTRADICTED)  # fmt: skip
    return SupportClaimsView(
        markdown_table="\n".join(t.markdown for t in tables),
        html_headers=("Model", "Table", *columns),
        html_rows=tuple(rows),
        contradictions=tuple(contradictions),
    )


def _cell_text(symbol: str, note: str) -> str:
    # A ❓ carries a note only when a covering row failed: that failure is the finding.
    return f"{symbol} {note}" if note else symbol
