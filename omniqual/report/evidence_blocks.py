"""Tables built from gate results and run records: results, cases, measurements, artifacts,
parameters, revisions and environment fingerprints. Every value passes through ``redact``; every
row of a figure table links the result (or artifact) it was read from."""

import math
import shlex
from collections.abc import Iterable, Mapping
from decimal import Decimal

from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.run import CpuNumerics, EnvironmentFingerprint, RunSummary
from omniqual.report.blocks import KeyValues, Table
from omniqual.report.links import EvidenceLinks
from omniqual.report.redact import safe_text, safe_value

GIB = 1024**3
REASONS_LIMIT = 300
"""Reasons are quoted up to this many characters; the linked record holds them all."""


def number(value: float) -> str:
    """A raw figure exactly as recorded (shortest round-trip form, no rounding)."""
    return repr(float(value))


def in_report_unit(value: float, unit: str) -> tuple[str, str]:
    """A figure and its unit as the report shows them: seconds in milliseconds (the unit every
    latency of vLLM-Omni's own benchmark reports is in), shifted exactly in decimal so the
    recorded digits are kept; any other unit as recorded."""
    if unit != "s" or not math.isfinite(value):
        return number(value), unit
    return format(Decimal(repr(float(value))).scaleb(3), "f"), "ms"


def _optional(value: object) -> str:
    return "—" if value is None else str(value)


RowLabels = Mapping[str, str]
"""Row key → how a report names it (``#3`` for a row of the rendered matrix)."""


def row_label(labels: RowLabels, key: str) -> str:
    return labels.get(key, f"{key} (not in the matrix)")


_NO_LINKS = EvidenceLinks()


def result_table(
    title: str, results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks = _NO_LINKS
) -> Table:
    rows = []
    hrefs = []
    for r in results:
        hrefs.append(links.result(r.run_id, r.result_id))
        problem = ""
        if r.error is not None:
            problem = f"{r.error.type}: {safe_text(r.error.message)}"
        rows.append(
            (
                r.gate_id,
                f"{r.gate_kind} v{r.gate_version}",
                row_label(labels, r.row),
                r.outcome.value + (" (startup only)" if r.startup_only else ""),
                safe_text("; ".join(r.reasons), limit=REASONS_LIMIT) or "—",
                problem or "—",
                f"{r.duration_s:.3f} s",
                f"{r.run_id}/{r.result_id}",
            )
        )
    return Table(
        title,
        ("Gate", "Check", "Row", "Outcome", "Reasons", "Error", "Duration", "Result"),
        tuple(rows),
        links=tuple(hrefs),
    )


def case_table(
    title: str, results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks = _NO_LINKS
) -> Table:
    """Every case once: a case several rows answered the same names them all (and links the
    first row's record)."""
    shared: dict[tuple[str, ...], list[GateResult]] = {}
    for r in results:
        for c in r.cases:
            case = (
                r.gate_id, c.id, c.endpoint, c.field or "—",
                safe_text(c.sent) if c.sent is not None else "—", c.expected_status,
                c.observed_status, c.outcome.value, "yes" if c.deviation else "no",
                safe_text(c.note) or "—",
            )  # fmt: skip
            shared.setdefault(case, []).append(r)
    rows = tuple(
        (case[0], ", ".join(dict.fromkeys(row_label(labels, r.row) for r in covered)), *case[1:])
        for case, covered in shared.items()
    )
    hrefs = tuple(links.result(c[0].run_id, c[0].result_id) for c in shared.values())
    headers = (
        "Gate", "Rows", "Case", "Endpoint", "Field", "Sent", "Expected", "Observed", "Outcome",
        "Deviation", "Note",
    )  # fmt: skip
    return Table(title, headers, rows, links=hrefs)


def measurement_table(
    title: str, results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks = _NO_LINKS
) -> Table:
    results = tuple(results)
    hrefs = tuple(links.result(r.run_id, r.result_id) for r in results for _ in r.measurements)
    rows = tuple(
        (
            r.gate_id,
            row_label(labels, r.row),
            m.name,
            *in_report_unit(m.value, m.unit),
            _optional(m.samples),
            "—" if m.bound is None else in_report_unit(m.bound, m.unit)[0],
            "—" if m.ok is None else ("met" if m.ok else "not met"),
        )
        for r in results
        for m in r.measurements
    )
    headers = ("Gate", "Row", "Measurement", "Value", "Unit", "Samples", "Bound", "Bound met")
    return Table(title, headers, rows, links=hrefs)


def artifact_table(results: Iterable[GateResult], links: EvidenceLinks = _NO_LINKS) -> Table:
    results = tuple(results)
    hrefs = tuple(links.artifact(r.run_id, a.sha256) for r in results for a in r.artifacts)
    rows = tuple(
        (a.sha256, str(a.size), a.media_type, a.role, safe_text(a.name), r.gate_id, r.result_id)
        for r in results
        for a in r.artifacts
    )
    headers = ("sha256", "Bytes", "Media type", "Role", "Name", "Gate", "Result")
    return Table("Artifacts (content-addressed)", headers, rows, links=hrefs)


_DRAWN_ELSEWHERE = frozenset({"parity", "sweep"})
"""Effective records a section draws in full (parity galleries, offload sweeps): a truncated
copy of them in the parameter table would only hide the parameters."""


def parameter_table(
    results: Iterable[GateResult], labels: RowLabels, links: EvidenceLinks = _NO_LINKS
) -> Table:
    """Requested vs effective parameters; a difference is how a silent fallback shows up."""
    rows = []
    hrefs = []
    for r in results:
        for name in sorted(set(r.requested) | set(r.effective)):
            if name in _DRAWN_ELSEWHERE:
                continue
            asked = safe_value(r.requested[name], name) if name in r.requested else "—"
            got = safe_value(r.effective[name], name) if name in r.effective else "—"
            differs = name in r.requested and name in r.effective and asked != got
            rows.append(
                (r.gate_id, row_label(labels, r.row), name, asked, got, "yes" if differs else "no")
            )
            hrefs.append(links.result(r.run_id, r.result_id))
    headers = ("Gate", "Row", "Parameter", "Requested", "Effective", "Differs")
    return Table("Requested and effective parameters", headers, tuple(rows), links=tuple(hrefs))


# The argv is long and per recipe: it gets its own table rather than a column. The served
# identity's record is a column by its hash.
_PROVENANCE_FIELDS = tuple(f for f in Provenance.model_fields if f not in ("serve_argv", "served"))


def revision_table(results: Iterable[GateResult]) -> Table:
    """Each distinct set of recorded revisions, with how many results were taken against it."""
    tally: dict[tuple[str, ...], int] = {}
    for r in results:
        values = tuple(_optional(getattr(r.provenance, f)) for f in _PROVENANCE_FIELDS)
        tally[values] = tally.get(values, 0) + 1
    rows = tuple((*values, str(n)) for values, n in sorted(tally.items()))
    return Table("Revisions under test", (*_PROVENANCE_FIELDS, "results"), rows)


def serve_command_table(results: Iterable[GateResult]) -> Table:
    """Each distinct serve command exactly as launched (secrets redacted), with its targets."""
    targets: dict[tuple[str, ...], set[str]] = {}
    for r in results:
        if r.provenance.serve_argv:
            targets.setdefault(r.provenance.serve_argv, set()).add(r.target)
    rows = tuple(
        (safe_text(shlex.join(argv)), ", ".join(sorted(names)))
        for argv, names in sorted(targets.items())
    )
    return Table("Serve commands as launched", ("Command", "Targets"), rows)


def cpu_numerics_text(numerics: CpuNumerics) -> str:
    """e.g. ``AVX2; bf16 emulated (23.9x fp32); flags avx2 fma``."""
    parts = [numerics.capability or "capability unknown"]
    slowdown = f" ({numerics.bf16_slowdown:.1f}x fp32)" if numerics.bf16_slowdown else ""
    parts.append(f"bf16 {numerics.bf16}{slowdown}")
    if numerics.caps:
        parts.append("capped by " + ", ".join(f"{k}={v}" for k, v in sorted(numerics.caps.items())))
    parts.append("flags " + (" ".join(numerics.flags) or "none read"))
    return "; ".join(parts)


def _fingerprint(run_ids: list[str], env: EnvironmentFingerprint) -> KeyValues:
    gpus = "; ".join(
        f"#{g.index} {g.name} {g.memory_total_bytes / GIB:.1f} GiB"
        + (f" driver {g.driver}" if g.driver else "")
        for g in env.gpus
    )
    items = (
        ("runs", ", ".join(run_ids)),
        ("os", env.os),
        ("kernel", env.kernel),
        ("machine", env.machine),
        ("cpu", f"{env.cpu_model} ({env.cpu_count} logical)"),
        *((("cpu numerics", cpu_numerics_text(env.cpu_numerics)),) if env.cpu_numerics else ()),
        ("memory", f"{env.memory_total_bytes} bytes ({env.memory_total_bytes / GIB:.1f} GiB)"),
        ("gpus", gpus or "none"),
        ("python", env.python),
        ("omniqual", env.omniqual_version),
        ("git commit", _optional(env.git_commit) + (" (dirty)" if env.git_dirty else "")),
        ("hostname sha256", env.hostname_hash[:16]),
        ("describes", env.describes),
        *((f"target {name}", host) for name, host in sorted(env.target_hosts.items())),
    )
    return KeyValues("Environment fingerprint", items)


def environment_blocks(runs: Iterable[RunSummary]) -> tuple[KeyValues | Table, ...]:
    """One fingerprint (and package list) per distinct environment, naming the runs it covers."""
    by_env: dict[str, tuple[EnvironmentFingerprint, list[str]]] = {}
    for run in runs:
        key = run.environment.model_dump_json()
        by_env.setdefault(key, (run.environment, []))[1].append(run.run_id)
    blocks: list[KeyValues | Table] = []
    for env, run_ids in by_env.values():
        blocks.append(_fingerprint(run_ids, env))
        packages = tuple((name, version) for name, version in sorted(env.packages.items()))
        if packages:
            blocks.append(Table("Packages", ("Package", "Version"), packages))
    return tuple(blocks)
