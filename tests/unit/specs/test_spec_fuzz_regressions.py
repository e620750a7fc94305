"""Every input the spec fuzz found escaping as a traceback (or loading a spec that judges
nothing), kept as a plain test: each now gives a SpecError located at the offending line."""

import shutil
import time
from pathlib import Path

import pytest
import yaml

from omniqual.domain.gate import GateSpec
from omniqual.specs import source
from omniqual.specs.campaign import load_campaign
from omniqual.specs.contracts import load_contract
from omniqual.specs.feature_tables import FEATURES_FILE, load_feature_tables
from omniqual.specs.matrix import load_matrix
from omniqual.specs.perf_baseline import load_baseline
from omniqual.specs.source import SpecError, load_spec
from tests.unit.specs.test_spec_fuzz import REPO, assert_located, write


def problem_of(path: Path) -> str:
    """The one problem loading ``path`` as a gate spec gives, checked by the fuzz's oracle."""
    with pytest.raises(SpecError) as caught:
        load_spec(path, GateSpec)
    assert_located(caught.value)
    assert len(caught.value.problems) == 1, caught.value
    return str(caught.value.problems[0])


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("id: a\nloop: &loop [1, *loop]\n", 2),
        ("id: a\nloop: &loop\n  again: *loop\n", 3),
    ],
)
def test_a_recursive_alias_is_a_located_error(tmp_path: Path, text: str, line: int) -> None:
    # Was: RecursionError while indexing lines (the node graph had a cycle).
    found = problem_of(write(tmp_path / "g.yaml", text.encode()))
    assert (
        f"g.yaml:{line}: (document): malformed YAML: alias *loop refers to a collection " in found
    )


@pytest.mark.parametrize("flow", ["[]", "{}"])
def test_nesting_past_the_limit_is_a_located_error(tmp_path: Path, flow: str) -> None:
    # Was: RecursionError in the YAML composer (about 500 levels); the limit says it plainly.
    depth = 2000
    value = "[" * depth + "]" * depth if flow == "[]" else "{a: " * depth + "1" + "}" * depth
    found = problem_of(write(tmp_path / "g.yaml", f"id: a\nkind: x\nnested: {value}\n".encode()))
    assert (
        f"g.yaml:3: (document): malformed YAML: nested deeper than {source.MAX_DEPTH} levels"
        in found
    )


def test_nesting_up_to_the_limit_loads(tmp_path: Path) -> None:
    def gate(lists: int) -> Path:  # the top mapping, params and this many lists deep
        value = "[" * lists + "]" * lists
        text = f"id: a\nkind: x\nversion: 1\nparams: {{v: {value}}}\n"
        return write(tmp_path / "g.yaml", text.encode())

    assert load_spec(gate(source.MAX_DEPTH - 2), GateSpec)[0].id == "a"
    assert "g.yaml:4: (document): malformed YAML: nested deeper" in problem_of(
        gate(source.MAX_DEPTH - 1)
    )


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    # Was: loaded after walking every repetition in the line index, the TODO scan and pydantic
    # (a second for these 10**5 values, forever for 10**9); the composer now counts values as
    # aliases repeat them.
    lines = ["id: a", "b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, 5)]
    started = time.monotonic()
    found = problem_of(write(tmp_path / "g.yaml", ("\n".join(lines) + "\n").encode()))
    assert time.monotonic() - started < 5
    assert "g.yaml:6: (document): malformed YAML: " in found
    assert f"expands to more than {source.MAX_VALUES} values through aliases" in found


def test_anchors_and_aliases_of_a_shipped_contract_still_load() -> None:
    assert load_contract(REPO / "gates" / "contracts" / "wan-t2v-tiny.yaml").endpoints


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("!!int abc", "not a valid !!int"),
        ("!!float abc", "not a valid !!float"),
        ("!!bool maybe", "not a valid !!bool"),
        ("!!timestamp 2020-13-45", "not a valid !!timestamp"),
        ("!!timestamp noon", "not a valid !!timestamp"),
        ("9" * 5000, "not a valid !!int"),
    ],
)
def test_a_scalar_yaml_cannot_construct_is_a_located_error(
    tmp_path: Path, value: str, says: str
) -> None:
    # Was: ValueError, KeyError or AttributeError out of PyYAML's constructors.
    found = problem_of(write(tmp_path / "g.yaml", f"id: a\nkind: x\nversion: {value}\n".encode()))
    assert f"g.yaml:3: (document): malformed YAML: {says}" in found


def test_a_byte_that_is_not_utf8_is_located(tmp_path: Path) -> None:
    # Was: no line ("cannot read: 'utf-8' codec can't decode byte ...").
    found = problem_of(write(tmp_path / "g.yaml", b"id: a\nkind: x\ntitle: caf\xe9\n"))
    assert "g.yaml:3: (document): not UTF-8 text: byte 0xe9" in found


def test_a_control_character_is_located_on_one_line(tmp_path: Path) -> None:
    # Was: no line, and PyYAML's two-line message ('in "<unicode string>", position 14').
    found = problem_of(write(tmp_path / "g.yaml", b"id: a\r\nkind: x\r\ntitle: \x00\n"))
    assert found.endswith(
        "g.yaml:3: (document): malformed YAML: unacceptable character #x0000: "
        "special characters are not allowed"
    )


def _contract_with(tmp_path: Path, limit: str) -> Path:
    text = (REPO / "gates" / "contracts" / "sd3-tiny.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    field = next(f for f in data["endpoints"][0]["fields"] if f["type"] == "int" and "max" in f)
    field["max"] = "zzlimit"
    return write(
        tmp_path / "sd3-tiny.yaml", yaml.safe_dump(data).replace("zzlimit", limit).encode()
    )


@pytest.mark.parametrize("limit", [".inf", ".nan", "-.inf"])
def test_a_contract_limit_that_is_not_a_finite_number_is_refused(
    tmp_path: Path, limit: str
) -> None:
    # Was: OverflowError / ValueError from int(inf) / int(nan) in the whole-number check.
    with pytest.raises(SpecError) as caught:
        load_contract(_contract_with(tmp_path, limit))
    assert_located(caught.value)
    assert ".max: max must be a finite number" in str(caught.value)


def test_a_huge_contract_limit_is_reported_not_overflowed(tmp_path: Path) -> None:
    # Was: OverflowError formatting a 400-digit min with :g in "min is greater than max".
    path = _contract_with(tmp_path, "-" + "9" * 400)
    with pytest.raises(SpecError) as caught:
        load_contract(path)
    assert_located(caught.value)
    assert f"is greater than max -{'9' * 400}" in str(caught.value)


def test_a_perf_baseline_of_nan_is_refused(tmp_path: Path) -> None:
    # Was: loaded; a NaN mean compares false with everything, so no run could regress.
    source = next((REPO / "gates" / "perf-baselines").glob("*.yaml"))
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["evidence"]["repetitions"] = [float("nan")] * len(data["evidence"]["repetitions"])
    data["evidence"]["mean"] = float("nan")
    with pytest.raises(SpecError) as caught:
        load_baseline(write(tmp_path / source.name, yaml.safe_dump(data).encode()))
    assert_located(caught.value)
    assert "evidence.mean: Input should be a finite number" in str(caught.value)


def test_a_campaign_naming_a_too_long_file_is_a_located_error(tmp_path: Path) -> None:
    # Was: OSError (File name too long) out of Path.is_file.
    path = write(
        tmp_path / "c.yaml", f"name: c\nmatrix: m.yaml\nfull_campaign: {'x' * 300}\n".encode()
    )
    with pytest.raises(SpecError) as caught:
        load_campaign(path)
    assert_located(caught.value)
    assert str(caught.value).endswith("c.yaml:3: full_campaign: no such campaign file")


@pytest.mark.parametrize("axes_file", ["missing.yaml", '"a\\0b"', "'.'", "empty.yaml"])
def test_an_axes_file_that_cannot_be_read_is_reported_where_it_is_named(
    tmp_path: Path, axes_file: str
) -> None:
    # Was: ValueError (embedded null byte), or a problem about the axes file with no line.
    write(tmp_path / "empty.yaml", b"")
    matrix = write(tmp_path / "m.yaml", f"name: m\naxes_file: {axes_file}\n".encode())
    features = write(tmp_path / FEATURES_FILE, f"axes_file: {axes_file}\nsections: [{{name: s, "
                     "tasks: [t2i]}]\ncolumns: [{label: c}]\n".encode())  # fmt: skip
    for path, line, load in ((matrix, 2, load_matrix), (features, 1, load_feature_tables)):
        with pytest.raises(SpecError) as caught:
            load(path)
        assert_located(caught.value)
        assert str(caught.value).startswith(f"{path}:{line}: axes_file: {tmp_path}"), caught.value


def test_the_shipped_specs_still_load(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    load_campaign(tmp_path / "examples" / "embedded-cpu-campaign.yaml")
    load_feature_tables(REPO / "matrices" / FEATURES_FILE)
    for path in (REPO / "gates" / "perf-baselines").glob("*.yaml"):
        load_baseline(path)


@pytest.mark.parametrize(
    ("key", "shown"), [('"\\r"', "\\r"), ('"a\\nb"', "a\\nb"), ('"\\x85"', "\\x85")]
)
def test_a_key_with_a_line_break_stays_on_the_problems_line(
    tmp_path: Path, key: str, shown: str
) -> None:
    # Was: "g.yaml:4: <CR>: Extra inputs are not permitted", one problem read as two lines.
    path = write(tmp_path / "g.yaml", f"id: a\nkind: x\nversion: 1\n{key}: 1\n".encode())
    assert problem_of(path).endswith(f"g.yaml:4: {shown}: Extra inputs are not permitted")


def test_a_yaml_error_says_where_what_it_was_reading_began(tmp_path: Path) -> None:
    # Was: "g.yaml:3: (document): malformed YAML: second occurrence" (PyYAML's problem alone).
    path = write(tmp_path / "g.yaml", b"id: a\nx: &dup 1\ny: &dup 2\n")
    assert problem_of(path).endswith(
        "g.yaml:3: (document): malformed YAML: found duplicate anchor 'dup'; first occurrence "
        "(line 2), second occurrence"
    )
