"""Spec fuzz: the oracle every loader is held to, the inputs, and the selector fuzz.

Inputs are the shipped valid specs, mutated (a key dropped, a value of another type, unknown
keys, wrong enum strings, negative and huge numbers, empty lists, duplicate keys and items,
broken YAML syntax, non-UTF-8 bytes, control characters, deep nesting, tabs, small alias bombs
and recursive aliases), plus free-form YAML. Every input must give a loaded spec or a
:class:`SpecError` each of whose lines reads ``file:line: field: message``; any other exception
fails the test. A problem may lack its line only where the file has no YAML value to point at
(empty, blank, comments or document markers only).

Every fuzz test here and in ``test_spec_fuzz_loaders.py`` is derandomized (the same examples on
every run: CI cannot flake), has no deadline, and runs :data:`EXAMPLES` examples (>= 1,000 in
all: about 15 s on 2 cores).
"""

import copy
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from omniqual.domain.axes import Selector
from omniqual.specs.source import SpecError

REPO = Path(__file__).resolve().parents[3]
T = TypeVar("T")
YamlPath = tuple[str | int, ...]

EXAMPLES = {
    "gates": 120,
    "contracts": 110,
    "load_mappings": 90,
    "perf_baselines": 90,
    "campaigns": 90,
    "matrices": 120,
    "axes": 60,
    "feature_tables": 60,
    "recipes": 100,
    "free_form": 100,
    "selectors": 80,
}
"""Examples per fuzz test: at least 1,000 in all, and the whole fuzz well under a minute."""


def fuzz(name: str) -> settings:
    # function_scoped_fixture: each example rewrites the same tmp_path files on purpose;
    # too_slow is a timing check, so it could flake CI on a loaded host.
    return settings(
        max_examples=EXAMPLES[name],
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


# --- the oracle -------------------------------------------------------------------------------

_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
"""Line breaks as PyYAML counts them (its marks are what the loaders report)."""
_VALUELESS = re.compile(r"\s*((---|\.\.\.)(\s.*)?|%.*|#.*)?")


def _has_no_value(text: str) -> bool:
    """Nothing in the file a line could point at: blank, comments, directives, markers."""
    return all(_VALUELESS.fullmatch(line) for line in text.lstrip("\ufeff").splitlines())


def assert_located(error: SpecError) -> None:
    """Every problem is one ``file:line: field: message`` line about an existing file, its line
    inside that file; no line only for a file without any YAML value."""
    assert error.problems, "a SpecError names at least one problem"
    assert str(error) == "\n".join(str(p) for p in error.problems)
    for problem in error.problems:
        text = str(problem)
        assert not _BREAK.search(text), f"a problem spans lines: {text!r}"
        assert problem.message.strip(), text
        assert "Traceback" not in text and "<unicode string>" not in text, text
        assert Path(problem.file).is_file(), f"not located where the file is named: {text!r}"
        body = Path(problem.file).read_bytes().decode("utf-8", "replace")
        if problem.line is None:
            assert _has_no_value(body), f"no line for a file with content: {text!r}"
            assert text.startswith(f"{problem.file}: "), text
        else:
            assert 1 <= problem.line <= len(_BREAK.findall(body)) + 1, text
            assert text.startswith(f"{problem.file}:{problem.line}: "), text


def load_or_error(load: Callable[[], T]) -> T | SpecError:
    """The loaded spec, or the located SpecError; any other exception escapes (a failure)."""
    try:
        loaded = load()
    except SpecError as exc:
        assert_located(exc)
        event("spec error: " + ("YAML" if "YAML" in str(exc) or "UTF-8" in str(exc) else "schema"))
        return exc
    event("loaded")
    return loaded


# --- inputs -------------------------------------------------------------------------------------


@cache
def shipped(pattern: str) -> tuple[Path, ...]:
    found = tuple(sorted(REPO.glob(pattern)))
    assert found, pattern
    return found


@cache
def _text(path: Path) -> str:
    """Read once: a strategy must draw from the same input however often it runs."""
    return path.read_text(encoding="utf-8")


@cache
def _parsed(path: Path) -> object:
    return yaml.safe_load(_text(path))


def _paths(data: object, at: YamlPath = ()) -> list[YamlPath]:
    found = [at]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*at, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _paths(value, (*at, index))
    return found


def _get(data: object, path: YamlPath) -> object:
    for part in path:
        data = data[part]  # type: ignore[index]
    return data


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=30),
)
ANY_VALUE = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
NUMBERS = st.one_of(
    st.sampled_from([-1, 0, -0.5, 1e-300, 2**63, -(2**63) - 1, 10**30, 10**400, 1e308, -1e308,
                     float("inf"), float("-inf"), float("nan")]),
    st.integers(),
    st.floats(),
)  # fmt: skip
SELECTOR_TEXT = st.text(alphabet="abz_=|,*- \t.0", max_size=24)
STRINGS = st.one_of(
    st.text(max_size=40),
    SELECTOR_TEXT,
    st.sampled_from(["", " ", "TODO: fill in", "NONE", "x" * 300, "a\x00b", "../../..", "{port}",
                     "model=sd3-tiny,api_mode=images-generations", "[unclosed", "\U0001f600"]),
)  # fmt: skip


def _deep(depth: int, mapping: bool) -> str:
    """A value nested ``depth`` flow collections deep (the loaders' limit is 64)."""
    return "{a: " * depth + "1" + "}" * depth if mapping else "[" * depth + "1" + "]" * depth


RAW_SNIPPETS = st.one_of(
    st.builds(_deep, st.integers(1, 400), st.booleans()),
    st.sampled_from(
        [
            "9" * 5000,  # past Python's int-from-text digit limit
            "!!int abc", "!!float abc", "!!bool maybe", "!!timestamp 2020-13-45",
            "!!timestamp noon", "!!binary '!!!'", "!!set [1]", "!!omap 3",
            "!!python/name:os.system", "*undefined", "&rec [*rec]", "&rec {a: *rec}", "&x 1",
            "!local x", "? [1, 2]",
            "|\n  text", ">-", "'unterminated", '"\\x"', "@reserved", "`backtick",
        ]
    ),
)  # fmt: skip


OPS = ("drop", "retype", "unknown", "string", "number", "empty", "raw", "duplicate_item")


def _mutate_once(draw: st.DrawFn, data: object, raw: dict[str, str]) -> object:
    """``data`` with one key, value or list changed (in place where it can be); a raw YAML
    snippet goes in as a marker string that :func:`structural` replaces after dumping."""
    paths = _paths(data)
    under = {kind: [p for p in paths if isinstance(_get(data, p), kind)] for kind in
             (dict, list, str, (int, float))}  # fmt: skip
    keyed = [p for p in paths if p and isinstance(_get(data, p[:-1]), dict)]
    filled = [p for p in under[list] if _get(data, p)]
    op = draw(st.sampled_from(OPS))
    path: YamlPath = ()
    value: object
    if op == "drop" and keyed:
        path = draw(st.sampled_from(keyed))
        del _get(data, path[:-1])[path[-1]]  # type: ignore[attr-defined]
        return data
    if op == "unknown" and under[dict]:
        mapping = _get(data, draw(st.sampled_from(under[dict])))
        assert isinstance(mapping, dict)
        typos = [f"{k}s" for k in mapping] or ["x"]
        key = draw(st.text(min_size=1, max_size=15) | st.sampled_from(typos))
        mapping[key] = draw(ANY_VALUE)
        return data
    if op == "duplicate_item" and filled:
        items = _get(data, draw(st.sampled_from(filled)))
        assert isinstance(items, list)
        items.insert(draw(st.integers(0, len(items))), copy.deepcopy(draw(st.sampled_from(items))))
        return data
    if op == "string" and under[str]:
        path, value = draw(st.sampled_from(under[str])), draw(STRINGS)
    elif op == "number" and under[(int, float)]:
        path, value = draw(st.sampled_from(under[(int, float)])), draw(NUMBERS)
    elif op == "empty" and under[list] + under[dict]:
        path = draw(st.sampled_from(under[list] + under[dict]))
        value = [] if isinstance(_get(data, path), list) else {}
    elif op == "raw":
        marker = f"zzraw{len(raw)}zz"
        raw[marker] = draw(RAW_SNIPPETS)
        path, value = draw(st.sampled_from(paths)), marker
    else:
        path, value = draw(st.sampled_from(paths)), draw(ANY_VALUE)
    if not path:
        return value
    _get(data, path[:-1])[path[-1]] = value  # type: ignore[index]
    return data


@st.composite
def structural(draw: st.DrawFn, source: Path) -> str:
    """A shipped spec with one to three of its keys, values or lists changed, dumped again."""
    data = copy.deepcopy(_parsed(source))
    raw: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 3))):
        data = _mutate_once(draw, data, raw)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    for marker, snippet in raw.items():
        text = text.replace(marker, snippet)
    return text


JUNK = st.sampled_from(
    [":", ": ", "- ", "[", "]", "{", "}", "'", '"', "&a ", "*a ", "!", "%", "@", "`", "|", ">",
     "#", "? ", "\t", "\n", "---\n", "...\n", "  ", ",", "\\", "\x00", "\x07", "\x1b", "\x85",
     "\u2028", "\ufeff", "\r"]
)  # fmt: skip


def _bomb(width: int, depth: int) -> str:
    """At most ``width ** depth`` values once expanded; kept small here, the loaders' own
    limit is tested with a large one."""
    lines = [f"zz0: &zz0 [{', '.join(['x'] * width)}]"]
    for level in range(1, depth + 1):
        lines.append(f"zz{level}: &zz{level} [{', '.join([f'*zz{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


@st.composite
def textual(draw: st.DrawFn, text: str) -> bytes:
    """The text of a spec with its syntax broken somewhere."""
    lines = text.splitlines(keepends=True) or [""]
    at_line = draw(st.integers(0, len(lines) - 1))
    at = draw(st.integers(0, len(text)))
    op = draw(st.sampled_from(["dup_line", "delete_line", "junk", "bytes", "tabs", "truncate",
                               "crlf", "bom", "bomb", "recursive", "indent"]))  # fmt: skip
    if op == "dup_line":
        lines.insert(at_line, lines[at_line])
    elif op == "delete_line":
        del lines[at_line]
    elif op == "junk":
        return (text[:at] + draw(JUNK) + text[at:]).encode()
    elif op == "bytes":
        junk = draw(st.binary(min_size=1, max_size=3).map(lambda b: bytes(x | 0x80 for x in b)))
        return text[:at].encode() + junk + text[at:].encode()
    elif op == "tabs":
        lines = [re.sub("^(  )+", lambda m: "\t" * (len(m.group()) // 2), line) for line in lines]
    elif op == "truncate":
        return text[:at].encode()
    elif op == "crlf":
        return text.replace("\n", "\r\n").encode()
    elif op == "bom":
        return ("\ufeff" + text).encode()
    elif op == "bomb":
        width, depth = draw(st.integers(2, 6)), draw(st.integers(1, 5))
        return (_bomb(width, depth) + text).encode()
    elif op == "recursive":
        return ("zzr: &zzr [1, *zzr]\n" + text).encode()
    else:
        lines[at_line] = " " + lines[at_line] if draw(st.booleans()) else lines[at_line][1:]
    return "".join(lines).encode()


@st.composite
def mutated(draw: st.DrawFn, sources: tuple[Path, ...]) -> tuple[Path, bytes]:
    """(the shipped spec it came from, the mutated bytes)."""
    source = draw(st.sampled_from(sources))
    how = draw(st.sampled_from(["structural", "textual", "both"]))
    text = _text(source)
    if how != "textual":
        text = draw(structural(source))
    return source, draw(textual(text)) if how != "structural" else text.encode()


def free_form(keys: tuple[str, ...]) -> st.SearchStrategy[bytes]:
    """Any YAML: a mapping of known and unknown keys to anything, or arbitrary text."""
    mapping = st.dictionaries(st.sampled_from(keys) | st.text(max_size=10), ANY_VALUE, max_size=6)
    dumped = mapping.map(lambda d: yaml.safe_dump(d, allow_unicode=True).encode())
    text = st.text(alphabet=st.sampled_from([*"ab:- \n\t[]{}'\"&*!#|>,?%@0.~\x00"]),
                   max_size=60).map(str.encode)  # fmt: skip
    return st.one_of(dumped, text, st.binary(max_size=40))


def write(path: Path, content: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


# --- the oracle, held to itself -------------------------------------------------------------


def test_the_fuzz_runs_a_thousand_examples() -> None:
    assert sum(EXAMPLES.values()) >= 1000


def test_the_oracle_refuses_a_problem_without_a_line_in_a_file_with_content(
    tmp_path: Path,
) -> None:
    from omniqual.specs.source import SpecProblem

    path = write(tmp_path / "a.yaml", b"a: 1\n")
    with pytest.raises(AssertionError, match="no line for a file with content"):
        assert_located(SpecError([SpecProblem(str(path), None, "", "cannot read")]))
    with pytest.raises(AssertionError, match="not located where the file is named"):
        assert_located(SpecError([SpecProblem(str(tmp_path / "gone.yaml"), None, "", "missing")]))
    with pytest.raises(AssertionError):
        assert_located(SpecError([SpecProblem(str(path), 3, "a", "past the last line")]))
    empty = write(tmp_path / "b.yaml", b"# only a comment\n---\n")
    assert_located(SpecError([SpecProblem(str(empty), None, "", "expected a mapping")]))


# --- selectors ------------------------------------------------------------------------------


@fuzz("selectors")
@given(text=st.one_of(SELECTOR_TEXT, st.text(max_size=30)))
@example(text="model=sd3-tiny,api_mode=images-generations")
@example(text="=x")
@example(text="a=|")
@example(text="a=b=c, ,task=t2i|*")
def test_selectors_parse_or_say_which_term_is_wrong(text: str) -> None:
    try:
        selector = Selector.parse(text)
    except ValueError as exc:
        assert str(exc).startswith("selector term ") and str(exc).endswith(" is not axis=value")
        return
    for axis, values in selector.terms:
        assert axis and axis == axis.strip() and "," not in axis, selector
        assert values and all(v and v == v.strip() and "|" not in v for v in values), selector
    assert Selector.parse(str(selector)) == selector  # the printed form reads back the same
