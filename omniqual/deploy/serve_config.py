"""The normalized serve configuration of a launch and its fingerprint (``serve_config_sha256``).

Two launches written differently but configured the same must hash the same, and any changed
setting must change the hash. So the serve argv is parsed the way vLLM's argument parser reads it
(``--foo_bar`` is ``--foo-bar``, ``--flag=value`` is ``--flag value``, short aliases are their long
flag, ``--no-flag`` is ``flag: false``), values are canonicalized (numbers, booleans, JSON parsed
and re-dumped with sorted keys, files named by value hashed by content), flags equal to their
documented default are dropped, and what is not configuration (the program path, host and port)
is left out. The model stays in, as the checkpoint directory's name for a local path (the parent
directory is where this machine keeps it, not what is served).

The alias and default tables are read from vLLM-Omni 0.30.0's
``vllm_omni/entrypoints/cli/serve.py`` (group "OmniConfig") and, for the vLLM flags recipes use,
vLLM's ``engine/arg_utils.py`` and ``config/{model,parallel}.py``; ``max-num-seqs`` is 1 for
diffusion (``vllm_omni/diffusion/data.py``). A flag missing from the tables is kept as written
(never dropped), so an unknown default costs at most a duplicate fingerprint, never a false match.
"""

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Canonical = str | int | float | bool | None | list["Canonical"] | dict[str, "Canonical"]

ALIASES: Mapping[str, str] = {
    "tp": "tensor-parallel-size",
    "pp": "pipeline-parallel-size",
    "dp": "data-parallel-size",
    "q": "quantization",
    "usp": "ulysses-degree",
    "ring": "ring-degree",
    "dac": "diffusion-attention-config",
    "cc": "compilation-config",
    "ac": "attention-config",
    "dc": "diffusion-config",
    "oma": "omni-master-address",
    "omp": "omni-master-port",
    "ora": "omni-replica-address",
    "dlo-no-use-allgather": "no-dlo-use-allgather",
}
"""Short or alternative spellings -> the long flag (without dashes)."""

BOOLEAN_FLAGS: frozenset[str] = frozenset({
    "omni", "enable-sleep-mode", "async-chunk", "log-stats", "diffusion-compile-dynamic",
    "fa-deterministic", "ulysses-a2a-permute", "force-cutlass-fp8", "use-hsdp",
    "enable-cache-dit-summary", "step-execution", "vae-use-slicing", "vae-use-tiling",
    "enable-broadcast-weight-load", "enable-cpu-offload", "enable-layerwise-offload",
    "enable-distributed-layerwise-offload", "dlo-use-allgather", "diffusion-streaming-output",
    "no-guardrails", "enable-diffusion-pipeline-profiler", "enable-ar-profiler",
    "enable-orch-monitor", "disable-multithread-weight-load", "enforce-eager",
    "trust-remote-code", "disable-log-stats", "enable-log-requests", "disable-log-requests",
    "disable-fastapi-docs",
})  # fmt: skip
"""Flags that take no value (store_true / BooleanOptionalAction)."""

MULTI_VALUE_FLAGS: frozenset[str] = frozenset({"served-model-name", "lora-path"})
"""``nargs='+'`` flags: every following non-flag token is one of their values."""

DEFAULTS: Mapping[str, Canonical] = {
    # vLLM-Omni 0.30.0 serve.py
    "stage-init-timeout": 300, "init-timeout": 600, "shm-threshold-bytes": 65536,
    "batch-timeout": 10, "worker-backend": "multi_process", "omni-dp-size-local": 1,
    "omni-lb-policy": "random", "omni-heartbeat-timeout": 30, "ulysses-mode": "strict",
    "diffusers-load-kwargs": {}, "diffusers-call-kwargs": {}, "hsdp-shard-size": -1,
    "hsdp-replicate-size": 1, "cache-backend": "none", "request-batch-max-wait-ms": 0,
    "vae-fast-path": "lossless", "num-weight-load-threads": 4, "dlo-use-allgather": True,
    "dlo-resident-layers": 0, "host-weight-runtime-mode": "disabled",
    "dlo-host-registration-limit-gib": 0, "cfg-parallel-size": 1, "vae-patch-parallel-size": 1,
    "vae-parallel-mode": "tile", "max-generated-image-size": 7680 * 4320,
    "robot-openpi-idle-timeout": 30,
    # vLLM's own flags (config/model.py, config/parallel.py) and diffusion's max_num_seqs
    "dtype": "auto", "tensor-parallel-size": 1, "pipeline-parallel-size": 1,
    "max-num-seqs": 1,
}  # fmt: skip
"""Documented defaults: a flag set to its default configures nothing. ``store_true`` flags
default to off, so ``false`` is dropped for every flag in :data:`BOOLEAN_FLAGS` not listed here."""

NOT_CONFIGURATION: frozenset[str] = frozenset({"host", "port", "api-key"})
"""Where the server listens and its credential: not how it serves."""

FILE_FLAGS: frozenset[str] = frozenset({"deploy-config", "stage-configs-path", "strategy-config"})
"""Flags whose value is a file: its content is the configuration, not its path."""

HARNESS_ENV: frozenset[str] = frozenset({"TMPDIR", "PYTHONUNBUFFERED"})
"""Variables the harness sets on every launch for its own observation."""


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """One launch's configuration in canonical form."""

    model: str | None
    flags: tuple[tuple[str, Canonical], ...]
    env: tuple[tuple[str, str], ...] = ()

    def canonical_json(self) -> str:
        data = {"model": self.model, "flags": dict(self.flags), "env": dict(self.env)}
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()


def _file_digest(path: str) -> Canonical:
    try:
        return {"sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}
    except OSError:
        return path  # not readable here: the path is all that identifies it


def canonical_value(text: str) -> Canonical:
    """``"50"``->50, ``"50.0"``->50, ``"True"``->True, JSON objects/arrays re-dumped sorted."""
    stripped = text.strip()
    lowered = stripped.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if stripped[:1] in ("{", "["):
        try:
            parsed: Canonical = json.loads(stripped)
        except json.JSONDecodeError:
            return stripped
        return _canonical_json_value(parsed)
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        number = float(stripped)
    except ValueError:
        return stripped
    if math.isfinite(number) and number.is_integer():
        return int(number)
    return number


def _canonical_json_value(value: Canonical) -> Canonical:
    if isinstance(value, dict):
        return {k: _canonical_json_value(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_canonical_json_value(v) for v in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def flag_name(token: str) -> str:
    """``--max_num_seqs`` / ``-tp`` -> ``max-num-seqs`` / ``tensor-parallel-size``."""
    name = token.lstrip("-").replace("_", "-")
    return ALIASES.get(name, name)


def _is_flag(token: str) -> bool:
    if not token.startswith("-") or token == "-":
        return False
    try:
        float(token)  # a negative number is a value
    except ValueError:
        return True
    return False


def _arguments(argv: Sequence[str]) -> list[str]:
    """What follows the ``serve`` sub-command (or the program when there is none)."""
    if "serve" in argv:
        return list(argv[argv.index("serve") + 1 :])
    return list(argv[1:])


def parse_serve_argv(
    argv: Sequence[str], *, read_file: Callable[[str], Canonical] = _file_digest
) -> ServeConfig:
    """The canonical configuration of a serve argv (see the module docstring)."""
    tokens = _arguments(argv)
    model: str | None = None
    flags: dict[str, Canonical] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not _is_flag(token):
            if model is None:
                model = token
            continue
        written, has_inline, inline = token.partition("=")
        name = flag_name(written)
        negated = name.startswith("no-") and name[3:] in BOOLEAN_FLAGS
        if negated or name in BOOLEAN_FLAGS:
            value: Canonical = canonical_value(inline) if has_inline else True
            flags[name[3:] if negated else name] = (not value) if negated else value
            continue
        values: list[str] = [inline] if has_inline else []
        while (
            i < len(tokens)
            and not _is_flag(tokens[i])
            and (not values or name in MULTI_VALUE_FLAGS)
        ):
            values.append(tokens[i])
            i += 1
        if name == "model" and values:
            model = values[0]
            continue
        if name in FILE_FLAGS and len(values) == 1:
            flags[name] = read_file(values[0])
        elif len(values) == 1 and name not in MULTI_VALUE_FLAGS:
            flags[name] = canonical_value(values[0])
        else:
            flags[name] = [canonical_value(v) for v in values] if values else True
    kept = {
        name: value
        for name, value in flags.items()
        if name not in NOT_CONFIGURATION and not _is_default(name, value)
    }
    return ServeConfig(_model_identity(model), tuple(sorted(kept.items())))


def _is_default(name: str, value: Canonical) -> bool:
    if name in DEFAULTS:
        return DEFAULTS[name] == value and type(DEFAULTS[name]) is type(value)
    return name in BOOLEAN_FLAGS and value is False


def _model_identity(model: str | None) -> str | None:
    if model is None:
        return None
    path = Path(model)
    return path.name if path.is_absolute() else model.rstrip("/")


def serve_config(argv: Sequence[str], env: Mapping[str, str] | None = None) -> ServeConfig:
    """The configuration of a launch: its argv plus the variables its recipe sets."""
    parsed = parse_serve_argv(argv)
    kept_env = tuple(sorted((k, v) for k, v in (env or {}).items() if k not in HARNESS_ENV))
    return ServeConfig(parsed.model, parsed.flags, kept_env)


def serve_config_sha256(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    return serve_config(argv, env).sha256
