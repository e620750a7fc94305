"""Sync/async parity (Gate 0: one normalization path): the same probe request with the same
seed through two paths must give the same output — identical bytes, or identical decoded pixels
where the encodings may differ. MP4s are compared by bytes only (no decoder here). A path of the
pair that is not served (404/405) fails the pair: parity was declared and is not shown."""

from dataclasses import dataclass

from omniqual.checks.api_contract.cases import Case, generate_cases
from omniqual.checks.api_contract.exchange import Exchange, Timeouts, run_case
from omniqual.checks.api_contract.outputs import decoded_pixels
from omniqual.client import ClientError, OmniClient
from omniqual.domain.contract import ModelContract, ParityPair
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

NOT_SERVED = frozenset({404, 405})


@dataclass(frozen=True, slots=True)
class ParityResult:
    result: CaseResult
    failure: str | None
    exchanges: tuple[Exchange, ...]


def _probe(contract: ModelContract, api_mode: str) -> Case:
    endpoint = contract.endpoint(api_mode)
    assert endpoint is not None  # the spec loader checked that parity names endpoints
    return generate_cases(endpoint)[0]


async def check_parity(
    client: OmniClient, contract: ModelContract, pair: ParityPair, timeouts: Timeouts
) -> ParityResult:
    case_id = f"parity/{pair.a}~{pair.b}"
    paths = f"{_path(contract, pair.a)} vs {_path(contract, pair.b)}"
    exchanges: list[Exchange] = []
    for api_mode in (pair.a, pair.b):
        try:
            exchanges.append(await run_case(client, _probe(contract, api_mode), timeouts))
        except ClientError as exc:
            return _done(
                case_id,
                pair,
                "no answer",
                GateOutcome.FAILED,
                f"parity {paths}: {api_mode} gave no answer ({exc})",
                exchanges,
            )
    first, second = exchanges
    for api_mode, exchange in zip((pair.a, pair.b), exchanges, strict=True):
        status = exchange.response.status
        if status in NOT_SERVED:
            # The contract declares both paths: one that is not served is a contract miss, and
            # parity cannot have been shown, so the gate must not pass on it.
            return _done(
                case_id,
                pair,
                str(status),
                GateOutcome.FAILED,
                f"parity {paths}: {_path(contract, api_mode)} is not served (HTTP {status}), "
                "so sync/async parity is not shown",
                exchanges,
            )
        if not exchange.response.ok or exchange.problem or not exchange.media:
            why = exchange.problem or f"HTTP {status}"
            return _done(
                case_id,
                pair,
                str(status),
                GateOutcome.FAILED,
                f"parity {paths}: {api_mode} produced no output ({why})",
                exchanges,
            )
    mismatch = _compare(pair, first.media, second.media)
    observed = f"{first.response.status}/{second.response.status}"
    if mismatch is None:
        note = f"identical {pair.compare}" + (
            " (MP4: bytes only)" if pair.a.startswith("videos") else ""
        )
        return _done(case_id, pair, observed, GateOutcome.PASSED, None, exchanges, note)
    return _done(
        case_id,
        pair,
        observed,
        GateOutcome.FAILED,
        f"sync_async_bytes_differ: same request and seed, {paths}: {mismatch}",
        exchanges,
        mismatch,
    )


def _compare(pair: ParityPair, a: list[bytes], b: list[bytes]) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} outputs"
    for index, (left, right) in enumerate(zip(a, b, strict=True)):
        if pair.compare == "bytes":
            if left != right:
                return f"output {index} bytes differ ({len(left)} vs {len(right)} bytes)"
            continue
        pixels_a, pixels_b = decoded_pixels(left), decoded_pixels(right)
        if pixels_a is None or pixels_b is None:
            return f"output {index} does not decode on one side"
        if pixels_a != pixels_b:
            return (
                f"output {index} decoded pixels differ ({pixels_a[0]} {pixels_a[1]} vs "
                f"{pixels_b[0]} {pixels_b[1]})"
            )
    return None


def _path(contract: ModelContract, api_mode: str) -> str:
    endpoint = contract.endpoint(api_mode)
    return endpoint.path if endpoint else api_mode


def _done(
    case_id: str,
    pair: ParityPair,
    observed: str,
    outcome: GateOutcome,
    failure: str | None,
    exchanges: list[Exchange],
    note: str = "",
) -> ParityResult:
    result = CaseResult(
        id=case_id,
        endpoint=f"{pair.a}~{pair.b}",
        field=None,
        sent=f"probe, same seed ({pair.compare})",
        expected_status="2xx, identical output",
        observed_status=observed,
        outcome=outcome,
        note=(note or failure or "")[:240],
    )
    return ParityResult(result, failure, tuple(exchanges))
