"""LaunchRecipe: validation, argv/flag rendering and --set overrides."""

import pytest
from pydantic import ValidationError

from omniqual.domain.recipe import (
    EMBEDDED_COMMAND,
    Expectation,
    LaunchRecipe,
    RecipeKind,
    RecipeOverrideError,
    apply_overrides,
    parse_scalar,
    render_flags,
)

VALUES = {"model": "/ckpt/sd3", "host": "127.0.0.1", "port": "8123", "bindir": "/venv/bin"}


def embedded(**fields: object) -> LaunchRecipe:
    data: dict[str, object] = {
        "id": "sd3-tiny",
        "description": "tiny SD3",
        "kind": "embedded",
        "pipeline": "sd3-tiny",
    }
    data.update(fields)
    return LaunchRecipe.model_validate(data)


def command(**fields: object) -> LaunchRecipe:
    data: dict[str, object] = {
        "id": "gpu",
        "description": "gpu template",
        "kind": "command",
        "model": "Qwen/Qwen-Image",
        "command": ["vllm", "serve", "{model}", "--omni", "--port", "{port}"],
    }
    data.update(fields)
    return LaunchRecipe.model_validate(data)


def test_flags_render_bare_booleans_and_skip_false_and_none() -> None:
    argv = render_flags(
        {"max-num-seqs": 2, "step-execution": True, "enforce-eager": False, "dtype": None,
         "request-batch-max-wait-ms": 50.5}
    )  # fmt: skip
    assert argv == [
        "--max-num-seqs",
        "2",
        "--step-execution",
        "--request-batch-max-wait-ms",
        "50.5",
    ]


def test_embedded_recipe_uses_the_interpreter_vllm_and_cpu_platform_env() -> None:
    recipe = embedded(flags={"model-class-name": "QwenImagePipeline"})
    assert recipe.argv_template() == EMBEDDED_COMMAND
    assert recipe.render_argv(VALUES) == (
        "/venv/bin/vllm", "serve", "/ckpt/sd3", "--omni", "--host", "127.0.0.1",
        "--port", "8123", "--model-class-name", "QwenImagePipeline",
    )  # fmt: skip
    assert recipe.effective_env() == {"OMNIQUAL_CPU_PLATFORM": "1"}
    assert embedded(env={"OMNIQUAL_CPU_PLATFORM": "0"}).effective_env() == {
        "OMNIQUAL_CPU_PLATFORM": "0"
    }


def test_json_flag_values_keep_their_braces() -> None:
    config = '{"mode":"layer","components":["dit"],"pin_memory":false}'
    recipe = embedded(flags={"diffusion-offload-config": config})
    assert recipe.render_argv(VALUES)[-2:] == ("--diffusion-offload-config", config)


def test_command_recipe_renders_its_template_then_flags() -> None:
    recipe = command(flags={"quantization": "fp8"})
    assert recipe.render_argv(VALUES) == (
        "vllm", "serve", "/ckpt/sd3", "--omni", "--port", "8123", "--quantization", "fp8",
    )  # fmt: skip
    assert recipe.effective_env() == {}


def test_missing_placeholder_value_is_an_error() -> None:
    recipe = command(command=["serve", "--deploy-config", "{recipe_dir}/dp.yaml"], model=None)
    with pytest.raises(ValueError, match="recipe_dir"):
        recipe.render_argv(VALUES)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"command": ["vllm", "{modle}"]}, "unknown placeholder {modle}"),
        ({"model": None}, "uses {model} but `model` is not set"),
        ({"command": []}, "needs a `command`"),
        ({"pipeline": "sd3-tiny"}, "no `pipeline` or `url`"),
        ({"flags": {"--dtype": "float32"}}, "without dashes"),
        ({"env": {"1BAD": "x"}}, "not environment variable names"),
        ({"expect": "rejects"}, "needs `expected_error`"),
        ({"expected_error": "boom"}, "only applies with expect: rejects"),
        ({"expect": "rejects", "expected_error": "(unclosed"}, "not a regular expression"),
        ({"readiness": {"timeout_s": 0}}, "greater than 0"),
        ({"surprise": 1}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_command_recipes(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("{", r"\{").replace("(", r"\(")):
        command(**fields)


def test_embedded_needs_a_pipeline_and_no_model() -> None:
    with pytest.raises(ValidationError, match="names its bundled `pipeline`"):
        embedded(pipeline=None)
    with pytest.raises(ValidationError, match="no `model` or `url`"):
        embedded(model="x")


def test_url_recipes_launch_nothing() -> None:
    ok = LaunchRecipe.model_validate(
        {"id": "remote", "description": "d", "kind": "url", "url": "http://127.0.0.1:8091"}
    )
    assert ok.kind is RecipeKind.URL and ok.expect is Expectation.SERVES
    with pytest.raises(ValidationError, match="launches nothing"):
        LaunchRecipe.model_validate(
            {"id": "r", "description": "d", "kind": "url", "url": "http://h", "flags": {"x": 1}}
        )


def test_rejecting_recipe_keeps_its_regex() -> None:
    recipe = embedded(expect="rejects", expected_error=r"does not support that contract")
    assert recipe.expect is Expectation.REJECTS


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("False", False), ("null", None), ("2", 2), ("0.5", 0.5), ("fp8", "fp8"),
     ('{"a":1}', '{"a":1}')],
)  # fmt: skip
def test_parse_scalar(text: str, value: object) -> None:
    assert parse_scalar(text) == value and type(parse_scalar(text)) is type(value)


def test_overrides_set_flags_env_readiness_and_model() -> None:
    recipe = apply_overrides(
        command(flags={"enforce-eager": True}),
        [
            "flags.max-num-seqs=2",
            "flags.--step-execution=true",
            "flags.enforce-eager=null",
            "env.VLLM_WORKER_MULTIPROC_METHOD=spawn",
            "readiness.timeout_s=30",
            "stop.grace_s=1.5",
            "row.execution=step/2",
            "model=/models/qwen",
        ],
    )
    assert recipe.flags == {"enforce-eager": None, "max-num-seqs": 2, "step-execution": True}
    assert recipe.env == {"VLLM_WORKER_MULTIPROC_METHOD": "spawn"}
    assert recipe.readiness.timeout_s == 30 and recipe.stop.grace_s == 1.5
    assert recipe.row == {"execution": "step/2"} and recipe.model == "/models/qwen"
    assert recipe.render_argv(VALUES)[-3:] == ("--max-num-seqs", "2", "--step-execution")


def test_env_overrides_stay_strings() -> None:
    assert apply_overrides(command(), ["env.N=2"]).env == {"N": "2"}


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("flags.max-num-seqs", "expected key=value"),
        ("=3", "expected key=value"),
        ("bogus.x=1", "unknown key"),
        ("readiness=1", "unknown key"),
        ("readiness.timeout_s=-1", "readiness.timeout_s"),
        ("readiness.colour=red", "readiness.colour"),
        ("expect=rejects", "needs `expected_error`"),
    ],
)
def test_bad_overrides_are_rejected(assignment: str, message: str) -> None:
    with pytest.raises(RecipeOverrideError, match=message):
        apply_overrides(command(), [assignment])


def test_overrides_leave_the_original_untouched() -> None:
    original = command()
    changed = original.with_overrides(["flags.dtype=float32"])
    assert original.flags == {} and changed.flags == {"dtype": "float32"}
