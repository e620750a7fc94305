"""YAML spec files with line numbers, and spec errors that say ``file:line: field: message``.

Every spec loader in omniqual reads through :func:`load_yaml` and validates through
:func:`validate_document`, so a user always gets every problem at once, each located.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

Loc = tuple[str | int, ...]
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class SpecProblem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field or '(document)'}: {self.message}"


class SpecError(Exception):
    """One or more problems in spec files; ``str()`` lists them one per line."""

    def __init__(self, problems: Iterable[SpecProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True, slots=True)
class YamlDocument:
    path: Path
    data: object
    lines: dict[Loc, int]

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest node on ``loc`` that exists in the file (1-based)."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None

    def problem(self, loc: Loc, message: str) -> SpecProblem:
        field = ".".join(str(part) for part in loc)
        return SpecProblem(str(self.path), self.line_of(loc), field, message)


def _index(
    node: yaml.Node, loc: Loc, lines: dict[Loc, int], dupes: list[SpecProblem], path: str
) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                where = ".".join(str(p) for p in (*loc, key))
                dupes.append(
                    SpecProblem(path, key_node.start_mark.line + 1, where, "duplicate key")
                )
            seen.add(key)
            lines[(*loc, key)] = key_node.start_mark.line + 1
            _index(value_node, (*loc, key), lines, dupes, path)
            # pydantic reports a field's value problems at the key's location.
            lines[(*loc, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, (*loc, i), lines, dupes, path)


def load_yaml(path: Path) -> YamlDocument:
    """Parse one YAML file, keeping a line for every key and item."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError([SpecProblem(name, None, "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([SpecProblem(name, None, "", f"cannot read: {exc}")]) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise SpecError([SpecProblem(name, line, "", f"malformed YAML: {exc.problem}")]) from None
    except yaml.YAMLError as exc:
        raise SpecError([SpecProblem(name, None, "", f"malformed YAML: {exc}")]) from None
    lines: dict[Loc, int] = {}
    dupes: list[SpecProblem] = []
    if node is not None:
        _index(node, (), lines, dupes, name)
    if dupes:
        raise SpecError(dupes)
    return YamlDocument(path, data, lines)


def problems_from_validation(doc: YamlDocument, error: ValidationError) -> list[SpecProblem]:
    found = []
    for item in error.errors(include_url=False):
        loc = tuple(part for part in item["loc"] if not _is_union_tag(part))
        found.append(doc.problem(loc, item["msg"]))
    return found


def _is_union_tag(part: str | int) -> bool:
    # pydantic inserts the model name of a union member into ``loc``; it is not a YAML key.
    return isinstance(part, str) and part[:1].isupper()


TODO_MARK = "TODO"
"""A value left for a person to fill in (``model init`` drafts them): never a valid spec."""


def todo_problems(doc: YamlDocument) -> list[SpecProblem]:
    """Every string value that starts with ``TODO``, as ``file:line: field: TODO …``."""
    found: list[SpecProblem] = []

    def walk(node: object, loc: Loc) -> None:
        if isinstance(node, str) and node.lstrip().startswith(TODO_MARK):
            found.append(doc.problem(loc, " ".join(node.split())))
        elif isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*loc, str(key)))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*loc, index))

    walk(doc.data, ())
    return found


def validate_document(doc: YamlDocument, model: type[ModelT]) -> ModelT:
    """Validate a document against a pydantic model, raising SpecError with every problem
    (values still marked TODO first: a half-filled draft is reported as such)."""
    if not isinstance(doc.data, dict):
        raise SpecError([doc.problem((), "expected a mapping at the top level")])
    todos = todo_problems(doc)
    if todos:
        raise SpecError(todos)
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        raise SpecError(problems_from_validation(doc, exc)) from None


def load_spec(path: Path, model: type[ModelT]) -> tuple[ModelT, YamlDocument]:
    doc = load_yaml(path)
    return validate_document(doc, model), doc
