"""What one api-contract run found, and the gate outcome it makes: the recorded cases, the
failures, the checks that could not run (invalid, never passed), the declared deviations that
reproduced (the row's limitations) and the HTTP exchanges; then the verdict, the reasons, the
measurements and the evidence artifacts (cases, raw-response summary, the contract itself)."""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from omniqual.checks.api_contract.exchange import ExchangeRecord
from omniqual.checks.api_contract.judge import Judgement
from omniqual.checks.base import ArtifactSink, CheckOutcome, verdict
from omniqual.domain.contract import ModelContract
from omniqual.domain.evidence import Artifact, CaseResult, Measurement

MAX_REASONS = 60


@dataclass(slots=True)
class RunRecord:
    contract: ModelContract
    results: list[CaseResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    """Checks the gate needed that could not run: the verdict is invalid, not passed."""
    reproduced: dict[int, list[CaseResult]] = field(default_factory=dict)
    """Declared deviations (index in the contract) and the cases that reproduced them."""
    records: list[ExchangeRecord] = field(default_factory=list)
    calibration: Measurement | None = None

    def add(self, judgement: Judgement) -> None:
        self.results.append(judgement.result)
        if judgement.failure is not None:
            self.failures.append(judgement.failure)
        if judgement.deviation is not None:
            index = self.contract.deviations.index(judgement.deviation)
            self.reproduced.setdefault(index, []).append(judgement.result)

    def checked(self, result: CaseResult, failures: list[str], invalid: list[str]) -> None:
        """A recorded check that is no request case (side effects, coverage, log)."""
        self.results.append(result)
        self.failures.extend(failures)
        self.invalid.extend(invalid)

    def limitations(self) -> tuple[str, ...]:
        """One reviewer-readable sentence per reproduced declaration: what the server does, and
        the cases that showed it (the evidence is in the cases artifact)."""
        out = []
        for index, results in sorted(self.reproduced.items()):
            deviation = self.contract.deviations[index]
            seen = [f"{r.id} ({r.sent}) -> HTTP {r.observed_status}" for r in results[:4]]
            more = f" and {len(results) - 4} more" if len(results) > 4 else ""
            out.append(f"{deviation.reason.rstrip('.')} (seen: {'; '.join(seen)}{more}).")
        return tuple(out)

    def outcome(
        self,
        *,
        sink: ArtifactSink,
        contract_file: Path,
        elapsed_s: float,
        requested: Mapping[str, JsonValue],
    ) -> CheckOutcome:
        deviations = [r for r in self.results if r.deviation]
        reasons = self.failures[:MAX_REASONS]
        if len(self.failures) > MAX_REASONS:
            reasons.append(f"... and {len(self.failures) - MAX_REASONS} more (see the cases)")
        reasons += self.invalid
        reasons += [
            f"declared deviation: {r.id}: observed {r.observed_status}, expected "
            f"{r.expected_status}"
            for r in deviations
        ]
        measurements = (
            Measurement(name="cases", value=len(self.results), unit="count"),
            Measurement(name="cases_failed", value=len(self.failures), unit="count"),
            Measurement(
                name="accepted_but_invalid",
                unit="count",
                value=sum("accepted-but-invalid" in f for f in self.failures),
            ),
            Measurement(name="declared_deviations", value=len(deviations), unit="count"),
            Measurement(
                name="stale_deviations",
                unit="count",
                value=sum(f.startswith("stale deviation") for f in self.failures),
            ),
            Measurement(name="not_checked", value=len(self.invalid), unit="count"),
            Measurement(name="gate_elapsed", value=round(elapsed_s, 3), unit="s"),
            *((self.calibration,) if self.calibration is not None else ()),
        )
        return CheckOutcome(
            outcome=verdict(self.failures, invalid=self.invalid),
            reasons=tuple(reasons),
            measurements=measurements,
            artifacts=self._artifacts(sink, contract_file),
            cases=tuple(self.results),
            requested=requested,
            limitations=self.limitations(),
        )

    def _artifacts(self, sink: ArtifactSink, contract_file: Path) -> tuple[Artifact, ...]:
        model = self.contract.model
        cases = "".join(r.model_dump_json() + "\n" for r in self.results).encode()
        raw = json.dumps(
            [
                {
                    "case": r.case_id,
                    "method": r.method,
                    "path": r.path,
                    "status": r.status,
                    "content_type": r.content_type,
                    "size": r.size,
                    "elapsed_s": r.elapsed_s,
                }
                for r in self.records
            ],
            indent=1,
        )
        return (
            sink.put_artifact(
                cases,
                media_type="application/x-ndjson",
                role="cases",
                name=f"api-contract-cases-{model}.jsonl",
            ),
            sink.put_artifact(
                raw.encode(),
                media_type="application/json",
                role="raw-responses",
                name=f"api-contract-responses-{model}.json",
            ),
            sink.put_artifact(
                contract_file,
                media_type="application/yaml",
                role="contract",
                name=contract_file.name,
            ),
        )
