"""Values left as ``TODO`` (``model init`` drafts them) fail every spec loader first, each at its
own line and field, before any schema rule speaks."""

from pathlib import Path

import pytest

from omniqual.domain.recipe import LaunchRecipe
from omniqual.specs.source import SpecError, load_spec, load_yaml, todo_problems


def test_each_todo_is_reported_with_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "id: r\n"
        "description: the TODO list in prose is no TODO value\n"
        "kind: url\n"
        "url: http://h:1\n"
        "row:\n"
        "  hardware: 'TODO: the accelerator'\n"
        "  dtype:   TODO pick one\n"
        "notes: [fine, 'TODO: nested in a list']\n"
    )
    problems = todo_problems(load_yaml(path))
    assert [(p.line, p.field, p.message) for p in problems] == [
        (6, "row.hardware", "TODO: the accelerator"),
        (7, "row.dtype", "TODO pick one"),
        (8, "notes.1", "TODO: nested in a list"),
    ]
    assert str(problems[0]) == f"{path}:6: row.hardware: TODO: the accelerator"


def test_todos_come_before_schema_errors(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("id: r\nkind: url\nurl: 'TODO: the URL'\nbogus: 1\n")
    with pytest.raises(SpecError) as raised:
        load_spec(path, LaunchRecipe)
    assert [p.field for p in raised.value.problems] == ["url"]
