"""Loading launch recipes from a runners tree, with file:line errors; the shipped recipes."""

from pathlib import Path

import pytest

from omniqual.domain.recipe import Expectation, RecipeKind
from omniqual.specs.recipes import RecipeNotFound, find_recipe, load_recipes, recipe_files
from omniqual.specs.source import SpecError

REPO_RUNNERS = Path(__file__).resolve().parents[3] / "runners"
BUNDLED = {"sd3-tiny", "qwen-image-edit-tiny", "qwen-image-tiny", "wan-t2v-tiny", "wan-i2v-tiny",
           "stable-audio-tiny"}  # fmt: skip

GOOD = """\
id: sd3-tiny-fp8
description: SD3 with fp8
kind: embedded
pipeline: sd3-tiny
flags:
  quantization: fp8
row:
  quantization: online-fp8(dit)
"""


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_loads_recipes_recursively_and_skips_deploy_configs(tmp_path: Path) -> None:
    write(tmp_path, "embedded/a.yaml", GOOD)
    write(tmp_path, "templates/deploy-configs/dp2.yaml", "data_parallel_size: 2\n")
    book = load_recipes(tmp_path)
    assert list(book) == ["sd3-tiny-fp8"]
    entry = book["sd3-tiny-fp8"]
    assert entry.line == 1 and entry.directory == tmp_path / "embedded"
    assert book.find("sd3-tiny-fp8").flags == {"quantization": "fp8"}
    assert [p.name for p in recipe_files(tmp_path)] == ["a.yaml"]


def test_errors_carry_file_and_line_for_every_bad_file(tmp_path: Path) -> None:
    bad = write(tmp_path, "b.yaml", GOOD.replace("kind: embedded", "kind: gpu"))
    worse = write(tmp_path, "c.yaml", GOOD + "readiness:\n  timeout_s: -5\n")
    with pytest.raises(SpecError) as caught:
        load_recipes(tmp_path)
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{bad}:3: kind:") for line in lines)
    assert any(line.startswith(f"{worse}:10: readiness.timeout_s:") for line in lines)


def test_cross_field_errors_point_at_the_document(tmp_path: Path) -> None:
    path = write(tmp_path, "d.yaml", GOOD + "expect: rejects\n")
    with pytest.raises(SpecError, match="needs `expected_error`") as caught:
        load_recipes(tmp_path)
    assert str(caught.value).startswith(f"{path}:1:")


def test_duplicate_ids_name_both_places(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", GOOD)
    second = write(tmp_path, "z.yaml", GOOD)
    with pytest.raises(SpecError) as caught:
        load_recipes(tmp_path)
    assert str(caught.value) == f"{second}:1: id: duplicate recipe id (first at {first}:1)"


def test_unknown_id_suggests_close_ones(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    with pytest.raises(RecipeNotFound, match=r"did you mean sd3-tiny-fp8\?"):
        find_recipe("sd3-tiny-fp9", tmp_path)
    assert "nope" not in load_recipes(tmp_path)


def test_missing_directory_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="runners directory not found"):
        load_recipes(tmp_path / "absent")


def test_shipped_recipes_load_and_cover_every_bundled_pipeline() -> None:
    book = load_recipes(REPO_RUNNERS)
    embedded = [e.recipe for e in book.entries if e.recipe.kind is RecipeKind.EMBEDDED]
    assert {r.pipeline for r in embedded} == BUNDLED
    assert set(book) >= BUNDLED  # a bf16 default recipe per pipeline, named after it
    assert book.find("qwen-image-tiny").flags["model-class-name"] == "QwenImagePipeline"
    for recipe in embedded:
        assert recipe.row.get("hardware") == "cpu-x86_64-2core-avx2", recipe.id
        assert recipe.expect is Expectation.SERVES or recipe.expected_error, recipe.id
    rejected = {r.id for r in embedded if r.expect is Expectation.REJECTS}
    assert rejected == {"sd3-tiny-step", "wan-t2v-tiny-fp8", "sd3-tiny-layerwise-offload",
                        "sd3-tiny-tea-cache", "sd3-tiny-mag-cache", "sd3-tiny-sea-cache",
                        "sd3-tiny-step-cache"}  # fmt: skip
    assert book.find("qwen-image-tiny-step").expect is Expectation.SERVES


def test_shipped_gpu_templates_are_command_recipes_with_vllm_omni() -> None:
    book = load_recipes(REPO_RUNNERS)
    templates = [e for e in book.entries if e.path.parent.name == "templates"]
    commands = [e.recipe for e in templates if e.recipe.kind is RecipeKind.COMMAND]
    assert len(commands) >= 10
    for recipe in commands:
        assert recipe.command[:2] == ("vllm", "serve") and "--omni" in recipe.command
    dp = book["gpu-qwen-image-dp2"]
    argv = dp.recipe.render_argv(
        {"model": "m", "host": "h", "port": "1", "bindir": "/b", "recipe_dir": str(dp.directory)}
    )
    config = Path(argv[argv.index("--deploy-config") + 1])
    assert config.is_file() and "data_parallel_size: 2" in config.read_text()
