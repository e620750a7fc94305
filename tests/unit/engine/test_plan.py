"""The planner: recipes declare their whole deployment key, every declared axis is checked, and
recipes that are one serve configuration under two names are reported."""

from pathlib import Path

import pytest

from omniqual.domain.axes import Selector
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.engine.run.plan import make_plan, same_serve_configs
from omniqual.engine.targets.served_identity import REQUEST_AXES
from omniqual.specs.recipes import load_recipes
from omniqual.specs.source import SpecError
from tests.fakes.projects import make_project

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return make_project(tmp_path, monkeypatch)


def _plan(project: Path) -> tuple[str, ...]:
    loaded = load_project_matrix(project / "matrices" / "m.yaml")
    return make_plan(loaded, load_recipes(project / "runners"), Selector.parse(""), ()).notes


def test_a_recipe_that_does_not_declare_its_model_is_a_spec_error(project: Path) -> None:
    (project / "runners" / "live.yaml").write_text(
        "id: live\ndescription: d\nkind: url\nurl: http://127.0.0.1:9\n"
        "row: {quantization: none, hardware: cpu}\n"
    )
    with pytest.raises(SpecError, match="recipe 'live' does not declare axis 'model'"):
        _plan(project)


def test_every_declared_axis_is_checked_the_model_included(project: Path) -> None:
    (project / "runners" / "live.yaml").write_text(
        "id: live\ndescription: d\nkind: url\nurl: http://127.0.0.1:9\n"
        "row: {model: another, quantization: none, hardware: cpu}\n"
    )
    with pytest.raises(SpecError, match="realizes model=another, the row has m"):
        _plan(project)


def _command(recipe_id: str, flags: str) -> str:
    return (
        f"id: {recipe_id}\ndescription: d\nkind: command\nmodel: /models/Qwen-Image\n"
        "command: [vllm, serve, '{model}', --omni, --port, '{port}']\n"
        f"flags: {flags}\nrow: {{model: m, quantization: none, hardware: cpu}}\n"
    )


def test_recipes_that_normalize_to_one_configuration_are_reported(project: Path) -> None:
    runners, matrix = project / "runners", project / "matrices" / "m.yaml"
    (runners / "a.yaml").write_text(_command("a", "{max-num-seqs: 2, cache-backend: none}"))
    (runners / "b.yaml").write_text(_command("b", "{max-num-seqs: '2.0'}"))
    (runners / "c.yaml").write_text(_command("c", "{max-num-seqs: 4}"))
    matrix.write_text(
        "name: m\ndefaults: {hardware: cpu, model: m, quantization: none}\nrows:\n"
        + "".join(
            f"  - key: {{task: {t}}}\n    recipe: {r}\n    requires: [good]\n"
            for t, r in (("t2i", "a"), ("t2v", "b"))
        )
    )
    (notes,) = _plan(project)
    assert "recipes a, b normalize to the same serve configuration" in notes
    loaded = load_project_matrix(matrix)
    assert same_serve_configs(loaded, load_recipes(runners), ["a", "c"]) == ()


def test_shipped_recipes_declare_every_deployment_axis() -> None:
    loaded = load_project_matrix(REPO / "matrices" / "embedded-cpu.yaml")
    deployment_axes = [a for a in loaded.matrix.catalog.names() if a not in REQUEST_AXES]
    for entry in load_recipes(REPO / "runners").entries:
        missing = [a for a in deployment_axes if a not in entry.recipe.row]
        assert not missing, f"{entry.path}: row does not declare {missing}"
    plan = make_plan(loaded, load_recipes(REPO / "runners"), Selector.parse(""), ())
    assert plan.size > 0 and plan.notes == ()


def test_matrix_validate_notes_recipes_with_one_configuration(project: Path) -> None:
    from typer.testing import CliRunner

    from omniqual.cli.main import app

    runners, matrix = project / "runners", project / "matrices" / "m.yaml"
    (runners / "a.yaml").write_text(_command("a", "{step-execution: true}"))
    (runners / "b.yaml").write_text(_command("b", "{step-execution: true, dtype: auto}"))
    matrix.write_text(
        "name: m\ndefaults: {hardware: cpu, model: m, quantization: none}\nrows:\n"
        "  - key: {task: t2i}\n    recipe: a\n    requires: [good]\n"
        "  - key: {task: t2v}\n    recipe: b\n    requires: [good]\n"
    )
    result = CliRunner().invoke(app, ["matrix", "validate", str(matrix)])
    assert result.exit_code == 0, result.output
    assert "note: recipes a, b normalize to the same serve configuration" in result.stdout
