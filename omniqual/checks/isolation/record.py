"""What an isolation run records: one ``CaseResult`` per request per round, the crossing table
(request, round, pattern, verdict, crossed-with, differing settings), the rounds' meeting proof
and the requests kept out of the rounds as indistinguishable in ``effective["isolation"]``, the
counts as measurements, thumbnails of alone against together for wrong images, and a summary
artifact. Reasons never carry a prompt: every prompt
text the run sent is replaced by ``<prompt>``."""

import json
from collections.abc import Sequence
from typing import Any

from omniqual.checks.base import CheckContext, CheckOutcome, verdict
from omniqual.checks.isolation.exchange import Served
from omniqual.checks.isolation.judge import Verdict
from omniqual.checks.isolation.params import IsolationParams
from omniqual.checks.isolation.plan import IsoRequest, render
from omniqual.checks.isolation.proof import Meeting
from omniqual.checks.isolation.rounds import Round
from omniqual.compare import decode_image, thumbnail_png
from omniqual.compare.media import MediaDecodeError
from omniqual.domain.contract import ENDPOINT_PATHS
from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome


class Recorder:
    def __init__(self, ctx: CheckContext, params: IsolationParams, requests: Sequence[IsoRequest],
                 prompts: Sequence[str]) -> None:  # fmt: skip
        self.ctx, self.params, self.prompts = ctx, params, sorted(set(prompts), key=len)[::-1]
        self.requests = list(requests)
        self.cases: list[CaseResult] = []
        self.rows: list[dict[str, Any]] = []
        self.failures: dict[str, list[int]] = {}
        self.measurements: list[Measurement] = []
        self.artifacts: list[Artifact] = []
        self.effective: dict[str, Any] = {}
        self.thumbnails = 0
        self.indistinguishable: dict[str, str] = {}
        self.together = len(self.requests)

    def settings(self, request: IsoRequest) -> str:
        return render(request, [k for k, _ in request.settings])

    def scrub(self, text: str) -> str:
        for prompt in self.prompts:
            if prompt:
                text = text.replace(prompt, "<prompt>")
        return text

    def measure(self, name: str, value: float, unit: str, samples: int | None = None) -> None:
        self.measurements.append(Measurement(name=name, value=value, unit=unit, samples=samples))

    def left_out(self, reasons: dict[str, str], together: int) -> None:
        """Requests kept out of the rounds (indistinguishable alone), and how many were sent."""
        self.indistinguishable = {k: self.scrub(v) for k, v in reasons.items()}
        self.together = together

    def case(self, plan: Round, served: Served, found: Verdict, meeting: Meeting) -> None:
        reason = self.scrub(found.reason)
        note = reason if meeting.met else f"{reason} (this round did not meet)".strip()
        request = next(r for r in self.requests if r.label == served.label)
        self.cases.append(CaseResult(
            id=f"r{plan.index}-{served.label}", endpoint=ENDPOINT_PATHS[served.via],
            sent=self.settings(request), expected_status="its solo output",
            observed_status=found.finding if served.status is None
            else f"{found.finding} (HTTP {served.status})",
            outcome=found.outcome, note=note.strip(),
        ))  # fmt: skip
        self.rows.append({
            "request": served.label, "round": plan.index, "pattern": plan.pattern,
            "order": "-".join(plan.order), "via": served.via, "verdict": found.outcome.value,
            "finding": found.finding, "crossed_with": found.crossed_with,
            "fields": list(found.fields), "reason": reason, "met": meeting.met,
        })  # fmt: skip
        if found.outcome is GateOutcome.FAILED:
            self.failures.setdefault(reason, []).append(plan.index)
            if found.pictures is not None and self.thumbnails < self.params.max_thumbnails:
                self._thumbnails(plan, served.label, found.pictures)

    def _thumbnails(self, plan: Round, label: str, pictures: tuple[bytes, bytes]) -> None:
        side = self.params.thumbnail_side
        try:
            pngs = [thumbnail_png(decode_image(data), side) for data in pictures]
        except MediaDecodeError:
            return
        self.thumbnails += 1
        for png, which in zip(pngs, ("alone", "together"), strict=True):
            self.artifacts.append(self.ctx.artifacts.put_artifact(
                png, media_type="image/png", role="isolation-thumbnail",
                name=f"isolation-r{plan.index}-{label}-{which}.png"))  # fmt: skip

    def outcome(self, *, invalid: list[str], failed: Sequence[str] = (),
                meetings: Sequence[tuple[str, Meeting]] = ()) -> CheckOutcome:  # fmt: skip
        failures = [f"{reason} (round{'s' if len(r) > 1 else ''} {', '.join(map(str, r))})"
                    for reason, r in self.failures.items()]  # fmt: skip
        failures += failed
        met = [m for _, m in meetings]
        peaks = [m.peak_in_server for m in met if m.peak_in_server is not None]
        self.measure("requests", float(len(self.requests)), "requests")
        self.measure("requests_together", float(self.together), "requests")
        self.measure("rounds", float(len(met)), "rounds")
        self.measure("rounds_met", float(sum(m.met for m in met)), "rounds")
        self.measure("cases", float(len(self.cases)), "cases")
        self.measure("failed_cases", float(sum(c.outcome is GateOutcome.FAILED
                                                for c in self.cases)), "cases")  # fmt: skip
        self.measure("crossings", float(sum(r["finding"] == "crossed" for r in self.rows)),
                     "cases")  # fmt: skip
        self.measure("overlapping_pairs", float(sum(m.overlapping_pairs for m in met)), "pairs")
        self.measure("refused_together", float(sum(m.refused for m in met)), "cases")
        if peaks:
            self.measure("max_in_server", float(max(peaks)), "requests", samples=len(peaks))
        self.effective["isolation"] = {
            "requests": {r.label: dict(r.settings) for r in self.requests},
            "not_varied": {r.label: list(r.not_varied) for r in self.requests if r.not_varied},
            "indistinguishable": dict(self.indistinguishable),
            "rounds": [{"pattern": p, "met": m.met, "how": self.scrub(m.how),
                        "peak": m.peak_in_server, "served": m.served, "refused": m.refused,
                        "overlapping_pairs": m.overlapping_pairs, "span_s": round(m.span_s, 4),
                        "solo_sum_s": round(m.solo_sum_s, 4)} for p, m in meetings],
            "table": self.rows,
        }  # fmt: skip
        summary = json.dumps({"effective": self.effective, "failures": failures,
                              "invalid": invalid}, indent=1, default=str).encode()  # fmt: skip
        self.artifacts.append(self.ctx.artifacts.put_artifact(
            summary, media_type="application/json", role="summary",
            name="isolation-summary.json"))  # fmt: skip
        return CheckOutcome(
            verdict(failures, invalid=invalid), tuple(failures + invalid),
            tuple(self.measurements), tuple(self.artifacts), tuple(self.cases),
            requested={"requests": len(self.requests), "orders": self.params.orders,
                       "patterns": list(self.params.patterns), "repeats": self.params.repeats},
            effective=self.effective,
        )  # fmt: skip
