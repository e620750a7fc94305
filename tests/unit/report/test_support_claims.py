"""The report's Support claims section, built from the compiled matrix: the models with
recorded results, their generated cells, and an audit's contradictions first."""

from omniqual.domain.outcomes import CellState as S
from omniqual.report.claims_audit import audit_claims
from omniqual.report.claims_markdown import parse_claims
from omniqual.report.support_claims import models_under_qualification, support_claims_view
from tests.unit.report.support_fixtures import HW, MAPPING, matrix, row

CLAIMS = ("### ImageGen\n\n| Model | ⚡Cache-DiT | 🔄Step Execution |\n|---|---|---|\n"
          "| **Stable-Diffusion-3** | ✅ | ✅ |\n")  # fmt: skip


def _compiled():  # type: ignore[no-untyped-def]
    return matrix(
        row(S.VALIDATED, gate_outcomes={"parity": "passed"}),
        row(S.UNSUPPORTED, execution="step/1", reasons=("refused: no step contract",),
            gate_outcomes={"fails-fast": "passed"}),
        row(S.NOT_TESTED, model="wan-tiny", task="t2v"),
    )  # fmt: skip


def test_only_models_with_results_are_under_qualification() -> None:
    assert models_under_qualification(_compiled()) == (("sd3-tiny", HW),)


def test_the_section_shows_the_generated_cells_per_model_and_hardware() -> None:
    view = support_claims_view(_compiled(), MAPPING)
    assert view is not None and view.contradictions == ()
    assert view.html_headers[:2] == ("Model", "Table")
    (only,) = view.html_rows
    assert only[:2] == ("Stable-Diffusion-3", f"ImageGen on {HW}")
    step = only[view.html_headers.index("🔄Step Execution")]
    assert step.startswith("❌ ")  # the refusal is quoted beside the symbol
    assert only[view.html_headers.index("⚡Cache-DiT")] == "❓"
    assert f"### ImageGen on {HW}" in view.markdown_table


def test_an_audit_puts_each_contradicted_claim_first() -> None:
    compiled = _compiled()
    audit = audit_claims(parse_claims(CLAIMS), compiled, MAPPING)
    view = support_claims_view(compiled, MAPPING, audit)
    assert view is not None
    (contradiction,) = view.contradictions
    assert "Stable-Diffusion-3, 🔄Step Execution" in contradiction and "claimed ✅" in contradiction


def test_no_results_means_no_section() -> None:
    assert support_claims_view(matrix(row(S.NOT_TESTED)), MAPPING) is None


def test_a_cell_a_failed_row_leaves_unverified_names_the_failure() -> None:
    compiled = matrix(
        row(S.VALIDATED, cache_policy="cache_dit", gate_outcomes={"parity": "passed"}),
        row(S.NOT_TESTED, cache_policy="cache_dit", dtype="fp16",
            gate_outcomes={"api-contract": "passed", "parity": "failed"},
            reasons=("parity: latest result failed (psnr 9)",)),
    )  # fmt: skip
    view = support_claims_view(compiled, MAPPING)
    assert view is not None
    (only,) = view.html_rows
    cache = only[view.html_headers.index("⚡Cache-DiT")]
    assert cache.startswith("❓ not verified: ") and "psnr 9" in cache
