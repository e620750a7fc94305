"""Audit a hand-written feature-table document against compiled evidence: each claimed cell
next to the cell the evidence makes (``support_cells``), on each hardware it is checked on.

Verdicts: a ✅ the evidence contradicts (a covering row of the feature was refused, or failed a
gate it requires, whatever other rows passed), a bare ✅ (no qualifier, no footnote) on a cell the
evidence limits, a ✅ nothing verifies, a ❌ on a feature a row passed, agreement, a ❌ the
evidence does not decide, and a ❓ the evidence has since decided. Tables,
columns, models and sections the mapping does not declare are named, never matched by likeness.
The audit fails on a contradicted ✅ and on a bare ✅ the evidence does not back in full (a
limited cell, or one nothing verifies): a qualifier or a footnote is what a bound needs (G8-05).
"""

from dataclasses import dataclass
from enum import StrEnum

from omniqual.domain.feature_tables import (
    FeatureColumn,
    FeatureTableMap,
    ModalitySection,
    column_named,
)
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState
from omniqual.report.claims_markdown import Claim, ClaimCell, ClaimTable, ParsedClaims
from omniqual.report.support_cells import FeatureCell, covering_rows, derive_cell
from omniqual.report.support_tables import hardware_values


class Verdict(StrEnum):
    CONTRADICTED = "contradicted"
    LIMITATION_OMITTED = "claimed without its limitation"
    UNVERIFIED = "unverified"
    REFUSAL_DISPROVED = "claimed unsupported, but passed"
    AGREES = "agrees"
    UNDECIDED = "claimed unsupported, not decided by the evidence"
    BEHIND = "claimed not verified, but the evidence decides"


PASSED = (CellState.VALIDATED, CellState.LIMITED)


def verdict(claim: Claim, cell: FeatureCell, *, qualified: bool = False) -> Verdict:
    """``qualified``: the claim carries a qualifier or a footnote. Which bound a footnote states
    is prose no parser can hold to the evidence's limitation; its presence is what can be
    checked, and a bare ✅ on a limited cell is the claim that hides the bound."""
    if claim is Claim.SUPPORTED:
        if cell.state is CellState.UNSUPPORTED or (
            cell.state is CellState.NOT_TESTED and cell.failed_gates
        ):
            return Verdict.CONTRADICTED
        if cell.state is CellState.LIMITED and not qualified:
            return Verdict.LIMITATION_OMITTED
        return Verdict.AGREES if cell.state in PASSED else Verdict.UNVERIFIED
    if claim is Claim.UNSUPPORTED:
        if cell.state in PASSED:
            return Verdict.REFUSAL_DISPROVED
        return Verdict.AGREES if cell.state is CellState.UNSUPPORTED else Verdict.UNDECIDED
    return Verdict.AGREES if cell.state is CellState.NOT_TESTED else Verdict.BEHIND


@dataclass(frozen=True, slots=True)
class Finding:
    table: str
    line: int
    row: str
    column: str
    hardware: str
    claim: Claim
    text: str
    cell: FeatureCell
    verdict: Verdict
    qualified: bool = False
    """The claim carries a qualifier or a footnote."""

    @property
    def bare_unbacked(self) -> bool:
        """A bare ✅ the evidence does not back in full: on a limited cell (its bound hidden)
        or on one nothing verifies (G8-05)."""
        hidden = self.verdict is Verdict.LIMITATION_OMITTED
        return hidden or (self.verdict is Verdict.UNVERIFIED and not self.qualified
                          and self.claim is Claim.SUPPORTED)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ClaimsAudit:
    findings: tuple[Finding, ...]
    unmapped: tuple[str, ...]
    """Tables, columns, models and sections not read, by name, and parse problems."""

    @property
    def contradicted(self) -> bool:
        return any(f.verdict is Verdict.CONTRADICTED for f in self.findings)

    @property
    def hides_limits(self) -> bool:
        """A bare ✅ that hides a limitation or claims what nothing verifies."""
        return any(f.bare_unbacked for f in self.findings)


def _split_heading(
    heading: str, mapping: FeatureTableMap
) -> tuple[str, str | None]:
    """("ImageGen", None) or, for a generated heading "ImageGen on H", ("ImageGen", "H")."""
    if mapping.section(heading) is None and " on " in heading:
        name, hardware = heading.rsplit(" on ", 1)
        return name, hardware.strip()
    return heading, None


@dataclass(slots=True)
class _Auditor:
    compiled: CompiledMatrix
    mapping: FeatureTableMap
    hardware: tuple[str, ...]
    findings: list[Finding]
    unmapped: list[str]

    def on(self, table: ClaimTable) -> tuple[str, ...]:
        _, named = _split_heading(table.heading, self.mapping)
        if named is None:
            return self.hardware
        if named not in hardware_values(self.compiled):
            self.unmapped.append(f"{table.name} (line {table.line}): the matrix has no rows on "
                                 f"hardware {named!r}; not audited")  # fmt: skip
            return ()
        if named not in self.hardware:
            self.unmapped.append(f"{table.name} (line {table.line}) speaks for {named!r}, "
                                 "outside the hardware asked for; not audited")  # fmt: skip
            return ()
        return (named,)

    def models(self, table: ClaimTable) -> None:
        name, _ = _split_heading(table.heading, self.mapping)
        section = self.mapping.section(name)
        if section is None:
            known = ", ".join(s.name for s in self.mapping.sections)
            self.unmapped.append(f"{table.name} (line {table.line}): no section named {name!r} "
                                 f"in {self.mapping.source} ({known}); not audited")  # fmt: skip
            return
        hardware = self.on(table)
        self._unknown_columns(table, self.mapping.columns)
        for row in table.rows:
            model = self.mapping.matrix_model(row.name)
            if model is None:
                self.unmapped.append(f"{table.name}: model {row.name!r} (line {row.line}) "
                                     f"is not under models: in {self.mapping.source}")  # fmt: skip
                continue
            for cell in row.cells:
                column = column_named(self.mapping.columns, cell.column)
                if column is None or cell.claim is None:
                    continue
                for h in hardware:
                    derived = self._model_cell(model, column.label, section, h)
                    self._add(table, row.name, row.line, cell, h, derived)

    def _model_cell(self, model: str, label: str, section: ModalitySection, h: str) -> FeatureCell:
        rows = covering_rows(self.compiled.rows, self.mapping.columns, frozenset({label}),
                             hardware=h, model=model, tasks=section.tasks)  # fmt: skip
        return derive_cell(label, rows)

    def pairs(self, table: ClaimTable) -> None:
        hardware = self.on(table)
        self._unknown_columns(table, self.mapping.pairs)
        for row in table.rows:
            first = column_named(self.mapping.pairs, row.name)
            if first is None:
                self.unmapped.append(f"{table.name}: feature {row.name!r} (line {row.line}) "
                                     f"is not under compatibility: in "
                                     f"{self.mapping.source}")  # fmt: skip
                continue
            for cell in row.cells:
                second = column_named(self.mapping.pairs, cell.column)
                if second is None or second is first or cell.claim is None:
                    continue
                pair = frozenset({first.label, second.label})
                for h in hardware:
                    rows = covering_rows(self.compiled.rows, self.mapping.pairs, pair, hardware=h)
                    derived = derive_cell(f"{first.label} + {second.label}", rows)
                    self._add(table, row.name, row.line, cell, h, derived)

    def _unknown_columns(self, table: ClaimTable, columns: tuple[FeatureColumn, ...]) -> None:
        for name in table.columns[1:]:
            if column_named(columns, name) is None:
                self.unmapped.append(f"{table.name}: column {name!r} maps to no feature in "
                                     f"{self.mapping.source}; its cells not audited")  # fmt: skip

    def _add(self, table: ClaimTable, row: str, line: int, claimed: ClaimCell, hardware: str,
             cell: FeatureCell) -> None:  # fmt: skip
        assert claimed.claim is not None
        said = verdict(claimed.claim, cell, qualified=claimed.qualified)
        self.findings.append(Finding(table.heading, line, row, claimed.column, hardware,
                                     claimed.claim, claimed.text, cell, said,
                                     claimed.qualified))  # fmt: skip


def audit_claims(
    parsed: ParsedClaims,
    compiled: CompiledMatrix,
    mapping: FeatureTableMap,
    hardware: str | None = None,
) -> ClaimsAudit:
    """Every readable claim of ``parsed`` against ``compiled``, on ``hardware`` (default: each
    hardware the matrix has rows on, unless a table's heading names one)."""
    chosen = (hardware,) if hardware is not None else hardware_values(compiled)
    auditor = _Auditor(compiled, mapping, chosen, [], [str(p) for p in parsed.problems])
    for table in parsed.tables:
        if table.kind == "models":
            auditor.models(table)
        elif table.kind == "pairs":
            auditor.pairs(table)
        else:
            columns = ", ".join(table.columns)
            auditor.unmapped.append(f"{table.name} (line {table.line}, columns {columns}) is not "
                                    "a support table (first column neither 'Model' nor empty); "
                                    "not audited")  # fmt: skip
    return ClaimsAudit(tuple(auditor.findings), tuple(auditor.unmapped))


ORDER = (
    Verdict.CONTRADICTED, Verdict.LIMITATION_OMITTED, Verdict.UNVERIFIED,
    Verdict.REFUSAL_DISPROVED, Verdict.BEHIND, Verdict.UNDECIDED, Verdict.AGREES,
)  # fmt: skip


def _evidence(cell: FeatureCell) -> str:
    said = f"evidence: {cell.state.value}"
    if cell.failed_gates:
        said += f", required gate {', '.join(cell.failed_gates)} failed"
    if cell.note:
        said += f" ({cell.note})"
    if cell.link:
        said += f" [{cell.link}]"
    elif not cell.covering:
        said += " (no row covers it)"
    return said


def render_finding(f: Finding) -> str:
    """One audited cell: where the claim is, what it claims, what the evidence says."""
    where = f"{f.table or '(no heading)'}, {f.row}, {f.column} on {f.hardware}"
    return f"line {f.line}: {where}: claimed {f.text}; {_evidence(f.cell)}"


def render_audit(audit: ClaimsAudit) -> str:
    """The audit as plain text: findings grouped by verdict, then what was not read."""
    lines: list[str] = []
    for kind in ORDER:
        found = [f for f in audit.findings if f.verdict is kind]
        if not found:
            continue
        lines += [f"{kind.value} ({len(found)}):"]
        lines += [f"  {render_finding(f)}" for f in found]
    if audit.unmapped:
        lines += [f"not mapped ({len(audit.unmapped)}):", *(f"  {u}" for u in audit.unmapped)]
    counts = ", ".join(
        f"{sum(f.verdict is kind for f in audit.findings)} {kind.value}" for kind in ORDER
    )
    lines.append(f"{len(audit.findings)} cells audited: {counts}")
    return "\n".join(lines) + "\n"
