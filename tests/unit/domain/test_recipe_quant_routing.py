"""SKILL G3-05: a recipe's scoped FP8 routing (``--diffusion-quantization-config``) is a JSON
object with real values, never a template: a placeholder or a non-object is refused when the
recipe loads, whether it is given as a flag or in the command."""

import pytest
from pydantic import ValidationError

from omniqual.domain.recipe import LaunchRecipe

ROUTING = '{"method": "fp8", "transformer": {"method": "fp8"}, "vae": null}'


def _recipe(**fields: object) -> LaunchRecipe:
    base: dict[str, object] = {
        "id": "r",
        "description": "d",
        "kind": "command",
        "model": "org/m",
        "command": ["vllm", "serve", "{model}", "--omni"],
    }
    return LaunchRecipe.model_validate({**base, **fields})


def test_a_real_routing_loads() -> None:
    assert _recipe(flags={"diffusion-quantization-config": ROUTING})


@pytest.mark.parametrize(
    ("routing", "said"),
    [
        ('{"method": "fp8", "<prefix>": {"method": "fp8"}}', "placeholder"),
        ('{"method": "fp8", "transformer": "<config>"}', "placeholder"),
        ('["fp8"]', "JSON object"),
        ("fp8 on the transformer", "JSON object"),
    ],
)
def test_a_template_or_non_object_routing_is_refused(routing: str, said: str) -> None:
    with pytest.raises(ValidationError, match="diffusion-quantization-config") as caught:
        _recipe(flags={"diffusion-quantization-config": routing})
    assert said in str(caught.value)


def test_a_routing_in_the_command_is_held_to_the_same_rule() -> None:
    argv = ["vllm", "serve", "{model}", "--omni", "--diffusion-quantization-config",
            '{"<component>": {"method": "fp8"}}']  # fmt: skip
    with pytest.raises(ValidationError, match="placeholder"):
        _recipe(command=argv)
    inline = ["vllm", "serve", "{model}", f"--diffusion-quantization-config={ROUTING}"]
    assert _recipe(command=inline)
