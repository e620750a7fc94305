"""The contract table: per endpoint and field, the limits the server accepted and the values it
rejected, read from the cases of the contract gates (``api_contract``, ``fails_fast``).

A case is *accepted* when the server answered 2xx, *rejected* when it answered 4xx, and listed
apart when the answer is not what the contract expects (a declared deviation or a failure): the
reader sees at once which boundary holds and which does not. Each row links its result.

Rows whose contract results read the same, line for line, share one table part: it is shown
once and names every row it covers (its link is the first row's record).
"""

from collections.abc import Iterable

from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.blocks import Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

_HEADERS = ("Gate", "Rows", "Endpoint", "Field", "Accepted (2xx)", "Rejected (4xx)",
            "Not as the contract says")  # fmt: skip


def _sent(case: CaseResult) -> str:
    return safe_text(case.sent) if case.sent is not None else case.id.rsplit("/", 1)[-1]


def _off_contract(case: CaseResult) -> bool:
    return case.deviation or case.outcome is not GateOutcome.PASSED


def _lines(r: GateResult) -> tuple[tuple[str, ...], ...]:
    """(endpoint, field, accepted, rejected, off-contract) per field the result's cases probe."""
    fields: dict[tuple[str, str], list[CaseResult]] = {}
    for case in r.cases:
        fields.setdefault((case.endpoint, case.field or "—"), []).append(case)
    lines = []
    for (endpoint, field), cases in fields.items():
        accepted = [
            _sent(c) for c in cases if c.observed_status.startswith("2") and not _off_contract(c)
        ]
        rejected = [
            f"{_sent(c)} → {c.observed_status}"
            for c in cases
            if c.observed_status.startswith("4") and not _off_contract(c)
        ]
        off = [f"{_sent(c)}: expected {c.expected_status}, observed {c.observed_status}"
               + (" (declared deviation)" if c.deviation else f" ({c.outcome.value})")
               for c in cases if _off_contract(c)]  # fmt: skip
        other = [
            f"{_sent(c)} → {c.observed_status}"
            for c in cases
            if not _off_contract(c) and not c.observed_status.startswith(("2", "4"))
        ]
        lines.append((safe_text(endpoint), safe_text(field), "; ".join(accepted) or "—",
                      "; ".join(rejected + other) or "—", "; ".join(off) or "none"))  # fmt: skip
    return tuple(lines)


def contract_limits_table(
    results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks
) -> Table:
    shared: dict[tuple[str, tuple[tuple[str, ...], ...]], list[GateResult]] = {}
    for r in results:
        shared.setdefault((r.gate_id, _lines(r)), []).append(r)
    rows: list[tuple[str, ...]] = []
    hrefs: list[str] = []
    for (gate, lines), covered in shared.items():
        names = ", ".join(dict.fromkeys(row_label(labels, r.row) for r in covered))
        for line in lines:
            rows.append((gate, names, *line))
            hrefs.append(links.result(covered[0].run_id, covered[0].result_id))
    title = "Contract table: limits accepted and rejected"
    note = ""
    if any(len(covered) > 1 for covered in shared.values()):
        note = ("Rows whose contract results read the same are shown once, naming every row "
                "they cover; the link is the first row's record.")  # fmt: skip
    return Table(title, _HEADERS, tuple(rows), links=tuple(hrefs), note=note)
