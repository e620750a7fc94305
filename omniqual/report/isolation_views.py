"""The isolation gate's crossing table, as plain rows a template can place: one per request
per round (request, round, pattern, verdict, crossed with, differing settings), read from the
``effective["isolation"]["table"]`` a result recorded. Pure: no rendering, no files."""

from dataclasses import dataclass

from omniqual.domain.result import GateResult
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
