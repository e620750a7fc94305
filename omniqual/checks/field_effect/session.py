"""One endpoint's run of the gate: what every step shares (client, contract endpoint, thresholds,
findings), and the baseline every comparison is judged against."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from omniqual.checks.api_contract.exchange import Timeouts
from omniqual.checks.base import ArtifactSink
from omniqual.checks.field_effect.answers import Answer, Pair, ask, compare
from omniqual.checks.field_effect.judge import Spread, baseline_spread
from omniqual.checks.field_effect.record import EndpointRecord, Findings
from omniqual.client import OmniClient
from omniqual.domain.contract import Deviation, EndpointContract
from omniqual.domain.outcomes import GateOutcome


@dataclass(frozen=True, slots=True)
class Thresholds:
    reproducible_db: float
    margin_db: float


@dataclass(slots=True)
class EndpointRun:
    client: OmniClient
    endpoint: EndpointContract
    timeouts: Timeouts
    sink: ArtifactSink
    findings: Findings
    record: EndpointRecord
    thresholds: Thresholds
    progress: Callable[[str], None]
    deviations: tuple[Deviation, ...] = ()
    release: str | None = None
    """The served release (``GET /version``): which declared deviations apply."""

    @property
    def api_mode(self) -> str:
        return self.endpoint.api_mode

    async def ask(self, values: Mapping[str, JsonValue], label: str) -> Answer:
        self.findings.requests += 1
        self.progress(f"{self.api_mode}: {label}")
        return await ask(self.client, self.endpoint, values, label, self.timeouts, self.sink)

    def compare(self, label: str, a: Answer, b: Answer) -> Pair:
        return compare(self.endpoint.output.kind, label, a, b)

    async def baseline(self) -> tuple[Answer, Spread] | None:
        """The probe sent twice: its first answer and the spread, or None (invalid, recorded)
        when the server does not reproduce it."""
        probe = dict(self.endpoint.probe)
        first = await self.ask(probe, "baseline")
        again = await self.ask(probe, "baseline again")
        pair = self.compare("baseline", first, again)
        spread = baseline_spread(pair, self.thresholds.reproducible_db)
        case_id = f"{self.api_mode}/baseline"
        expected = f"reproducible (>= {self.thresholds.reproducible_db:g} dB apart)"
        if isinstance(spread, Spread):
            self.record.spread = spread
            self.record.add(pair, "reproducible")
            self.findings.case(
                case_id,
                self.api_mode,
                None,
                "the probe, twice (same seed)",
                expected,
                pair.describe(),
                GateOutcome.PASSED,
                spread.describe(),
            )
            return first, spread
        self.record.add(pair, "not reproducible")
        prefix = "baseline_failed" if pair.problem is not None else "not_reproducible"
        self.findings.invalid.append(f"{prefix}: {self.api_mode}: {spread}")
        self.findings.case(
            case_id,
            self.api_mode,
            None,
            "the probe, twice (same seed)",
            expected,
            pair.describe(),
            GateOutcome.INVALID,
            spread,
        )
        return None
