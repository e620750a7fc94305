"""Matrix view-models: axis split, grouping, reasons, evidence, legend and counts."""

from collections.abc import Callable

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.blocks import NO_EVIDENCE
from omniqual.report.views import NO_REASON, matrix_view, safe_link, split_axes, state_class


def test_constant_axes_go_to_the_common_block(every_state_matrix: CompiledMatrix) -> None:
    common, varying = split_axes(every_state_matrix)
    assert common == (("model", "flux"), ("task", "t2i"), ("hardware", "h200"))
    assert varying == ("quantization",)


def test_rows_group_by_model_then_task_and_keep_their_order(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    matrix = make_matrix(
        make_row(CellState.VALIDATED, axes={"model": "wan", "task": "t2v", "quantization": "a"}),
        make_row(CellState.LIMITED, axes={"model": "flux", "quantization": "b"}),
        make_row(CellState.NOT_TESTED, axes={"model": "wan", "task": "t2v", "quantization": "c"}),
        make_row(CellState.NOT_TESTED, axes={"model": "wan", "task": "i2v", "quantization": "d"}),
    )
    view = matrix_view(matrix)
    assert [g.title for g in view.groups] == [
        "model=wan; task=t2v",
        "model=flux; task=t2i",
        "model=wan; task=i2v",
    ]
    assert view.groups[0].columns == ("quantization",)
    assert [r.cells for r in view.groups[0].rows] == [("a",), ("c",)]
    numbers = [r.number for g in view.groups for r in g.rows]
    assert numbers == [1, 2, 3, 4]


def test_single_group_when_no_grouping_axis_varies(every_state_matrix: CompiledMatrix) -> None:
    view = matrix_view(every_state_matrix)
    assert [g.title for g in view.groups] == ["all rows"]
    assert [r.state for r in view.groups[0].rows] == [s.value for s in CellState]


def test_counts_and_legend_cover_exactly_the_four_states(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    matrix = make_matrix(
        *(make_row(CellState.NOT_TESTED, axes={"quantization": f"n{i}"}) for i in range(3)),
        make_row(CellState.VALIDATED, axes={"quantization": "v"}),
    )
    view = matrix_view(matrix)
    assert [(c.state, c.count) for c in view.counts] == [
        ("validated", 1),
        ("limited", 0),
        ("unsupported", 0),
        ("not tested", 3),
    ]
    assert [e.state for e in view.legend] == ["validated", "limited", "unsupported", "not tested"]
    assert all(e.meaning for e in view.legend)
    assert view.total == 4


def test_non_validated_row_without_reasons_says_so(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    view = matrix_view(make_matrix(make_row(CellState.NOT_TESTED, reasons=())))
    row = view.groups[0].rows[0]
    assert row.reasons == (NO_REASON,)
    assert row.evidence_note == NO_EVIDENCE


def test_limitation_is_stated_even_when_reasons_omit_it(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    row = make_row(CellState.LIMITED, reasons=(), limitation="512x512 only")
    view_row = matrix_view(make_matrix(row)).groups[0].rows[0]
    assert view_row.reasons == ("limitation: 512x512 only",)


def test_promoted_row_without_evidence_is_flagged(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    view_row = (
        matrix_view(make_matrix(make_row(CellState.VALIDATED, evidence=()))).groups[0].rows[0]
    )
    assert view_row.evidence == ()
    assert "must link its evidence" in view_row.evidence_note


def test_evidence_links_carry_ids_and_sha_prefixes(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    view_row = matrix_view(make_matrix(make_row(CellState.VALIDATED))).groups[0].rows[0]
    (ev,) = view_row.evidence
    assert ev.link == "runs/run-1/result.json"
    assert ev.artifacts == ("ab" * 6,)
    assert ev.result_id.startswith("res-")
    assert view_row.gates == ("g1: no result",)


def test_declared_state_that_disagrees_with_the_evidence_is_noted(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    row = make_row(CellState.NOT_TESTED, declared=CellState.VALIDATED)
    view_row = matrix_view(make_matrix(row)).groups[0].rows[0]
    assert view_row.notes == ("declared 'validated', but the evidence says 'not tested'",)


def test_unsafe_link_schemes_are_dropped() -> None:
    assert safe_link("javascript:alert(1)") == ""
    assert safe_link("data:text/html,x") == ""
    assert safe_link("../runs/r/x.json") == "../runs/r/x.json"
    assert safe_link("https://example.org/r") == "https://example.org/r"


def test_state_class_spells_the_state() -> None:
    assert state_class(CellState.NOT_TESTED) == "state-not-tested"


def test_empty_matrix_has_no_groups(make_matrix: Callable[..., CompiledMatrix]) -> None:
    view = matrix_view(make_matrix())
    assert view.groups == () and view.common == () and view.total == 0
