"""What a field-effect run records: one case per baseline, field and default; every compared pair
as measurements (identical or not, and its PSNR/SNR in dB) and as an entry of the ``effective``
block naming both sides' outputs by sha256 (never a prompt or a payload)."""

import math
from dataclasses import dataclass, field

from pydantic import JsonValue

from omniqual.checks.field_effect.answers import Answer, Pair
from omniqual.checks.field_effect.judge import Spread
from omniqual.domain.evidence import CaseResult, Measurement
from omniqual.domain.outcomes import GateOutcome


@dataclass(slots=True)
class EndpointRecord:
    api_mode: str
    kind: str
    spread: Spread | None = None
    pairs: list[tuple[Pair, str]] = field(default_factory=list)
    """Each compared pair with what it showed (a short verdict)."""
    exempt: dict[str, str] = field(default_factory=dict)
    defaults_unknown: tuple[str, ...] = ()

    def add(self, pair: Pair, verdict: str) -> None:
        self.pairs.append((pair, verdict))


@dataclass(slots=True)
class Findings:
    cases: list[CaseResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    endpoints: list[EndpointRecord] = field(default_factory=list)
    requests: int = 0
    limitations: list[str] = field(default_factory=list)
    """Declared deviations of the served release that reproduced: the row is at best limited."""

    def case(
        self,
        case_id: str,
        endpoint: str,
        name: str | None,
        sent: str,
        expected: str,
        observed: str,
        outcome: GateOutcome,
        note: str = "",
        deviation: bool = False,
    ) -> None:
        self.cases.append(
            CaseResult(
                id=case_id,
                endpoint=endpoint,
                field=name,
                sent=sent[:200],
                expected_status=expected,
                observed_status=observed[:200],
                outcome=outcome,
                note=note[:240],
                deviation=deviation,
            )
        )

    def count(self, prefix: str, outcome: GateOutcome) -> int:
        return sum(c.outcome is outcome and f"/{prefix}/" in c.id for c in self.cases)

    def measurements(self, elapsed_s: float) -> tuple[Measurement, ...]:
        counts = {
            "requests": self.requests,
            "fields_changed": sum(
                "/effect/" in c.id and c.outcome is not GateOutcome.SKIPPED for c in self.cases
            ),
            "fields_ignored": self.count("effect", GateOutcome.FAILED),
            "fields_exempt": self.count("effect", GateOutcome.SKIPPED),
            "defaults_differing": self.count("default", GateOutcome.FAILED),
            "defaults_unknown": self.count("default", GateOutcome.SKIPPED),
        }
        found = [
            Measurement(name=name, value=value, unit="count") for name, value in counts.items()
        ]
        found.append(Measurement(name="gate_elapsed", value=round(elapsed_s, 3), unit="s"))
        for record in self.endpoints:
            metric = "snr" if record.kind == "audio" else "psnr"
            spread = record.spread
            if spread is not None and math.isfinite(spread.floor_db):
                found.append(
                    Measurement(
                        name=f"{record.api_mode} baseline spread",
                        value=round(spread.floor_db, 3),
                        unit="dB",
                    )
                )
            for pair, _ in record.pairs:
                found.extend(pair_measurements(record.api_mode, metric, pair))
        return tuple(found)

    def effective(self) -> dict[str, JsonValue]:
        return {"field_effect": [_endpoint_block(record) for record in self.endpoints]}


def pair_measurements(api_mode: str, metric: str, pair: Pair) -> list[Measurement]:
    if pair.problem is not None:
        return []
    name = f"{api_mode} {pair.label}"
    found = [Measurement(name=f"{name}: identical", value=float(pair.identical), unit="bool")]
    if pair.distance_db is not None and math.isfinite(pair.distance_db):
        found.append(
            Measurement(name=f"{name}: {metric}", value=round(pair.distance_db, 3), unit="dB")
        )
    return found


def _number(value: float | None) -> JsonValue:
    """JSON has no infinity: identical outputs read "inf"."""
    if value is None:
        return None
    return round(value, 3) if math.isfinite(value) else "inf"


def _side(answer: Answer) -> dict[str, JsonValue]:
    return {"sent": answer.sent, "status": answer.status, "sha256": list(answer.sha256)}


def _endpoint_block(record: EndpointRecord) -> dict[str, JsonValue]:
    return {
        "api_mode": record.api_mode,
        "spread": record.spread.describe() if record.spread is not None else None,
        "exempt": dict(record.exempt),
        "defaults_unknown": list(record.defaults_unknown),
        "pairs": [
            {
                "label": pair.label,
                "verdict": verdict,
                "a": _side(pair.a),
                "b": _side(pair.b),
                "identical": pair.identical,
                "distance_db": _number(pair.distance_db),
                "structural": pair.structural,
                "problem": pair.problem,
            }
            for pair, verdict in record.pairs
        ],
    }
