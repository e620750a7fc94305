"""Render the three drafted files (contract, URL recipe, matrix) as commented YAML text.

The comments say where each value came from and what is left to do; the values that nobody can
know from the server are ``TODO`` strings, so the files fail every loader until they are filled.
"""

import textwrap
from dataclasses import dataclass
from typing import Any

import yaml

from omniqual.engine.model_init.contract_draft import EndpointDraft, todo
from omniqual.engine.model_init.official import OfficialSignature, OfficialUnavailable

SERVE_DEFAULTS: dict[str, str] = {
    "execution": "serial/1",
    "attention_backend": "platform-default",
    "packed_layout": "padded",
    "cache_policy": "none",
    "quantization": "none",
    "offload": "resident",
    "topology": "1-device",
}
"""Deployment axes as `vllm serve MODEL --omni` sets them without flags."""
UNKNOWABLE: dict[str, str] = {
    "hardware": "the accelerator: vendor, SKU, count and memory (e.g. 1x-h200-141gb; see "
    "matrices/axes.yaml)",
    "dtype": "the compute dtype the server runs (bf16, fp16, fp32, fp8)",
}
"""Deployment axes a URL cannot tell: only the contributor knows them."""


@dataclass(frozen=True, slots=True)
class DraftFacts:
    """What the server and the command line said, for the drafted files."""

    name: str
    url: str
    task: str
    api_mode: str
    output_transport: str
    endpoint_path: str
    schema_name: str
    served_model: str
    reported_version: str
    """``GET /version``'s ``version`` (vLLM's release), or "unknown"."""
    pins: dict[str, str]
    """Revision fields the server reports and results record: the matrix may pin these."""
    official: OfficialSignature | OfficialUnavailable | None
    gates: tuple[str, ...]
    today: str


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def scalar(value: Any) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=1000)
        .strip()
        .removesuffix("\n...")
        .removesuffix("...")
        .strip()
    )


def _official_label(facts: DraftFacts) -> str:
    official = facts.official
    if isinstance(official, OfficialSignature):
        return f"{official.label} defaults"
    if isinstance(official, OfficialUnavailable):
        return f"not read ({official.reason})"
    return "not given (--official PIPELINE_CLASS reads its __call__ defaults from diffusers)"


def contract_text(facts: DraftFacts, endpoint: EndpointDraft, output: dict[str, Any]) -> str:
    official = facts.official
    data: dict[str, Any] = {
        "schema_version": 1,
        "model": facts.name,
        "official": (
            f"{official.package} {official.class_name}"
            if isinstance(official, OfficialSignature)
            else todo(
                "the official implementation and its pinned release, e.g. "
                "diffusers==0.40.0 StableDiffusion3Pipeline"
            )
        ),
        "checkpoint": todo(
            f"the checkpoint revision the server loads (GET /v1/models serves {facts.served_model})"
        ),
        "target_release": facts.reported_version
        if facts.reported_version != "unknown"
        else todo("the vLLM-Omni release this contract targets"),
        "endpoints": [
            {
                "api_mode": facts.api_mode,
                "task": facts.task,
                "probe": endpoint.probe,
                "fields": list(endpoint.fields),
                **({"inputs": [_input(f.name) for f in endpoint.files]} if endpoint.files else {}),
                "output": output,
            }
        ],
        "deviations": [],
    }
    skipped = ", ".join(endpoint.skipped) or "none"
    header = [
        f"# Drafted by `omniqual model init {facts.name}` on {facts.today} from {facts.url}:",
        f"#   schema    GET /openapi.json, POST {facts.endpoint_path} ({facts.schema_name}):",
        "#             the bounds the server's request model states",
        f"#   official  {_official_label(facts)}",
        f"#   served    GET /v1/models: {facts.served_model}",
        f"#             GET /version: {facts.reported_version} (vLLM's release; deviations "
        "match it)",
        "# The schema is not the truth (it may list values the server rejects): check every limit",
        "# against the official pipeline and vLLM-Omni's invalid-parameter tests",
        "# (tests/dfx/reliability/invalid_param_test/), cite them in `source`, replace every TODO.",
        f"# `omniqual matrix validate matrices/{facts.name}.yaml` lists the TODOs left, and",
        f"#   omniqual model init {facts.name} --target {facts.url} --probe",
        "# proposes fixes where the server contradicts a limit (it writes nothing). A known",
        "# difference of the release goes under `deviations`: it makes the row `limited`, with its",
        "# reason as the limitation.",
        *textwrap.wrap(f"Schema fields not drafted: {skipped}.", 96, initial_indent="# ",
                       subsequent_indent="#   "),
    ]  # fmt: skip
    return "\n".join(header) + "\n" + dump(data)


def _input(name: str) -> dict[str, Any]:
    return {
        "field": name,
        "min_count": todo(f"fewest {name} files a request needs"),
        "max_count": todo(f"most {name} files a request takes"),
        "probe_count": todo("how many the probe request sends"),
        "source": todo("where the counts come from"),
    }


def recipe_text(facts: DraftFacts) -> str:
    lines = [
        f"# Drafted by `omniqual model init {facts.name}` on {facts.today}: the deployment at "
        f"{facts.url}.",
        "# Nothing is launched; gates run against the URL. `model` is the id GET /v1/models",
        "# serves, so results land only on matrix rows consistent with it. `row` declares every",
        "# deployment axis of the rows it realizes: the serve defaults below hold for",
        "# `vllm serve MODEL --omni` without flags; change any the server was started with.",
        f"id: {scalar(facts.name)}",
        f"description: {scalar(f'{facts.name} served at {facts.url} (drafted by model init)')}",
        "kind: url",
        f"url: {scalar(facts.url)}",
        f"model: {scalar(facts.served_model)}",
        "readiness:",
        "  path: /health",
        "  timeout_s: 10",
        "row:",
        f"  model: {scalar(facts.name)}",
        *_axis_lines(),
    ]
    return "\n".join(lines) + "\n"


def _axis_lines(indent: str = "  ") -> list[str]:
    lines = [f"{indent}{axis}: {scalar(value)}" for axis, value in SERVE_DEFAULTS.items()]
    lines += [f"{indent}{axis}: {scalar(todo(why))}" for axis, why in UNKNOWABLE.items()]
    return lines


def matrix_text(facts: DraftFacts) -> str:
    if facts.pins:
        pin_lines = [
            "target:",
            # vLLM-Omni 0.30 mounts vLLM's /version: the pin is the server release it reports.
            *(f"  {k}: {scalar(v)}  # GET /version" for k, v in facts.pins.items()),
        ]
    else:
        pin_lines = [
            f"# GET /version reported {facts.reported_version or 'nothing'}. No revision is "
            "pinned: a result",
            "# from a URL records no checkpoint, model revision, vLLM-Omni version or commit, and",
            "# a pin no result can carry would make every result stale.",
            "target: {}",
        ]
    gates = ", ".join(facts.gates)
    lines = [
        f"# Drafted by `omniqual model init {facts.name}` on {facts.today}: the baseline row of "
        f"{facts.name}",
        f"# as served at {facts.url}. Its recipe is runners/{facts.name}.yaml (deployment axes:",
        "# keep `defaults` equal to the recipe's `row`), its contract gates/contracts/"
        f"{facts.name}.yaml.",
        "schema_version: 1",
        f"name: {scalar(facts.name)}",
        f"title: {scalar(f'{facts.name} on vLLM-Omni')}",
        f"description: {scalar(f'The baseline of {facts.name} ({facts.task}, {facts.api_mode}).')}",
        "axes_file: axes.yaml",
        *pin_lines,
        "defaults:",
        f"  model: {scalar(facts.name)}",
        "  shape_schedule: default",
        *_axis_lines(),
        "rows:",
        f"  - key: {{task: {scalar(facts.task)}, api_mode: {facts.api_mode}, "
        f"output_transport: {facts.output_transport}}}",
        f"    recipe: {scalar(facts.name)}",
        f"    requires: [{gates}]",
    ]
    return "\n".join(lines) + "\n"
