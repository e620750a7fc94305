"""Matrix diffs: added, removed and changed rows, with the why on both sides."""

import json
from collections.abc import Callable
from datetime import timedelta

from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.report.diff import diff_matrices
from omniqual.report.render import render_diff


def test_diff_lists_added_removed_and_changed_rows(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    same = make_row(CellState.UNSUPPORTED, axes={"quantization": "same"})
    before = make_matrix(
        same,
        make_row(CellState.NOT_TESTED, axes={"quantization": "fp8"}),
        make_row(CellState.LIMITED, axes={"quantization": "gone"}),
    )
    after = make_matrix(
        same,
        make_row(CellState.VALIDATED, axes={"quantization": "fp8"}),
        make_row(CellState.NOT_TESTED, axes={"quantization": "new"}),
        at=before.compiled_at + timedelta(days=1),
    )
    diff = diff_matrices(before, after)
    assert [c.key.split(";")[2] for c in diff.added] == ["quantization=new"]
    assert [c.key.split(";")[2] for c in diff.removed] == ["quantization=gone"]
    (changed,) = diff.changed
    assert changed.old is not None and changed.new is not None
    assert (changed.old.state, changed.new.state) == ("not tested", "validated")
    assert changed.old.reasons == ("why not tested",)
    assert changed.new.evidence == (
        "run-1/res-model=flux;task=t2i;quantization=fp8;hardware=h200 (g1: passed)",
    )
    assert diff.unchanged == 1 and not diff.empty


def test_identical_matrices_have_an_empty_diff(
    make_matrix: Callable[..., CompiledMatrix], make_row: Callable[..., CompiledRow]
) -> None:
    matrix = make_matrix(make_row(CellState.VALIDATED))
    diff = diff_matrices(matrix, matrix)
    assert diff.empty and diff.unchanged == 1
    assert "State changed: 0; added: 0; removed: 0; unchanged: 1" in render_diff(diff, "md")


def test_axis_changes_are_reported(make_matrix: Callable[..., CompiledMatrix]) -> None:
    before = make_matrix()
    after = before.model_copy(update={"axes": (*before.axes, "dtype")})
    diff = diff_matrices(before, after)
    assert diff.axes_added == ("dtype",) and diff.axes_removed == ()


def test_diff_renders_as_sorted_json(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    diff = diff_matrices(make_matrix(), make_matrix(make_row(CellState.NOT_TESTED)))
    text = render_diff(diff, "json")
    data = json.loads(text)
    assert data["added"][0]["new"]["state"] == "not tested"
    assert list(data) == sorted(data)
