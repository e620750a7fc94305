"""``model init --probe``: run the contract gate once on the draft and propose what to change
where the server contradicts it. Nothing is written: proposals are for a person to review.

A draft still has TODOs, so the gate runs on a provisional copy in a temporary directory: a limit
nobody has stated yet is left out (the field counts as unbounded for this run only), a TODO in
the probe request is dropped (the server's default is used). Two kinds of contradiction come
back: a value the draft accepts that the server refuses (narrow the limit, or drop the enum
value) and a value the draft rejects that the server accepts or fails on (a deviation of the
release to declare, or a limit to correct).
"""

import hashlib
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from omniqual.checks.api_contract import ApiContractCheck, ApiContractParams
from omniqual.checks.base import CheckContext, TargetInfo
from omniqual.client.client import ClientTimeouts, OmniClient
from omniqual.domain.axes import RowKey
from omniqual.domain.contract import ENDPOINT_PATHS
from omniqual.domain.evidence import Artifact, CaseResult
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.source import TODO_MARK, load_yaml

_DROPPED_WHEN_TODO = frozenset({"min", "max", "multiple_of", "misaligned", "default", "enum"})
_NUMERIC = frozenset({"int", "float", "size"})


@dataclass(frozen=True, slots=True)
class Proposal:
    case_id: str
    field: str | None
    sent: str
    expected: str
    observed: str
    change: str
    """What to change, in words: narrow a limit, drop an enum value, declare a deviation."""


@dataclass(frozen=True, slots=True)
class ProbeReport:
    outcome: GateOutcome
    cases: int
    proposals: tuple[Proposal, ...]
    deviations: tuple[dict[str, Any], ...]
    """Deviation blocks to paste under the contract's ``deviations`` (after review)."""
    release: str | None


class _Discard:
    """The probe keeps no evidence: artifacts are hashed and dropped."""

    def put_artifact(
        self, data: bytes | Path, *, media_type: str, role: str, name: str
    ) -> Artifact:
        raw = data.read_bytes() if isinstance(data, Path) else data
        digest = hashlib.sha256(raw).hexdigest()
        return Artifact(sha256=digest, size=len(raw), media_type=media_type, role=role, name=name)


def _todo(value: object) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(TODO_MARK)


def provisional(data: Mapping[str, Any]) -> dict[str, Any]:
    """The contract as the probe can run it: stated limits kept, TODOs left out."""
    out = {k: ("(not yet stated)" if _todo(v) else v) for k, v in data.items()}
    # The pins (SKILL G0-01) are the author's to state and no request depends on them: while
    # still TODO, the scratch copy stands in pins the loader accepts, saying they are not stated.
    name = str(data.get("model", ""))
    for key, stand_in in (("official", "unstated==0.0.0 (not yet stated)"),
                          ("checkpoint", f"omniqual bundled {name} (not yet stated)")):  # fmt: skip
        if _todo(data.get(key)):
            out[key] = stand_in
    out["endpoints"] = [_endpoint(e) for e in data.get("endpoints", ())]
    return out


def _endpoint(endpoint: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(endpoint)
    out["probe"] = {k: v for k, v in endpoint.get("probe", {}).items() if not _todo(v)}
    out["fields"] = [_field(f) for f in endpoint.get("fields", ())]
    # An upload whose counts are still TODO is not sent: guessing a count would probe a request
    # nobody stated (a refused probe then says the upload is needed).
    out["inputs"] = [
        {k: ("probe: TODO" if _todo(v) else v) for k, v in i.items()}
        for i in endpoint.get("inputs", ())
        if not any(_todo(i.get(k)) for k in ("min_count", "max_count", "probe_count"))
    ]
    return out


def _field(field: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in field.items() if not (_todo(v) and k in _DROPPED_WHEN_TODO)}
    out = {k: ("probe: TODO" if _todo(v) else v) for k, v in out.items()}
    if field.get("type") in _NUMERIC and ("min" not in out or "max" not in out):
        out.setdefault("unbounded", "probe: the limit is still TODO, so it is not probed")
        out.setdefault("source", "probe")
    return out


async def probe_contract(
    url: str,
    contract_file: Path,
    api_mode: str,
    *,
    request_timeout_s: float = 120.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> ProbeReport:
    """Run the api-contract check once on ``contract_file`` (TODOs relaxed) against ``url``."""
    data = load_yaml(contract_file).data
    if not isinstance(data, dict):
        raise ValueError(f"{contract_file}: not a contract (expected a mapping)")
    name = str(data.get("model", contract_file.stem))
    with tempfile.TemporaryDirectory(prefix="omniqual-probe-") as scratch:
        root = Path(scratch)
        (root / f"{name}.yaml").write_text(yaml.safe_dump(provisional(data), sort_keys=False))
        params = ApiContractParams.model_validate(
            {
                "contracts_dir": str(root),
                "parity": False,
                "api_modes": [api_mode],
                "request_timeout_s": request_timeout_s,
                "job_timeout_s": request_timeout_s,
            }
        )
        ctx = CheckContext(
            gate=GateSpec(id="api-contract", kind="api_contract", version=1),
            row=RowKey((("model", name), ("api_mode", api_mode))),
            target=TargetInfo(url=url, label=url),
            artifacts=_Discard(),
            project_root=root,
            make_client=lambda: OmniClient(
                url, timeouts=ClientTimeouts(total_s=request_timeout_s), transport=transport
            ),
        )
        outcome = await ApiContractCheck().run(ctx, params)
    if outcome.outcome is GateOutcome.SKIPPED:
        raise ValueError(f"the probe could not run: {'; '.join(outcome.reasons)}")
    release = _release(data)
    proposals = tuple(p for c in outcome.cases if (p := propose(c)) is not None)
    return ProbeReport(
        outcome.outcome,
        len(outcome.cases),
        proposals,
        deviation_blocks(proposals, release),
        release,
    )


def _release(data: Mapping[str, Any]) -> str | None:
    value = data.get("target_release")
    if not isinstance(value, str) or _todo(value):
        return None
    parts = value.split(".")
    return ".".join(parts[:2]) + ".*" if len(parts) >= 2 else value


def propose(case: CaseResult) -> Proposal | None:
    """What the draft should say, given what the server did with this case (None: it agreed)."""
    if case.outcome is GateOutcome.PASSED or case.deviation or not case.observed_status.isdigit():
        return None  # agreed, declared, or no HTTP answer to learn a limit from (side effects)
    field, kind = case.field, case.id.rsplit("/", 1)[-1]
    status = case.observed_status
    if case.expected_status == "2xx":
        if kind == "probe":
            change = f"the probe request itself is refused ({status}): fix `probe`"
        elif kind.startswith("enum="):
            change = f"{field}.enum: drop {kind[5:]!r}, the server answers {status} for it"
        elif kind in ("min", "max"):
            change = (
                f"{field}.{kind}: the server answers {status} for {case.sent}; narrow the "
                "limit to what it accepts and cite it in `source`"
            )
        else:
            change = (
                f"{field}: the server answers {status} for {case.sent}, which the draft accepts"
            )
    else:
        change = (
            f"declare a deviation (observed_status {status}) or correct the limit: the "
            f"server answers {status}, not {case.expected_status}, for {case.sent}"
        )
    return Proposal(case.id, field, case.sent or case.id, case.expected_status, status, change)


def deviation_blocks(
    proposals: tuple[Proposal, ...], release: str | None
) -> tuple[dict[str, Any], ...]:
    """One declaration per field and observed status, for the cases the draft rejects: its
    reason (the row's limitation text) says what the server does."""
    grouped: dict[tuple[str, int], list[Proposal]] = {}
    for p in proposals:
        if p.expected != "2xx":
            grouped.setdefault((p.field or "", int(p.observed)), []).append(p)
    blocks = []
    for (_, status), found in sorted(grouped.items()):
        mode = found[0].case_id.split("/", 1)[0]
        sent = "; ".join(p.sent for p in found)
        blocks.append(
            {
                "release": release or "TODO: the release glob, e.g. 0.30.*",
                "cases": [p.case_id for p in found],
                "observed_status": status,
                "reason": f"{ENDPOINT_PATHS.get(mode, mode)} answers {status}, not "
                f"{found[0].expected}, for {sent}",
            }
        )
    return tuple(blocks)
