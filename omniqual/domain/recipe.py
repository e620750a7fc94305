"""Launch recipes: how one row of the matrix is realized as a running (or refusing) server.

A recipe is data. Its argv template is a list (never a shell line) whose items may hold the
placeholders in :data:`PLACEHOLDERS`; ``flags`` are appended as ``--name value`` (``True`` gives a
bare ``--name``; ``False`` and ``None`` leave the flag out). Three kinds exist:

* ``embedded``: a bundled tiny checkpoint (``pipeline``) served locally by real vLLM-Omni; the
  command defaults to :data:`EMBEDDED_COMMAND` and ``OMNIQUAL_CPU_PLATFORM=1`` is set.
* ``command``: any local command template, e.g. ``vllm serve MODEL --omni`` on a GPU host.
* ``url``: an existing deployment; nothing is launched.

``expect: rejects`` marks a combination known to fail at startup; ``expected_error`` is a regex
the server log must match, so a fail-fast gate can record it as evidence.

``devices`` and ``cores`` say what one launch occupies, for campaigns run with ``--jobs``; they
are scheduling, not serving configuration, so they are in no serve-config fingerprint.
"""

import json
import re
from collections.abc import Iterable, Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from omniqual.domain.regex import Regex

FlagValue = str | int | float | bool | None

PLACEHOLDERS: tuple[str, ...] = ("model", "host", "port", "bindir", "recipe_dir")
"""``bindir`` is the running interpreter's bin directory; ``recipe_dir`` the recipe's folder."""

EMBEDDED_COMMAND: tuple[str, ...] = (
    "{bindir}/vllm",
    "serve",
    "{model}",
    "--omni",
    "--host",
    "{host}",
    "--port",
    "{port}",
)
EMBEDDED_ENV: dict[str, str] = {"OMNIQUAL_CPU_PLATFORM": "1"}
ISA_CAPS: dict[str, dict[str, str]] = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
}
"""An embedded row whose hardware value ends in one of these ISA classes (``…-avx2``) is served
with torch and oneDNN capped to it: a host with AVX512 or AMX then computes as an AVX2-only one
does (bf16 emulated), so its evidence is evidence for the class the row names."""


def isa_caps(hardware: str | None) -> dict[str, str]:
    """The environment that caps a CPU server to the ISA class ``hardware`` names, if any."""
    if hardware is None or not hardware.startswith("cpu-"):
        return {}
    return dict(ISA_CAPS.get(hardware.rsplit("-", 1)[-1], {}))


_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FLAG_NAME = r"^[a-z0-9][a-z0-9-]*$"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class RecipeKind(StrEnum):
    EMBEDDED = "embedded"
    COMMAND = "command"
    URL = "url"


class Expectation(StrEnum):
    SERVES = "serves"
    REJECTS = "rejects"


class Readiness(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(default="/health", pattern=r"^/")
    timeout_s: float = Field(default=180.0, gt=0, description="Deadline from spawn to ready.")
    interval_s: float = Field(default=0.5, gt=0, le=30)


class StopPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    grace_s: float = Field(default=15.0, ge=0, description="SIGTERM to SIGKILL.")


def _unknown_placeholders(text: str) -> list[str]:
    return [name for name in _TOKEN.findall(text) if name not in PLACEHOLDERS]


def substitute(text: str, values: Mapping[str, str]) -> str:
    """Replace known ``{placeholder}`` tokens; other braces (JSON) are left alone."""

    def repl(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PLACEHOLDERS:
            return match.group(0)
        if name not in values:
            raise ValueError(f"no value for placeholder {{{name}}}")
        return values[name]

    return _TOKEN.sub(repl, text)


def render_flags(flags: Mapping[str, FlagValue]) -> list[str]:
    """``{"max-num-seqs": 2, "step-execution": True}`` -> ``--max-num-seqs 2 --step-execution``."""
    argv: list[str] = []
    for name, value in flags.items():
        if value is None or value is False:
            continue
        argv.append(f"--{name}")
        if value is not True:
            argv.append(str(value))
    return argv


class LaunchRecipe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    description: str = Field(min_length=1)
    kind: RecipeKind
    pipeline: str | None = Field(default=None, description="Bundled checkpoint (embedded only).")
    model: str | None = Field(default=None, description="Model id or path (command recipes).")
    url: str | None = Field(default=None, pattern=r"^https?://", description="url recipes only.")
    command: tuple[str, ...] = Field(default=(), description="argv template; no shell.")
    flags: dict[str, FlagValue] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    readiness: Readiness = Field(default_factory=Readiness)
    stop: StopPolicy = Field(default_factory=StopPolicy)
    row: dict[str, str] = Field(default_factory=dict, description="Axis values it realizes.")
    expect: Expectation = Expectation.SERVES
    expected_error: Regex | None = Field(default=None, description="Regex the log must match.")
    notes: str = ""
    devices: int | None = Field(
        default=None, ge=1,
        description="GPUs one launch uses: with --jobs, each launch group running at once gets "
        "this many devices of its own (CUDA_VISIBLE_DEVICES). Unset: the whole host's.",
    )  # fmt: skip
    cores: int | None = Field(
        default=None, ge=1,
        description="CPU cores one launch keeps busy on a host without GPUs, for --jobs "
        "(unset: 2, a server's engine and API processes).",
    )  # fmt: skip

    @field_validator("flags")
    @classmethod
    def _flag_names(cls, flags: dict[str, FlagValue]) -> dict[str, FlagValue]:
        bad = [name for name in flags if not re.match(_FLAG_NAME, name)]
        if bad:
            raise ValueError(f"flag names are written without dashes in lower case: {bad}")
        return flags

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        bad = [name for name in env if not _ENV_NAME.match(name)]
        if bad:
            raise ValueError(f"not environment variable names: {bad}")
        return env

    @model_validator(mode="after")
    def _consistent(self) -> "LaunchRecipe":
        problems: list[str] = []
        texts = (*self.command, *(v for v in self.flags.values() if isinstance(v, str)))
        for item in texts:
            problems += [
                f"unknown placeholder {{{p}}} in {item!r}" for p in _unknown_placeholders(item)
            ]
        problems += _routing_problems(self.flags, self.command)
        if self.kind is RecipeKind.EMBEDDED:
            if not self.pipeline:
                problems.append("an embedded recipe names its bundled `pipeline`")
            if self.model or self.url:
                problems.append("an embedded recipe has no `model` or `url` (the pipeline is it)")
        elif self.kind is RecipeKind.COMMAND:
            if not self.command:
                problems.append("a command recipe needs a `command` argv template")
            if self.pipeline or self.url:
                problems.append("a command recipe has no `pipeline` or `url`")
            if any("{model}" in part for part in self.command) and not self.model:
                problems.append("the command uses {model} but `model` is not set")
        else:
            if not self.url:
                problems.append("a url recipe needs `url`")
            if self.command or self.flags or self.env or self.pipeline:
                problems.append("a url recipe launches nothing: no command/flags/env/pipeline")
            if self.expect is Expectation.REJECTS:
                problems.append("a url recipe cannot expect a startup rejection")
            if self.devices is not None or self.cores is not None:
                problems.append("a url recipe occupies nothing here: no devices/cores")
        if self.expect is Expectation.REJECTS and not self.expected_error:
            problems.append("expect: rejects needs `expected_error` (a regex over the server log)")
        if self.expect is Expectation.SERVES and self.expected_error:
            problems.append("`expected_error` only applies with expect: rejects")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def argv_template(self) -> tuple[str, ...]:
        if self.kind is RecipeKind.EMBEDDED and not self.command:
            return EMBEDDED_COMMAND
        return self.command

    def effective_env(self) -> dict[str, str]:
        """Variables the launcher adds to the inherited environment."""
        if self.kind is RecipeKind.EMBEDDED:
            return {**EMBEDDED_ENV, **isa_caps(self.row.get("hardware")), **self.env}
        return dict(self.env)

    def render_argv(self, values: Mapping[str, str]) -> tuple[str, ...]:
        """The exact argv: the template with placeholders filled, then the flags."""
        base = [substitute(part, values) for part in self.argv_template()]
        flags = {
            name: substitute(value, values) if isinstance(value, str) else value
            for name, value in self.flags.items()
        }
        return (*base, *render_flags(flags))

    def with_overrides(self, assignments: Iterable[str]) -> "LaunchRecipe":
        return apply_overrides(self, assignments)


ROUTING_FLAG = "diffusion-quantization-config"
_TEMPLATE = re.compile(r"<[^<>]*>")


def _routing_problems(flags: Mapping[str, FlagValue], command: Iterable[str]) -> list[str]:
    """SKILL G3-05: scoped quantization routing names real component prefixes and configs, never
    a template (``<prefix>``), and is the JSON object vLLM-Omni parses."""
    given: list[str] = []
    value = flags.get(ROUTING_FLAG)
    if value is not None and value is not False:
        given.append(str(value))
    argv = list(command)
    for i, part in enumerate(argv):
        name, eq, inline = part.partition("=")
        if name == f"--{ROUTING_FLAG}":
            given.append(inline if eq else (argv[i + 1] if i + 1 < len(argv) else ""))
    problems: list[str] = []
    for text in given:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        template = _TEMPLATE.search(text)
        if not isinstance(parsed, dict):
            problems.append(f"--{ROUTING_FLAG} is a JSON object (component prefix -> config)")
        elif template is not None:
            problems.append(f"--{ROUTING_FLAG} holds a placeholder ({template.group(0)}): name "
                            "the verified component prefix and config")  # fmt: skip
    return problems


class RecipeOverrideError(ValueError):
    """A ``--set key=value`` that names no field or makes the recipe invalid."""


_NESTED = {"flags", "env", "row", "readiness", "stop"}
_TOP = {"model", "url", "pipeline", "description", "notes", "expect", "expected_error",
        "devices", "cores"}  # fmt: skip


def parse_scalar(text: str) -> FlagValue:
    """YAML-like scalars: true/false, null, integers and floats; anything else stays a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none", "~"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def apply_overrides(recipe: LaunchRecipe, assignments: Iterable[str]) -> LaunchRecipe:
    """Apply ``flags.X=v``, ``env.X=v``, ``row.X=v``, ``readiness.timeout_s=v``, ``model=v``..."""
    data = recipe.model_dump(mode="json")
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        key = key.strip()
        if not sep or not key:
            raise RecipeOverrideError(f"--set {assignment!r}: expected key=value")
        head, dot, sub = key.partition(".")
        if head in _NESTED and dot and sub:
            if head in ("env", "row"):
                data[head][sub] = raw
            elif head == "flags":
                data[head][sub.lstrip("-")] = parse_scalar(raw)
            else:
                data[head][sub] = parse_scalar(raw)
        elif head in _TOP and not dot:
            data[head] = None if parse_scalar(raw) is None else raw
        else:
            known = ", ".join([*(f"{n}.<name>" for n in sorted(_NESTED)), *sorted(_TOP)])
            raise RecipeOverrideError(f"--set {key!r}: unknown key (known: {known})")
    try:
        return LaunchRecipe.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'recipe'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        message = f"overrides make recipe {recipe.id!r} invalid: {details}"
        raise RecipeOverrideError(message) from None
