"""A recipe's ``--deploy-config`` (vLLM-Omni's deploy YAML, how data parallelism is configured
under ``--omni``) is held at load time to sit beside the recipe and to match vLLM-Omni 0.30's
deploy schema (DL-09)."""

from pathlib import Path

import pytest

from omniqual.specs.recipes import load_recipe, load_recipes
from omniqual.specs.source import SpecError

REPO_RUNNERS = Path(__file__).resolve().parents[3] / "runners"
RECIPE = """\
id: r
description: a recipe
kind: command
model: m
command: [vllm, serve, '{model}', --omni, --deploy-config, '{recipe_dir}/deploy-configs/dp2.yaml']
"""
GOOD = "data_parallel_size: 2\nstages:\n  - stage_id: 0\n    devices: '0,1'\n"


def _write(tmp_path: Path, deploy: str | None, recipe: str = RECIPE) -> Path:
    if deploy is not None:
        (tmp_path / "deploy-configs").mkdir(exist_ok=True)
        (tmp_path / "deploy-configs" / "dp2.yaml").write_text(deploy, encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text(recipe, encoding="utf-8")
    return path


def _problems(path: Path) -> str:
    with pytest.raises(SpecError) as caught:
        load_recipe(path)
    return "\n".join(str(p) for p in caught.value.problems)


def test_a_deploy_config_beside_the_recipe_in_the_schema_loads(tmp_path: Path) -> None:
    assert load_recipe(_write(tmp_path, GOOD)).recipe.id == "r"


def test_a_missing_deploy_config_is_named(tmp_path: Path) -> None:
    text = _problems(_write(tmp_path, None))
    assert "r.yaml:5: command.5:" in text and "dp2.yaml" in text and "not found" in text


def test_a_deploy_config_elsewhere_is_refused(tmp_path: Path) -> None:
    recipe = RECIPE.replace("'{recipe_dir}/deploy-configs/dp2.yaml'", "/etc/dp2.yaml")
    assert "beside the recipe" in _problems(_write(tmp_path, GOOD, recipe))


def test_a_key_the_release_does_not_read_is_refused(tmp_path: Path) -> None:
    text = _problems(_write(tmp_path, GOOD + "data_parallel_szie: 2\n"))
    assert "data_parallel_szie" in text and "0.30" in text


def test_the_removed_stage_args_schema_is_refused(tmp_path: Path) -> None:
    assert "stage_args" in _problems(_write(tmp_path, "stage_args: []\n"))


def test_a_stage_without_its_id_is_refused(tmp_path: Path) -> None:
    text = _problems(_write(tmp_path, "stages:\n  - devices: '0'\n"))
    assert "stages[0]" in text and "stage_id" in text


def test_a_deploy_config_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    assert "a mapping" in _problems(_write(tmp_path, "- 1\n- 2\n"))


def test_a_deploy_config_flag_is_read_too(tmp_path: Path) -> None:
    recipe = RECIPE.replace(", --deploy-config, '{recipe_dir}/deploy-configs/dp2.yaml'", "")
    recipe += "flags:\n  deploy-config: '{recipe_dir}/deploy-configs/dp2.yaml'\n"
    text = _problems(_write(tmp_path, "model_runner: v3\n", recipe))
    assert "flags.deploy-config" in text and "model_runner" in text


def test_the_shipped_deploy_configs_load() -> None:
    assert "gpu-qwen-image-dp2" in load_recipes(REPO_RUNNERS)
