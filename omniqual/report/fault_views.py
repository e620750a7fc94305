"""The fault-injection gate's result as lines a reader can scan: one per case, saying what was
injected and where, what the faulted request's client saw, the peers, what the server did
afterwards (recovered, exited: restart required, or neither) and the resource growth. A pure
view of ``effective["fault_injection"]``; it judges nothing."""

from collections.abc import Mapping

from pydantic import JsonValue

from omniqual.domain.result import GateResult


def _leak(leak: JsonValue) -> str:
    if not isinstance(leak, Mapping) or not leak:
        return "leak not measured"
    parts = []
    for key, label, unit in (("memory_mib", "memory", " MiB"), ("fds", "FDs", ""),
                             ("temp_files", "temp files", "")):  # fmt: skip
        value = leak.get(key)
        shown = "?" if not isinstance(value, int | float) else f"{value:+g}{unit}"
        parts.append(f"{label} {shown}")
    return ", ".join(parts)


def fault_case_lines(result: GateResult) -> list[str]:
    """One line per case, in the order the cases ran; [] for a result without cases."""
    cases = result.effective.get("fault_injection")
    if not isinstance(cases, Mapping):
        return []
    lines = []
    for case_id, case in cases.items():
        if not isinstance(case, Mapping):
            continue
        after = str(case.get("health", ""))
        if case.get("restart_required") is True:
            after += ", restart required"
        where = str(case.get("where") or "hook not reached")
        lines.append(
            f"{case_id} [{case.get('outcome', '?')}]: {case.get('injected', '?')} at {where}; "
            f"client saw {case.get('client', '?')}; {case.get('peers', '')}; "
            f"server {after} (policy {case.get('policy', '?')}); {_leak(case.get('leak'))}"
        )
    return lines
