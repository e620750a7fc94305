"""Endpoint coverage (SKILL G0-21): every path the server's ``GET /openapi.json`` lists that serves
the model is either an endpoint of the contract (with the job routes its cases exercise) or
declared out of scope by it with a reason. A served path in neither is a gap in the contract and
fails the gate, named; a server whose document cannot be had leaves the check undone (invalid).

The server's own plumbing (health, version, metrics, model list, docs, profiler, sleep, scaling)
is no endpoint of any model: the gate's ``service_paths`` name it. Path templates are compared
without their parameter names (``/v1/videos/{id}`` is ``/v1/videos/{video_id}``)."""

from dataclasses import dataclass
from typing import Any

from omniqual.client import ClientError, OmniClient
from omniqual.domain.contract import ModelContract, path_template
from omniqual.domain.evidence import CaseResult
from omniqual.domain.outcomes import GateOutcome

CASE_ID = "contract/endpoint-coverage"
SERVICE_PATHS: tuple[str, ...] = (
    "/health", "/ping", "/load", "/version", "/metrics", "/v1/models", "/openapi.json", "/docs",
    "/docs/oauth2-redirect", "/redoc", "/start_profile", "/stop_profile", "/v1/omni/sleep",
    "/v1/omni/wakeup", "/sleep", "/wake_up", "/is_sleeping", "/scale_elastic_ep",
    "/is_scaling_elastic_ep", "/reset_prefix_cache", "/server_info", "/collective_rpc",
)  # fmt: skip
"""vLLM's and vLLM-Omni 0.30's own routes (the route list a server prints at start-up): they
serve the server, not a model, so no contract owns them."""
_SHOWN = 12


@dataclass(frozen=True, slots=True)
class CoverageCheck:
    result: CaseResult
    failures: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()


def uncovered_paths(
    served: dict[str, list[str]], contract: ModelContract, service_paths: tuple[str, ...]
) -> list[tuple[str, list[str]]]:
    """(path, methods) the server serves that neither the contract nor the plumbing owns."""
    owned = {path_template(p) for p in contract.covered_paths()}
    owned |= {path_template(e.path) for e in contract.out_of_scope_endpoints}
    owned |= {path_template(p) for p in service_paths}
    return [(path, methods) for path, methods in sorted(served.items())
            if path_template(path) not in owned]  # fmt: skip


async def openapi_document(client: OmniClient) -> tuple[dict[str, Any] | None, str]:
    """``GET /openapi.json`` as parsed JSON, or None and why it cannot be had."""
    try:
        raw = await client.send_raw("GET", "/openapi.json", timeout_s=30)
    except ClientError as exc:
        return None, f"GET /openapi.json gave no answer ({type(exc).__name__})"
    if not raw.ok:
        return None, f"GET /openapi.json answered HTTP {raw.status}"
    try:
        doc = raw.json()
    except ClientError:
        return None, "GET /openapi.json answered no JSON"
    if not isinstance(doc, dict):
        return None, "GET /openapi.json answered no JSON object"
    return doc, ""


async def served_paths(client: OmniClient) -> tuple[dict[str, list[str]] | None, str]:
    """Path -> HTTP methods of ``GET /openapi.json``, or None and why it cannot be had."""
    doc, why = await openapi_document(client)
    if doc is None:
        return None, why
    paths = doc.get("paths")
    if not isinstance(paths, dict) or not paths:
        return None, "GET /openapi.json lists no paths"
    return {
        str(path): sorted(m.upper() for m in ops) if isinstance(ops, dict) else []
        for path, ops in paths.items()
    }, ""


async def check_coverage(
    client: OmniClient, contract: ModelContract, service_paths: tuple[str, ...]
) -> CoverageCheck:
    served, why = await served_paths(client)
    if served is None:
        note = f"{why}: the contract's endpoints cannot be held against the served ones"
        result = _result(GateOutcome.SKIPPED, "not checked", note)
        return CoverageCheck(result, invalid=(f"{CASE_ID} not checked: {note}",))
    missing = uncovered_paths(served, contract, service_paths)
    declared = {path_template(e.path) for e in contract.out_of_scope_endpoints}
    unserved = sorted(declared - {path_template(p) for p in served})
    if not missing:
        note = f"{len(served)} served path(s): each in the contract, out of scope or plumbing"
        if unserved:  # not wrong (another build may serve them), but worth a reader's eye
            note += f"; declared out of scope yet not served: {', '.join(unserved[:_SHOWN])}"
        return CoverageCheck(_result(GateOutcome.PASSED, "all covered", note))
    failures = tuple(
        f"endpoint_not_in_contract: {path} ({'/'.join(methods) or 'no method'}) is served "
        f"(GET /openapi.json) but is neither an endpoint of contract {contract.model} nor in "
        "its out_of_scope_endpoints (with why)"
        for path, methods in missing
    )
    shown = ", ".join(path for path, _ in missing[:_SHOWN])
    more = f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
    note = f"not in the contract: {shown}{more}"
    return CoverageCheck(_result(GateOutcome.FAILED, f"{len(missing)} uncovered", note), failures)


def _result(outcome: GateOutcome, observed: str, note: str) -> CaseResult:
    return CaseResult(
        id=CASE_ID,
        endpoint="-",
        expected_status="every served model path in the contract or out of scope",
        observed_status=observed,
        outcome=outcome,
        note=note[:240],
    )
