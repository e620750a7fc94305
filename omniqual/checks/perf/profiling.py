"""A profiled server's latency is no claim (SKILL G6-13, G6-17): a perf run, and so a baseline,
never comes from a server launched with a profiler.

vLLM-Omni 0.30 profiles when its serve command carries ``--profiler-config`` (a torch profiler
directory or its options), ``--enable-diffusion-pipeline-profiler`` or ``--enable-ar-profiler``,
or vLLM's ``VLLM_TORCH_PROFILER_DIR`` is set: the profiler's hooks slow every step and its traces
are diagnostics, kept apart. The row's launch recipe says how the server is launched (its flags,
its command template and the variables the launcher adds); a deployment given by URL shows none
of that, and its result says so where the recipe is absent.
"""

from collections.abc import Iterable, Mapping

from omniqual.domain.recipe import LaunchRecipe

PROFILER_FLAGS = ("--profiler-config", "--enable-diffusion-pipeline-profiler",
                  "--enable-ar-profiler")  # fmt: skip
PROFILER_ENV = ("VLLM_TORCH_PROFILER_DIR",)
PROFILED = "a profiled server"


def profiler_settings(words: Iterable[str], env: Mapping[str, str]) -> list[str]:
    """The profiler settings among a command's words and its environment."""
    found = [w for w in words if any(w == f or w.startswith(f"{f}=") or w.startswith(f"{f}.")
                                     for f in PROFILER_FLAGS)]  # fmt: skip
    found += [f"{name}={env[name]}" for name in PROFILER_ENV if env.get(name)]
    return found


def profiled_reason(recipe: LaunchRecipe | None) -> str | None:
    """Why the recipe's server cannot be measured for a claim, or None."""
    if recipe is None:
        return None
    words = [*recipe.argv_template(), *(f"--{name}" for name in recipe.flags)]
    found = profiler_settings(words, recipe.effective_env())
    if not found:
        return None
    return (f"{PROFILED}: the recipe launches it with {', '.join(sorted(set(found)))}; its "
            "latency is a diagnostic, never a perf claim or a baseline (launch it without the "
            "profiler)")
