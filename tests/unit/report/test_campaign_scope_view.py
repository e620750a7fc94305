"""The first screen's "Campaign scope": the rows the campaign behind the report qualified in
full and those it only sampled (with the gates it left out), in the report's row order."""

from omniqual.domain.matrix import CompiledMatrix
from omniqual.report.campaign_scope_view import CampaignScope
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view


def _key(i: int) -> str:
    return f"model=flux;task=t2i;quantization=q{i};hardware=h200"


SCOPE = CampaignScope(
    campaign="tour",
    in_full=(_key(2), _key(0)),
    # A row outside the report's matrix is left out, as its results are.
    sampled=((_key(3), ("soak", "perf")), ("model=other;task=t2v", ("g1",)), (_key(1), ("g2",))),
    full_campaign="full.yaml",
)


def test_rows_in_full_and_sampled_in_row_order_with_what_was_left_out(
    every_state_matrix: CompiledMatrix,
) -> None:
    view = run_report_view(RunEvidence(title="t", matrix=every_state_matrix, campaign=SCOPE))
    scope = view.campaign
    assert scope is not None
    assert [(r.label, r.anchor) for r in scope.in_full] == [("#1", "row-1"), ("#3", "row-3")]
    assert [(r.label, r.left_out) for r in scope.sampled] == [
        ("#2", ("g2",)), ("#4", ("soak", "perf")),
    ]  # fmt: skip


def test_both_formats_say_it_on_the_first_screen(every_state_matrix: CompiledMatrix) -> None:
    evidence = RunEvidence(title="t", matrix=every_state_matrix, campaign=SCOPE)
    md = render_run_report(evidence, "md")
    # After the findings: states, coverage map and findings stay above the fold.
    assert md.index("## Findings") < md.index("## Campaign scope") < md.index("## Runs and gates")
    assert "- **Qualified in full (2):** #1, #3" in md
    assert "- **Only sampled (2):** #2 (left out: g2); #4 (left out: soak, perf)" in md
    assert "the rest left to the full campaign, full.yaml" in md
    html = render_run_report(evidence, "html")
    assert ('<strong>Qualified in full (2):</strong> <a href="#row-1">#1</a>, '
            '<a href="#row-3">#3</a>') in html  # fmt: skip
    assert '<a href="#row-4">#4</a> (left out: soak, perf)' in html
    assert "### Campaign scope" in render_run_report(evidence, "step-summary")


def test_a_campaign_that_samples_every_row_says_none_in_full(
    every_state_matrix: CompiledMatrix,
) -> None:
    scope = CampaignScope("tour", (), ((_key(0), ("g1",)),))
    md = render_run_report(RunEvidence(title="t", matrix=every_state_matrix, campaign=scope), "md")
    assert "- **Qualified in full (0):** none" in md
    assert "another campaign" in md


def test_a_report_without_a_campaign_leaves_the_section_out(
    every_state_matrix: CompiledMatrix,
) -> None:
    evidence = RunEvidence(title="t", matrix=every_state_matrix)
    assert run_report_view(evidence).campaign is None
    assert "Campaign scope" not in render_run_report(evidence, "md")
    assert "Campaign scope" not in render_run_report(evidence, "html")
