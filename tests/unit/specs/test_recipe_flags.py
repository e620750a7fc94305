"""A launch recipe is held at load time, at the flag's line, to what vLLM-Omni 0.30's serve
offers and refuses: no offload flag the release lacks (G4-17), no vLLM DP flag under ``--omni``
(G4-15) and no Host Weight Runtime combination it rejects or ignores (G4-09), unless the recipe
expects the start-up refusal that a fails-fast gate then proves."""

from pathlib import Path

import pytest

from omniqual.specs.recipes import load_recipe, load_recipes
from omniqual.specs.source import SpecError

REPO_RUNNERS = Path(__file__).resolve().parents[3] / "runners"
HEAD = """\
id: r
description: a recipe
kind: command
model: m
command: [vllm, serve, '{model}', --omni, --port, '{port}']
"""
REJECTS = "expect: rejects\nexpected_error: 'not supported'\n"


def _problems(tmp_path: Path, text: str) -> str:
    path = tmp_path / "r.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_recipe(path)
    return "\n".join(str(p) for p in caught.value.problems)


def _loads(tmp_path: Path, text: str) -> bool:
    path = tmp_path / "r.yaml"
    path.write_text(text, encoding="utf-8")
    return load_recipe(path).recipe.id == "r"


def test_an_offload_flag_the_release_lacks_is_refused(tmp_path: Path) -> None:
    text = _problems(tmp_path, HEAD + "flags:\n  layerwise-offload-components: dit\n")
    assert "r.yaml:7: flags.layerwise-offload-components:" in text and "0.30" in text


def test_an_offload_flag_in_the_command_is_refused_too(tmp_path: Path) -> None:
    text = HEAD.replace("--omni,", "--omni, --dlo-components, dit,")
    assert "--dlo-components" in _problems(tmp_path, text)


def test_the_releases_offload_flags_load(tmp_path: Path) -> None:
    flags = ("flags:\n  enable-distributed-layerwise-offload: true\n  dlo-resident-layers: 8\n"
             "  dlo-use-allgather: false\n  diffusion-offload-config: '{}'\n")  # fmt: skip
    assert _loads(tmp_path, HEAD + flags)


def test_a_dp_flag_under_omni_must_expect_the_refusal(tmp_path: Path) -> None:
    text = _problems(tmp_path, HEAD + "flags:\n  data-parallel-size: 2\n")
    assert "flags.data-parallel-size" in text and "--deploy-config" in text
    assert _loads(tmp_path, HEAD + "flags:\n  data-parallel-size: 2\n" + REJECTS)


def test_a_dp_flag_without_omni_is_vllms_own(tmp_path: Path) -> None:
    assert _loads(tmp_path, HEAD.replace(" --omni,", "") + "flags:\n  data-parallel-size: 2\n")


@pytest.mark.parametrize("partner", [
    "enable-distributed-layerwise-offload: true",  # AllGather is DLO's default
    "quantization: fp8", "use-hsdp: true", "lora-path: /adapters/a", "load-format: dummy",
])  # fmt: skip
def test_host_weight_runtime_with_a_forbidden_partner_must_expect_refusal(
    tmp_path: Path, partner: str
) -> None:
    flags = f"flags:\n  host-weight-runtime-mode: preferred\n  {partner}\n"
    text = _problems(tmp_path, HEAD + flags)
    assert "flags.host-weight-runtime-mode" in text and "Host Weight Runtime" in text
    assert _loads(tmp_path, HEAD + flags + REJECTS)


def test_host_weight_runtime_on_rank_local_dlo_loads(tmp_path: Path) -> None:
    flags = (
        "flags:\n  host-weight-runtime-mode: required\n  host-weight-runtime-root: /hwr\n"
        "  enable-distributed-layerwise-offload: true\n  no-dlo-use-allgather: true\n"
    )
    assert _loads(tmp_path, HEAD + flags)


def test_the_shipped_recipes_load() -> None:
    assert len(load_recipes(REPO_RUNNERS)) > 10
