"""YAML loading keeps a line for every key and reports problems as file:line: field: message."""

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from omniqual.specs.source import SpecError, load_yaml, validate_document


class Thing(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    count: int


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_lines_are_kept_for_keys_and_items(tmp_path: Path) -> None:
    doc = load_yaml(write(tmp_path, "a: 1\nb:\n  - x\n  - y: 2\n"))
    assert doc.line_of(("a",)) == 1
    assert doc.line_of(("b", 1, "y")) == 4
    assert doc.line_of(("b", 1, "missing")) == 4


def test_validation_problems_are_located(tmp_path: Path) -> None:
    doc = load_yaml(write(tmp_path, "name: n\ncount: many\nextra: 1\n"))
    with pytest.raises(SpecError) as caught:
        validate_document(doc, Thing)
    text = str(caught.value)
    assert "spec.yaml:2: count:" in text
    assert "spec.yaml:3: extra: Extra inputs are not permitted" in text


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_yaml(write(tmp_path, "a: 1\nb: [1, 2\nc: 3\n"))
    assert caught.value.problems[0].line is not None
    assert "malformed YAML" in str(caught.value)


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"spec.yaml:2: a: duplicate key"):
        load_yaml(write(tmp_path, "a: 1\na: 2\n"))


def test_missing_file_is_one_clear_problem(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        load_yaml(tmp_path / "nope.yaml")


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="expected a mapping"):
        validate_document(load_yaml(write(tmp_path, "- 1\n")), Thing)
