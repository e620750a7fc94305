"""Each claim against the cell the evidence makes: every verdict, contradictions only where a ✅
meets a refusal or a failed required gate, and what cannot be mapped named."""

from omniqual.domain.outcomes import CellState as S
from omniqual.report.claims_audit import Verdict, audit_claims, render_audit
from omniqual.report.claims_markdown import parse_claims
from omniqual.report.support_document import render_support_tables
from tests.unit.report.support_fixtures import GPU, HW, MAPPING, matrix, row

HEADER = ("| Model | ⚡Cache-DiT | 💾CPU Offload (Layerwise) | 🔄Step Execution |\n"
          "|---|:---:|:---:|:---:|\n")  # fmt: skip
FAILED_PARITY = {"api-contract": "passed", "parity": "failed"}


def audit(body: str, compiled: object, hardware: str | None = None) -> dict[str, Verdict]:
    result = audit_claims(parse_claims(f"### ImageGen\n\n{HEADER}{body}"), compiled,  # type: ignore[arg-type]
                          MAPPING, hardware)  # fmt: skip
    return {f"{f.row}/{f.column}": f.verdict for f in result.findings}


def test_a_claimed_tick_on_a_refusal_or_a_failed_gate_is_a_contradiction() -> None:
    compiled = matrix(
        row(S.NOT_TESTED, cache_policy="cache_dit", gate_outcomes=FAILED_PARITY,
            reasons=("parity failed",)),
        row(S.UNSUPPORTED, execution="step/1", reasons=("refused",)),
        row(S.VALIDATED, offload="layerwise-nopin"),
    )  # fmt: skip
    got = audit("| **Stable-Diffusion-3** | ✅ | ✅ | ✅ |\n", compiled)
    assert got == {
        "Stable-Diffusion-3/⚡Cache-DiT": Verdict.CONTRADICTED,
        "Stable-Diffusion-3/💾CPU Offload (Layerwise)": Verdict.AGREES,
        "Stable-Diffusion-3/🔄Step Execution": Verdict.CONTRADICTED,
    }


def test_unverified_refusal_disproved_behind_and_undecided() -> None:
    compiled = matrix(row(S.VALIDATED, offload="layerwise"),
                      row(S.LIMITED, execution="step/1", limitation="one request at a time"))
    got = audit("| **Stable-Diffusion-3** | ✅ | ❌ | ❓ |\n| **Wan2.2** | ❌ | ❓ | ✅ |\n",
                compiled)  # fmt: skip
    assert got["Stable-Diffusion-3/⚡Cache-DiT"] is Verdict.UNVERIFIED
    assert got["Stable-Diffusion-3/💾CPU Offload (Layerwise)"] is Verdict.REFUSAL_DISPROVED
    assert got["Stable-Diffusion-3/🔄Step Execution"] is Verdict.BEHIND
    assert got["Wan2.2/⚡Cache-DiT"] is Verdict.UNDECIDED
    assert got["Wan2.2/💾CPU Offload (Layerwise)"] is Verdict.AGREES
    assert got["Wan2.2/🔄Step Execution"] is Verdict.UNVERIFIED


def test_only_contradictions_fail_the_audit() -> None:
    compiled = matrix(row(S.VALIDATED, offload="layerwise"))
    text = f"### ImageGen\n\n{HEADER}| **Stable-Diffusion-3** | ✅ | ❌ | ✅ |\n"
    result = audit_claims(parse_claims(text), compiled, MAPPING)
    assert not result.contradicted
    assert {f.verdict for f in result.findings} == {Verdict.UNVERIFIED, Verdict.REFUSAL_DISPROVED}
    refused = matrix(row(S.UNSUPPORTED, cache_policy="cache_dit", reasons=("refused",)))
    assert audit_claims(parse_claims(text), refused, MAPPING).contradicted


def test_a_tick_on_a_feature_one_covering_row_failed_is_a_contradiction() -> None:
    compiled = matrix(
        row(S.VALIDATED, offload="layerwise-nopin"),
        row(S.NOT_TESTED, offload="layerwise", gate_outcomes=FAILED_PARITY,
            reasons=("parity: latest result failed",)),
        row(S.VALIDATED, execution="step/1"),
        row(S.UNSUPPORTED, execution="step/1", dtype="fp16", reasons=("refused",)),
    )  # fmt: skip
    got = audit("| **Stable-Diffusion-3** | ❓ | ✅ | ✅ |\n", compiled)
    assert got["Stable-Diffusion-3/💾CPU Offload (Layerwise)"] is Verdict.CONTRADICTED
    assert got["Stable-Diffusion-3/🔄Step Execution"] is Verdict.CONTRADICTED


def test_a_bare_tick_on_a_limited_cell_is_claimed_without_its_limitation() -> None:
    bound = "one request at a time"
    compiled = matrix(
        row(S.LIMITED, cache_policy="cache_dit", limitation=bound),
        row(S.LIMITED, offload="layerwise", limitation=bound),
        row(S.LIMITED, execution="step/1", limitation=bound),
    )
    got = audit("| **Stable-Diffusion-3** | ✅ | ✅<sup>1</sup> | ✅ (one request at a time) |\n"
                "| **Wan2.2** | ✅[^2] | ❓ | ❓ |\n", compiled)  # fmt: skip
    assert got["Stable-Diffusion-3/⚡Cache-DiT"] is Verdict.LIMITATION_OMITTED
    assert Verdict.LIMITATION_OMITTED.value == "claimed without its limitation"
    assert got["Stable-Diffusion-3/💾CPU Offload (Layerwise)"] is Verdict.AGREES
    assert got["Stable-Diffusion-3/🔄Step Execution"] is Verdict.AGREES
    assert got["Wan2.2/⚡Cache-DiT"] is Verdict.UNVERIFIED  # Wan2.2 has no rows here
    text = f"### ImageGen\n\n{HEADER}| **Stable-Diffusion-3** | ✅ | ❓ | ❓ |\n"
    said = render_audit(audit_claims(parse_claims(text), compiled, MAPPING))
    assert "claimed without its limitation (1):" in said
    assert "claimed ✅; evidence: limited (limited: one request at a time)" in said


def test_unmapped_models_columns_sections_and_tables_are_named() -> None:
    text = (
        "## Methods\n\n| Method | Use |\n|---|---|\n| A | b |\n\n"
        "### ImageGen\n\n| Model | ⚡Cache-DiT | 🔀Ring |\n|---|---|---|\n"
        "| **Bagel** | ✅ | ✅ |\n| **Stable-Diffusion-3** | ✅ | ✅ |\n\n"
        f"### SpeechGen\n\n{HEADER}| **Stable-Diffusion-3** | ✅ | ✅ | ✅ |\n"
    )
    result = audit_claims(parse_claims(text), matrix(row(S.VALIDATED)), MAPPING)
    said = "\n".join(result.unmapped)
    assert "table under 'Methods' (line 3, columns Method, Use) is not a support table" in said
    assert "column '🔀Ring' maps to no feature in features.yaml" in said
    assert "model 'Bagel' (line 11) is not under models: in features.yaml" in said
    assert "no section named 'SpeechGen' in features.yaml (ImageGen, VideoGen)" in said
    assert [(f.row, f.column) for f in result.findings] == [("Stable-Diffusion-3", "⚡Cache-DiT")]
    assert "not mapped (4):" in render_audit(result)


def test_each_hardware_is_audited_separately_unless_the_heading_names_one() -> None:
    compiled = matrix(
        row(S.VALIDATED, offload="layerwise"),
        row(S.UNSUPPORTED, offload="layerwise", hardware=GPU, reasons=("no",)),
    )
    body = "| **Stable-Diffusion-3** | ❓ | ✅ | ❓ |\n"
    result = audit_claims(parse_claims(f"### ImageGen\n\n{HEADER}{body}"), compiled, MAPPING)
    offload = {f.hardware: f.verdict for f in result.findings if "Offload" in f.column}
    assert offload == {HW: Verdict.AGREES, GPU: Verdict.CONTRADICTED}
    named = parse_claims(f"### ImageGen on {HW}\n\n{HEADER}{body}")
    assert not audit_claims(named, compiled, MAPPING).contradicted
    other = audit_claims(named, compiled, MAPPING, GPU)
    assert other.findings == () and "outside the hardware asked for" in other.unmapped[0]
    assert not audit_claims(parse_claims(f"### ImageGen\n\n{HEADER}{body}"), compiled, MAPPING,
                            HW).contradicted  # fmt: skip


def test_a_generated_document_audits_as_agreeing_with_its_own_evidence() -> None:
    compiled = matrix(
        row(S.VALIDATED),
        row(S.LIMITED, cache_policy="cache_dit", limitation="bound"),
        row(S.UNSUPPORTED, execution="step/1", reasons=("refused",)),
        row(S.VALIDATED, cache_policy="cache_dit", execution="step/1"),
    )  # fmt: skip
    parsed = parse_claims(render_support_tables(compiled, MAPPING))
    result = audit_claims(parsed, compiled, MAPPING)
    assert parsed.problems == () and result.unmapped == ()
    assert result.findings and {f.verdict for f in result.findings} == {Verdict.AGREES}
    pair = [f for f in result.findings if f.table.startswith("Feature Compatibility")]
    assert {(f.row, f.column, f.claim.value) for f in pair} >= {
        ("🔄Step Execution", "⚡Cache-DiT", "✅")}


def test_a_bare_tick_the_evidence_does_not_back_hides_a_limit() -> None:
    # G8-05: a bare ✅ on a limited cell, or one nothing verifies, fails the audit; the same
    # ticks qualified (a note or a footnote) are findings that do not.
    compiled = matrix(row(S.LIMITED, cache_policy="cache_dit", limitation="one at a time"))
    bare = f"### ImageGen\n\n{HEADER}| **Stable-Diffusion-3** | ✅ | ❓ | ❓ |\n"
    result = audit_claims(parse_claims(bare), compiled, MAPPING)
    assert not result.contradicted and result.hides_limits
    unverified = f"### ImageGen\n\n{HEADER}| **Stable-Diffusion-3** | ❓ | ✅ | ❓ |\n"
    assert audit_claims(parse_claims(unverified), compiled, MAPPING).hides_limits
    noted = (f"### ImageGen\n\n{HEADER}| **Stable-Diffusion-3** | ✅ (one at a time) | "
             "✅[^1] | ❓ |\n")  # fmt: skip
    qualified = audit_claims(parse_claims(noted), compiled, MAPPING)
    assert not qualified.hides_limits
    assert {f.verdict for f in qualified.findings} == {Verdict.AGREES, Verdict.UNVERIFIED}
