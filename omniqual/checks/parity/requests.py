"""The parity request set, shared by the ``reference-parity`` and ``parity`` gates.

A gate spec names the prompts, seeds and shapes (:class:`ParityRequests`); for one endpoint of a
model's contract each (shape, prompt, seed) becomes a :class:`ParityCase`: the contract's tiny
probe request with the prompt, seed and shape replaced. Everything else (steps, guidance, count,
formats, uploads) is the probe's, so every case does the same fixed work. Case ids carry the
prompt's index, never its text. Sending reuses the api-contract wire (:func:`send_case`).
"""

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from omniqual.checks.api_contract.cases import Case, UploadFile, parse_size, probe_files
from omniqual.checks.api_contract.exchange import Exchange, Timeouts, run_case
from omniqual.client import OmniClient
from omniqual.domain.contract import EndpointContract


class ParityRequests(BaseModel):
    """The ``requests`` block of a parity gate spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompts: tuple[str, ...] = Field(min_length=3, description="At least 3 prompts.")
    seeds: tuple[int, ...] = Field(min_length=2, description="At least 2 seeds.")
    sizes: tuple[str, ...] = Field(
        default=(), description="WxH sizes for image and video rows; empty = the probe's size."
    )
    frames: tuple[int, ...] = Field(
        default=(), description="Video frame counts; empty = the probe's."
    )
    audio_lengths_s: tuple[float, ...] = Field(
        default=(), description="Audio lengths in seconds; empty = the probe's."
    )


@dataclass(frozen=True, slots=True)
class ParityCase:
    id: str
    """``<api_mode>/<shape>/p<prompt index>-s<seed>``: never the prompt text."""
    api_mode: str
    kind: str
    """Output kind: ``image``, ``video`` or ``audio``."""
    prompt_field: str
    prompt_index: int
    values: Mapping[str, JsonValue]
    """Every field sent: the probe with this case's prompt, seed and shape."""
    files: tuple[UploadFile, ...] = ()

    @property
    def prompt(self) -> str:
        return str(self.values[self.prompt_field])

    @property
    def seed(self) -> int:
        return int(self._number("seed"))

    @property
    def steps(self) -> int | None:
        value = self.values.get("num_inference_steps")
        return int(value) if isinstance(value, int | float) else None

    @property
    def size(self) -> tuple[int, int] | None:
        value = self.values.get("size")
        return parse_size(value) if isinstance(value, str) else None

    @property
    def count(self) -> int:
        for name in ("n", "num_outputs_per_prompt"):
            value = self.values.get(name)
            if isinstance(value, int):
                return value
        return 1

    def _number(self, name: str) -> float:
        value = self.values.get(name)
        if not isinstance(value, int | float):
            raise ValueError(f"case {self.id} has no numeric {name!r}")
        return value

    def to_case(self) -> Case:
        """The api-contract case that puts this request on the wire."""
        return Case(self.id, self.api_mode, None, "parity", self.values, "accepted", self.files,
                    "parity request")  # fmt: skip


def prompt_field(endpoint: EndpointContract) -> str:
    """The endpoint's text field: ``prompt`` (images, video, chat) or ``input`` (audio)."""
    for spec in endpoint.fields:
        if spec.type == "str" and spec.required and spec.name in ("prompt", "input"):
            return spec.name
    raise ValueError(f"{endpoint.api_mode}: the contract declares no required prompt field")


def _shapes(requests: ParityRequests, endpoint: EndpointContract) -> list[dict[str, JsonValue]]:
    output, probe = endpoint.output, endpoint.probe
    axes: list[tuple[str, list[JsonValue]]] = []
    if output.size_field is not None:
        sizes: list[JsonValue] = list(requests.sizes) or [probe.get(output.size_field)]
        axes.append((output.size_field, sizes))
    if output.frames_field is not None:
        frames: list[JsonValue] = list(requests.frames) or [probe.get(output.frames_field)]
        axes.append((output.frames_field, frames))
    if output.length_field is not None:
        lengths: list[JsonValue] = list(requests.audio_lengths_s)
        axes.append((output.length_field, lengths or [probe.get(output.length_field)]))
    shapes: list[dict[str, JsonValue]] = [{}]
    for name, values in axes:
        kept = [value for value in values if value is not None]
        shapes = [{**shape, name: value} for shape in shapes for value in kept]
    return shapes


def shape_label(shape: Mapping[str, JsonValue]) -> str:
    return "x".join(str(v) for v in shape.values()) or "default"


def parity_cases(requests: ParityRequests, endpoint: EndpointContract) -> tuple[ParityCase, ...]:
    """Shapes × prompts × seeds, in that order, each on the probe request of ``endpoint``."""
    if "seed" not in {f.name for f in endpoint.fields}:
        raise ValueError(f"{endpoint.api_mode}: the contract declares no seed field")
    text_field = prompt_field(endpoint)
    files = probe_files(endpoint)
    cases: list[ParityCase] = []
    for shape in _shapes(requests, endpoint):
        label = shape_label(shape)
        for index, prompt in enumerate(requests.prompts):
            for seed in requests.seeds:
                values = {**endpoint.probe, **shape, text_field: prompt, "seed": seed}
                cases.append(ParityCase(
                    f"{endpoint.api_mode}/{label}/p{index}-s{seed}", endpoint.api_mode,
                    endpoint.output.kind, text_field, index, values, files,
                ))  # fmt: skip
    return tuple(cases)


async def send_case(client: OmniClient, case: ParityCase, timeouts: Timeouts) -> Exchange:
    """One request; raises only ``ClientError`` (transport). Media are in ``Exchange.media``."""
    return await run_case(client, case.to_case(), timeouts)
