"""``omniqual model init`` and the TODOs ``matrix validate`` reports until they are filled in
(fake server through the engine's transport, no sockets)."""

import functools
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.model_init import draft
from omniqual.specs.source import SpecError, load_yaml, todo_problems, validate_document
from tests.fakes import FakeConfig, FakeOmni
from tests.unit.engine.test_model_init_draft import FULL_DOD, URL, project, with_version

runner = CliRunner()


@pytest.fixture
def drafted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`model init sd3-new` run from the project root against the fake; returns the root."""
    root = project(tmp_path).root
    fake = FakeOmni(FakeConfig(model_name="org/sd3-new"))
    transport = with_version(fake, {"version": "0.30.0"})
    patched = functools.partial(draft.init_model, transport=transport)
    monkeypatch.setattr("omniqual.cli.model.init_model", patched)
    monkeypatch.chdir(root)
    result = runner.invoke(app, ["model", "init", "sd3-new", "--target", URL])
    assert result.exit_code == 0, result.output
    assert "drafted matrices/sd3-new.yaml" in result.stdout
    assert f"omniqual gate run api-contract --target {URL} --matrix matrices/sd3-new.yaml" in (
        result.stdout)  # fmt: skip
    assert "omniqual matrix compile matrices/sd3-new.yaml" in result.stdout
    return root


def fill(root: Path) -> None:
    """What the contributor does: every TODO replaced by a value (with its source)."""
    for path, keys in ((root / "matrices/sd3-new.yaml", ("defaults",)),
                       (root / "runners/sd3-new.yaml", ("row",))):  # fmt: skip
        data = yaml.safe_load(path.read_text())
        data[keys[0]].update(hardware="cpu-x86_64-2core-avx2", dtype="bf16")
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    path = root / "gates/contracts/sd3-new.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(checkpoint="org/sd3-new main", official="the fake's FakeConfig")
    endpoint = data["endpoints"][0]
    endpoint["probe"]["size"] = "64x64"
    for field in endpoint["fields"]:
        if field["name"] == "size":
            field.update(default="64x64", min=16, max=2048, multiple_of=16, misaligned="reject",
                         source="FakeConfig min_side, max_side, size_multiple")  # fmt: skip
        if str(field.get("default", "")).startswith("TODO"):
            del field["default"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_validate_reports_every_todo_of_the_three_files_then_accepts_them(drafted: Path) -> None:
    result = runner.invoke(app, ["matrix", "validate", "matrices/sd3-new.yaml"])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert all(": TODO" in line for line in lines) and len(lines) >= 10
    assert any(line.startswith("matrices/sd3-new.yaml:") and ": defaults.hardware: TODO" in line
               for line in lines)  # fmt: skip
    assert any(line.startswith("gates/contracts/sd3-new.yaml:")
               and "endpoints.0.fields.2.max: TODO" in line for line in lines)  # fmt: skip
    assert any(line.startswith("runners/sd3-new.yaml:") and ": row.dtype: TODO" in line
               for line in lines)  # fmt: skip
    fill(drafted)
    result = runner.invoke(app, ["matrix", "validate", "matrices/sd3-new.yaml"])
    assert result.exit_code == 0, result.output
    assert "1 rows" in result.stdout


def test_the_drafted_row_is_held_to_the_dod_and_cannot_be_shortened(drafted: Path) -> None:
    fill(drafted)
    path = drafted / "matrices/sd3-new.yaml"
    data = yaml.safe_load(path.read_text())
    assert data["rows"][0]["requires"] == list(FULL_DOD)
    data["rows"][0]["requires"] = ["api-contract", "abort", "soak"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = runner.invoke(app, ["matrix", "validate", "matrices/sd3-new.yaml"])
    assert result.exit_code == 2
    assert "rows.0.requires" in result.stderr and "missing strict-load, reference-parity" in (
        result.stderr)  # fmt: skip


def test_next_steps_run_every_drafted_gate_the_url_can_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path).root
    fake = FakeOmni(FakeConfig(model_name="org/sd3-new"))
    patched = functools.partial(draft.init_model, transport=with_version(fake, None))
    monkeypatch.setattr("omniqual.cli.model.init_model", patched)
    monkeypatch.chdir(root)
    result = runner.invoke(app, ["model", "init", "sd3-new", "--target", URL])
    assert result.exit_code == 0, result.output
    runs = [line.split()[3] for line in result.stdout.splitlines()
            if line.strip().startswith("omniqual gate run")]  # fmt: skip
    assert runs == [g for g in FULL_DOD if g != "strict-load"]
    assert "omniqual reference build" in result.stdout and "strict-load" in result.stdout


def test_a_todo_is_reported_at_its_line_by_every_loader(drafted: Path) -> None:
    doc = load_yaml(drafted / "runners/sd3-new.yaml")
    problems = todo_problems(doc)
    text = (drafted / "runners/sd3-new.yaml").read_text().splitlines()
    for problem in problems:
        assert problem.line is not None and "TODO" in text[problem.line - 1]
    with pytest.raises(SpecError) as raised:
        validate_document(doc, LaunchRecipe)
    assert {p.field for p in raised.value.problems} == {"row.hardware", "row.dtype"}


def test_a_second_init_is_a_usage_error_naming_force(drafted: Path) -> None:
    result = runner.invoke(app, ["model", "init", "sd3-new", "--target", URL])
    assert result.exit_code == 2
    assert "--force" in result.stderr


def test_a_target_that_is_no_url_and_an_unknown_task_are_usage_errors(drafted: Path) -> None:
    result = runner.invoke(app, ["model", "init", "x", "--target", "sd3-tiny"])
    assert result.exit_code == 2 and "URL" in result.stderr
    result = runner.invoke(app, ["model", "init", "x", "--target", URL, "--task", "t2z"])
    assert result.exit_code == 2 and "t2z" in result.stderr
