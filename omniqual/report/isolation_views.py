"""The isolation gate's crossing table, as plain rows a template can place: one per request
per round (request, round, pattern, verdict, crossed with, differing settings), read from the
``effective["isolation"]["table"]`` a result recorded, and the report blocks built from it (the
crossing table and how each round proved its requests met). Pure: no rendering, no files."""

from collections.abc import Iterable
from dataclasses import dataclass

from omniqual.domain.result import GateResult
from omniqual.report.blocks import Block, Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

KEY = "isolation"
HEADERS = ("Request", "Round", "Pattern", "Verdict", "Crossed with", "Differing settings")


@dataclass(frozen=True, slots=True)
class CrossingRow:
    request: str
    round: int
    pattern: str
    verdict: str
    crossed_with: str
    fields: str
    reason: str

    @property
    def cells(self) -> tuple[str, ...]:
        return (self.request, str(self.round), self.pattern, self.verdict, self.crossed_with,
                self.fields)  # fmt: skip


def crossing_rows(result: GateResult, *, failed_only: bool = False) -> tuple[CrossingRow, ...]:
    """The table of one isolation result, in recorded order (round, then send order); empty
    for another gate or a result that recorded none. ``failed_only`` keeps the failed cases."""
    block = result.effective.get(KEY)
    table = block.get("table") if isinstance(block, dict) else None
    rows: list[CrossingRow] = []
    for entry in table if isinstance(table, list) else []:
        if not isinstance(entry, dict):
            continue
        verdict = str(entry.get("verdict", ""))
        if failed_only and verdict != "failed":
            continue
        number = entry.get("round")
        fields = entry.get("fields")
        rows.append(CrossingRow(
            request=str(entry.get("request", "?")),
            round=number if isinstance(number, int) else 0,
            pattern=str(entry.get("pattern", "")),
            verdict=verdict,
            crossed_with=str(entry.get("crossed_with") or "—"),
            fields=", ".join(str(f) for f in fields) if isinstance(fields, list) and fields
            else "—",
            reason=safe_text(str(entry.get("reason") or "")),
        ))  # fmt: skip
    return tuple(rows)


def isolation_blocks(
    results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks
) -> tuple[Block, ...]:
    """Per isolation result: the rounds (pattern, whether and how its requests met) and the
    crossing table (every case when one failed, else the failed ones only, i.e. none)."""
    blocks: list[Block] = []
    for result in results:
        block = result.effective.get(KEY)
        if result.gate_kind != KEY or not isinstance(block, dict):
            continue
        label = row_label(labels, result.row)
        href = links.result(result.run_id, result.result_id)
        rounds = block.get("rounds")
        met = [
            (str(i + 1), str(r.get("pattern", "")), "yes" if r.get("met") else "no",
             safe_text(str(r.get("how") or "never met")))
            for i, r in enumerate(rounds if isinstance(rounds, list) else [])
            if isinstance(r, dict)
        ]  # fmt: skip
        if met:
            blocks.append(Table(f"Request isolation rounds: {label}",
                                ("Round", "Pattern", "Met in the server", "Proof"), tuple(met),
                                links=tuple(href for _ in met) if href else ()))  # fmt: skip
        rows = crossing_rows(result, failed_only=True)
        note = "" if rows else "every request got its own output, in order, with its own ids"
        crossing_links = tuple(href for _ in rows) if href else ()
        blocks.append(Table(f"Request isolation crossings: {label}", (*HEADERS, "Reason"),
                            tuple((*r.cells, r.reason) for r in rows), links=crossing_links,
                            note=note))  # fmt: skip
    return tuple(blocks)
