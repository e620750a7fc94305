"""YAML spec files with line numbers, and spec errors that say ``file:line: field: message``.

Every spec loader in omniqual reads through :func:`load_yaml` and validates through
:func:`validate_document`, so a user always gets every problem at once, each located.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

Loc = tuple[str | int, ...]
ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_DEPTH = 64
"""Deepest nesting of collections a spec file may have. Shipped specs nest under ten levels; the
YAML composer recurses about twice per level, so without a limit a hostile file ends the
process's stack in a RecursionError instead of a located error."""
MAX_VALUES = 100_000
"""Most values a spec file may hold once its aliases are expanded (the largest shipped spec holds
about 500). Every later step walks the expanded document, so a few lines of nested aliases (an
alias bomb) would otherwise take forever to load."""


@dataclass(frozen=True, slots=True)
class SpecProblem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        text = f"{where}: {self.field or '(document)'}: {self.message}"
        # One problem, one line: a YAML key may hold a line break or another control character.
        return _CONTROL.sub(lambda found: repr(found.group())[1:-1], text)


_CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


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


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader held to the limits above, and with every failure a YAML error that
    has a mark (the line), never a RecursionError or a constructor's ValueError."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._open: set[str] = set()
        """Anchors of the collections being composed: an alias to one is a cycle."""
        self._values: dict[int, int] = {}
        """Values each composed collection expands to, by ``id`` of its node."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped stub
        # The pure-Python loader's marks; the stubs' union also names the C loader's type.
        mark = event.start_mark if isinstance(event.start_mark, yaml.Mark) else None
        if isinstance(event, yaml.AliasEvent) and event.anchor in self._open:
            message = f"alias *{event.anchor} refers to a collection that contains it"
            raise ComposerError(None, None, message, mark)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        anchor = event.anchor if isinstance(event, yaml.CollectionStartEvent) else None
        if anchor is not None:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open.discard(anchor or "")
        if id(node) in self._values:  # an alias: the anchored collection, counted again
            return node
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            return node
        values = 1 + sum(self._values.get(id(child), 1) for child in children)
        if values > MAX_VALUES:
            message = f"expands to more than {MAX_VALUES} values through aliases"
            raise ComposerError(None, None, message, node.start_mark)
        self._values[id(node)] = values
        return node

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as exc:
            # PyYAML's scalar constructors raise these for `!!int abc`, `!!bool maybe`, a
            # 5,000-digit integer or `!!timestamp 2020-13-45`.
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise ConstructorError(None, None, f"not a valid {tag} value ({exc})",
                                   node.start_mark) from None  # fmt: skip


_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
"""Line breaks as PyYAML counts them, so a line found here is the line its marks would say."""


def _line_at(text: str, index: int) -> int:
    return len(_LINE_BREAK.findall(text, 0, index)) + 1


def _parse(name: str, text: str) -> tuple[yaml.Node | None, object]:
    """The node tree (for lines) and the data of one YAML document, or SpecError."""
    try:
        loader = _SpecLoader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML forbids, found before parsing
        message = f"malformed YAML: unacceptable character #x{exc.character:04x}: {exc.reason}"
        raise SpecError([SpecProblem(name, _line_at(text, exc.position), "", message)]) from None
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        # The context says what was being read ("found duplicate anchor 'a'; first occurrence")
        # and where it began, when the problem alone would not ("second occurrence").
        context = exc.context or ""
        began = exc.context_mark.line + 1 if exc.context_mark is not None else line
        if context and began != line:
            context += f" (line {began})"
        said = ", ".join(part for part in (context, exc.problem or "") if part)
        raise SpecError([SpecProblem(name, line, "", f"malformed YAML: {said}")]) from None
    except yaml.YAMLError as exc:
        message = " ".join(f"malformed YAML: {exc}".split())
        raise SpecError([SpecProblem(name, None, "", message)]) from None
    finally:
        loader.dispose()


def load_yaml(path: Path) -> YamlDocument:
    """Parse one YAML file, keeping a line for every key and item."""
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError([SpecProblem(name, None, "", "file not found")]) from None
    except (OSError, ValueError) as exc:  # ValueError: a path with a NUL, named by a spec
        raise SpecError([SpecProblem(name, None, "", f"cannot read: {exc}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8")
        message = f"not UTF-8 text: byte 0x{raw[exc.start]:02x} ({exc.reason})"
        raise SpecError([SpecProblem(name, _line_at(before, len(before)), "", message)]) from None
    node, data = _parse(name, text)
    lines: dict[Loc, int] = {}
    dupes: list[SpecProblem] = []
    if node is not None:
        _index(node, (), lines, dupes, name)
    if dupes:
        raise SpecError(dupes)
    return YamlDocument(path, data, lines)


def located_where_named(doc: YamlDocument, loc: Loc, error: SpecError) -> SpecError:
    """``error`` from loading a file that ``doc`` names at ``loc``: a problem with no line of its
    own (the file is missing, unreadable or empty) is reported where the file is named."""
    return SpecError(
        problem if problem.line is not None
        else doc.problem(loc, f"{problem.file}: {problem.message}")
        for problem in error.problems
    )  # fmt: skip


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
