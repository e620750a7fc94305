"""Check kinds by name: built-ins as lazy ``module:attr`` strings, third parties through the
``omniqual.checks`` entry-point group. Nothing is imported until a kind is asked for."""

import difflib
import importlib
from importlib.metadata import entry_points

from omniqual.checks.base import Check

BUILTIN: dict[str, str] = {
    "api_contract": "omniqual.checks.api_contract:ApiContractCheck",
    "field_effect": "omniqual.checks.field_effect:FieldEffectCheck",
    "strict_load": "omniqual.checks.strict_load:StrictLoadCheck",
    "fails_fast": "omniqual.checks.fails_fast:FailsFastCheck",
    "fails_fast_request": "omniqual.checks.fails_fast:FailsFastRequestCheck",
    "soak": "omniqual.checks.soak:SoakCheck",
    "abort": "omniqual.checks.abort:AbortCheck",
    "candidate_parity": "omniqual.checks.parity.candidate:CandidateParityCheck",
    "reference_parity": "omniqual.checks.parity.reference:ReferenceParityCheck",
    "offload_sweep": "omniqual.checks.offload_sweep:OffloadSweepCheck",
    "isolation": "omniqual.checks.isolation:IsolationCheck",
    "fault_injection": "omniqual.checks.fault_injection:FaultInjectionCheck",
    "perf": "omniqual.checks.perf:PerfCheck",
    "cache_tiers": "omniqual.checks.cache_tiers:CacheTiersCheck",
    "step_ab": "omniqual.checks.step_ab:StepAbCheck",
    "perf_ab": "omniqual.checks.perf_ab:PerfAbCheck",
    "startup": "omniqual.checks.startup:StartupCheck",
    "lora": "omniqual.checks.lora:LoraCheck",
}


class UnknownCheckKind(ValueError):
    pass


def known_kinds() -> dict[str, str]:
    kinds = dict(BUILTIN)
    for ep in entry_points(group="omniqual.checks"):
        kinds.setdefault(ep.name, ep.value)
    return kinds


def resolve(kind: str) -> type[Check]:
    kinds = known_kinds()
    target = kinds.get(kind)
    if target is None:
        close = difflib.get_close_matches(kind, kinds, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownCheckKind(f"unknown check kind {kind!r}{hint}")
    module_name, _, attr = target.partition(":")
    cls: type[Check] = getattr(importlib.import_module(module_name), attr)
    return cls


def measures(check: type[Check]) -> bool:
    """Whether ``check`` measures time or memory, so it must have the host to itself (its
    ``measures`` class attribute; a kind that does not say measures nothing)."""
    return bool(getattr(check, "measures", False))


def shares_start_ups(check: type[Check]) -> bool:
    """Whether ``check``, measuring, may start its own servers beside other groups' work (its
    ``shares_start_ups`` class attribute; a kind that does not say keeps the host throughout)."""
    return measures(check) and bool(getattr(check, "shares_start_ups", False))
