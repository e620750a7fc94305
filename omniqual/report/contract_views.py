"""The contract table: per endpoint and field, the limits the server accepted and the values it
rejected, read from the cases of the contract gates (``api_contract``, ``fails_fast``).

A case is *accepted* when the server answered 2xx, *rejected* when it answered 4xx, and listed
apart when the answer is not what the contract expects (a declared deviation or a failure): the
reader sees at once which boundary holds and which does not. Each row links its result.
"""

from collections.abc import Iterable

from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.report.blocks import Table
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text

_HEADERS = ("Gate", "Row", "Endpoint", "Field", "Accepted (2xx)", "Rejected (4xx)",
            "Not as the contract says")  # fmt: skip


def _sent(case: CaseResult) -> str:
    return safe_text(case.sent) if case.sent is not None else case.id.rsplit("/", 1)[-1]


def _off_contract(case: CaseResult) -> bool:
    return case.deviation or case.outcome is not GateOutcome.PASSED


def contract_limits_table(
    results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks
) -> Table:
    rows: list[tuple[str, ...]] = []
    hrefs: list[str] = []
    for r in results:
        fields: dict[tuple[str, str], list[CaseResult]] = {}
        for case in r.cases:
            fields.setdefault((case.endpoint, case.field or "—"), []).append(case)
        for (endpoint, field), cases in fields.items():
            accepted = [
                _sent(c)
                for c in cases
                if c.observed_status.startswith("2") and not _off_contract(c)
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
            rows.append((
                r.gate_id, row_label(labels, r.row), safe_text(endpoint), safe_text(field),
                "; ".join(accepted) or "—", "; ".join(rejected + other) or "—",
                "; ".join(off) or "none",
            ))  # fmt: skip
            hrefs.append(links.result(r.run_id, r.result_id))
    title = "Contract table: limits accepted and rejected"
    return Table(title, _HEADERS, tuple(rows), links=tuple(hrefs))
