"""What vLLM-Omni 0.30's ``vllm serve`` offers and refuses among the flags a launch recipe sets:
the offload flags it has (no component-selective DLO flag is invented, G4-17), the vLLM data
parallel flags it refuses under ``--omni`` at parse time (G4-15), and the Host Weight Runtime
combinations it rejects or silently ignores (G4-09). A recipe that sets one of the refused or
ignored combinations may only expect its start-up refusal (``expect: rejects``), which the
fails-fast gate then proves or fails ("it serves").

Read from vLLM-Omni 0.30.0 (``entrypoints/cli/serve.py``: its options and the
``prohibited_with_omni`` table; ``model_loader/host_weight_loader.py``: ``_hwr_eligibility_mode``
returns no HWR, without a word, when DLO is off or uses AllGather, and refuses HSDP, a quant
config, a LoRA path or another load format in ``required`` mode while ``preferred`` logs them and
loads without it; ``offloader/config.py`` refuses ``--diffusion-offload-config`` with HWR) and
vLLM 0.30's ``engine/arg_utils.py`` (its offload group). Pure: the recipe loader locates them.
"""

import re
from collections.abc import Mapping

from omniqual.domain.recipe import Expectation, FlagValue, LaunchRecipe

RELEASE = "vLLM-Omni 0.30.0"
OFFLOAD_FLAGS: frozenset[str] = frozenset({
    # vLLM-Omni serve.py
    "enable-cpu-offload", "enable-layerwise-offload", "enable-distributed-layerwise-offload",
    "diffusion-offload-config", "dlo-use-allgather", "dlo-no-use-allgather",
    "no-dlo-use-allgather", "dlo-resident-layers", "dlo-host-registration-limit-gib",
    "host-weight-runtime-mode", "host-weight-runtime-root",
    # vLLM engine/arg_utils.py
    "offload-backend", "cpu-offload-gb", "cpu-offload-params", "offload-group-size",
    "offload-num-in-group", "offload-prefetch-step", "offload-params", "kv-offloading-size",
    "kv-offloading-backend", "enable-layerwise-nvtx-tracing",
})  # fmt: skip
"""Every serve flag of the release whose name speaks of offload, layerwise, DLO or host weights."""
_OFFLOAD_WORDS = re.compile(r"offload|layerwise|dlo|host-weight|hwr")
DP_UNDER_OMNI: frozenset[str] = frozenset({
    "data-parallel-size", "data-parallel-size-local", "data-parallel-address",
    "data-parallel-rpc-port", "data-parallel-start-rank", "data-parallel-backend",
    "enable-expert-parallel", "dp",
})  # fmt: skip
HWR_MODES = ("preferred", "required")

Problem = tuple[tuple[str | int, ...], str]


def _given(recipe: LaunchRecipe) -> dict[str, tuple[tuple[str | int, ...], FlagValue]]:
    """Every flag the recipe sets, in its command template or its ``flags``, with where."""
    found: dict[str, tuple[tuple[str | int, ...], FlagValue]] = {}
    argv = recipe.argv_template()
    for at, token in enumerate(argv):
        if not token.startswith("--") or len(token) == 2:
            continue
        name, eq, inline = token[2:].partition("=")
        following = argv[at + 1] if at + 1 < len(argv) else ""
        given: FlagValue = inline if eq else following if following[:1] not in ("-", "") else True
        found[name.replace("_", "-")] = (("command", at), given)
    for name, value in recipe.flags.items():
        found[name] = (("flags", name), value)
    return found


def _on(value: FlagValue) -> bool:
    return value is not None and value is not False and str(value).lower() not in ("false", "0")


def recipe_flag_problems(recipe: LaunchRecipe) -> list[Problem]:
    """(field path, message) for each flag of ``recipe`` the release lacks or refuses."""
    given = _given(recipe)
    problems: list[Problem] = []
    for name, (where, _) in given.items():
        if _OFFLOAD_WORDS.search(name) and name not in OFFLOAD_FLAGS:
            problems.append((where, f"--{name} is not an offload flag of {RELEASE}'s serve: a "
                             "flag the target release does not offer is never used"))  # fmt: skip
    if recipe.expect is Expectation.REJECTS:
        return problems  # a refusal is what the recipe claims: the fails-fast gate proves it
    if "omni" in given and _on(given["omni"][1]):
        for name in sorted(DP_UNDER_OMNI & given.keys()):
            problems.append((given[name][0], f"--{name} is refused under --omni by {RELEASE} "
                             "(data parallelism comes from --deploy-config): a recipe with it can "
                             "only expect rejects"))  # fmt: skip
    problems += _hwr_problems(given)
    return problems


def _hwr_problems(given: Mapping[str, tuple[tuple[str | int, ...], FlagValue]]) -> list[Problem]:
    mode = given.get("host-weight-runtime-mode")
    if mode is None or str(mode[1]) not in HWR_MODES:
        return []
    value = {name: v for name, (_, v) in given.items()}
    dlo = _on(value.get("enable-distributed-layerwise-offload"))
    rank_local = (
        _on(value.get("no-dlo-use-allgather"))
        or _on(value.get("dlo-no-use-allgather"))
        or ("dlo-use-allgather" in value and not _on(value["dlo-use-allgather"]))
    )
    partners = [
        ("distributed layerwise offload off (HWR is then never used)", not dlo),
        ("DLO AllGather (HWR is then never used)", dlo and not rank_local),
        ("online quantization", _on(value.get("quantization"))),
        ("HSDP", _on(value.get("use-hsdp"))),
        ("a LoRA adapter", _on(value.get("lora-path"))),
        ("--diffusion-offload-config", _on(value.get("diffusion-offload-config"))),
        ("a load format other than default",
         str(value.get("load-format", "default")) != "default"),
    ]  # fmt: skip
    named = [what for what, present in partners if present]
    if not named:
        return []
    return [(mode[0], f"Host Weight Runtime ({mode[1]}) with {', '.join(named)} is refused or "
             f"ignored by {RELEASE}, never served with HWR: a recipe of it can only expect "
             "rejects")]  # fmt: skip
