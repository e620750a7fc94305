"""The vLLM-Omni deploy YAML a launch recipe names with ``--deploy-config`` (how data parallelism
and stage placement are configured under ``--omni``): it sits beside the recipe (below its
directory, written ``{recipe_dir}/…``, so the recipe and its deploy config travel together) and
matches the release's deploy schema (DL-09).

The schema is vLLM-Omni 0.30.0's ``config/stage_config.py`` (``load_deploy_config``): the
top-level keys it reads, ``stage_args`` refused as the removed schema, every stage a mapping
with its ``stage_id``, ``model_runner`` one of v1/v2, a ``base_config`` a file beside the deploy
config. Each problem names the recipe field that points at the file.
"""

from collections.abc import Iterator
from pathlib import Path

import yaml

from omniqual.domain.recipe import LaunchRecipe

RELEASE = "vLLM-Omni 0.30.0"
DEPLOY_KEYS: frozenset[str] = frozenset({
    "base_config", "async_chunk", "session_mode", "model_runner", "active_stream_window",
    "duplex_session", "connectors", "edges", "stages", "platforms", "pipeline",
    "trust_remote_code", "distributed_executor_backend", "dtype", "quantization",
    "enable_prefix_caching", "enable_chunked_prefill", "data_parallel_size",
    "pipeline_parallel_size", "custom_voice_dir",
})  # fmt: skip
"""Top-level keys ``load_deploy_config`` reads (``stage_args`` is refused there)."""
FLAG = "deploy-config"

Problem = tuple[tuple[str | int, ...], str]


def _named(recipe: LaunchRecipe) -> Iterator[tuple[tuple[str | int, ...], str]]:
    argv = recipe.argv_template()
    for at, token in enumerate(argv):
        if token == f"--{FLAG}" and at + 1 < len(argv):
            yield ("command", at + 1), argv[at + 1]
        elif token.startswith(f"--{FLAG}="):
            yield ("command", at), token.split("=", 1)[1]
    value = recipe.flags.get(FLAG)
    if isinstance(value, str):
        yield ("flags", FLAG), value


def deploy_config_problems(recipe: LaunchRecipe, recipe_dir: Path) -> list[Problem]:
    """(field path, message) for each deploy config of ``recipe`` that is not beside it or not
    in the release's schema."""
    problems: list[Problem] = []
    for where, text in _named(recipe):
        path = Path(text.replace("{recipe_dir}", str(recipe_dir)))
        if (
            "{" in str(path)
            or not path.is_absolute()
            or not path.resolve().is_relative_to(recipe_dir.resolve())
        ):
            problems.append((where, f"deploy config {text!r} is not beside the recipe: name it "
                             "{recipe_dir}/… so the recipe and its deploy config travel "
                             "together"))  # fmt: skip
            continue
        problems += [(where, f"deploy config {path.name}: {m}") for m in _schema_problems(path)]
    return problems


def _schema_problems(path: Path) -> list[str]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"not found ({path})"]
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return [f"cannot be read as YAML: {exc}"]
    if not isinstance(data, dict):
        return ["must be a mapping of deploy settings"]
    problems: list[str] = []
    if "stage_args" in data:
        problems.append(f"stage_args is the schema {RELEASE} removed: define deployment "
                        "overrides under `stages`")  # fmt: skip
    unknown = sorted(str(k) for k in data if k not in DEPLOY_KEYS and k != "stage_args")
    if unknown:
        problems.append(f"{', '.join(unknown)}: not read by {RELEASE}'s deploy config "
                        f"(known: {', '.join(sorted(DEPLOY_KEYS))})")  # fmt: skip
    if data.get("model_runner", "v1") not in ("v1", "v2"):
        problems.append(f"model_runner must be v1 or v2, not {data['model_runner']!r}")
    stages = data.get("stages", [])
    if not isinstance(stages, list):
        problems.append("stages must be a list")
        stages = []
    for index, stage in enumerate(stages):
        if not isinstance(stage, dict) or "stage_id" not in stage:
            problems.append(f"stages[{index}] needs its stage_id")
    base = data.get("base_config")
    if base is not None and not (path.parent / str(base)).is_file():
        problems.append(f"base_config {base!r} is not a file beside it")
    return problems
