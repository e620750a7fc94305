"""The frozen API contract of one model (SKILL Gate 0): per endpoint and task, every public field
with its type, official default, inclusive limits, alignment and enumerations; the file inputs
with their counts, MIME types, byte and pixel caps; the tiny probe request; the expected output
(video codec and frame rate too); the declared deviations of a release (known, reasoned
differences that are recorded, never passed); and the served paths it leaves out of scope.

This is the ``gates/contracts/<model>.yaml`` schema; :mod:`omniqual.specs.contracts` loads it
with ``file:line`` errors. Only data lives here: case generation is in ``omniqual.checks``.
"""

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from omniqual.domain.regex import Regex

ApiMode = Literal[
    "images-generations",
    "images-edits",
    "videos-async",
    "videos-sync",
    "audio-generate",
    "chat-completions",
]
FieldType = Literal["int", "float", "str", "bool", "size"]
"""``size`` is a ``WIDTHxHEIGHT`` string; its limits and alignment apply to each side."""
VideoCodec = Literal["h264", "hevc", "av1", "vp9", "mpeg4"]
"""An MP4's video codec, as its sample entry names it (``omniqual.checks.api_contract.mp4``)."""

ENDPOINT_PATHS: dict[str, str] = {
    "images-generations": "/v1/images/generations",
    "images-edits": "/v1/images/edits",
    "videos-async": "/v1/videos",
    "videos-sync": "/v1/videos/sync",
    "audio-generate": "/v1/audio/generate",
    "chat-completions": "/v1/chat/completions",
}
MULTIPART_MODES = frozenset({"images-edits", "videos-async", "videos-sync"})
JOB_PATHS: dict[str, tuple[str, ...]] = {
    "videos-async": ("/v1/videos/{video_id}", "/v1/videos/{video_id}/content"),
}
"""Routes an endpoint's cases exercise beside its own path (the async job's status, content and
DELETE, and the job list on the create path): a contract with the endpoint covers them."""
_PATH_PARAM = re.compile(r"\{[^}/]*\}")


def path_template(path: str) -> str:
    """A route path without its parameter names or trailing slash: ``/v1/videos/{id}`` and
    ``/v1/videos/{video_id}/`` are one route."""
    return _PATH_PARAM.sub("{}", path.rstrip("/") or "/")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldContract(_Spec):
    """One request field. Limits are inclusive; a limit left out is not part of the contract."""

    name: str = Field(min_length=1)
    type: FieldType
    required: bool = False
    default: JsonValue = Field(default=None, description="The official default (documentary).")
    example: JsonValue = Field(
        default=None,
        description="A legal value the gate sends for an optional field the probe leaves out, "
        "where the type alone names none (a device name is text, yet not any text).",
    )
    # int before float: a 64-bit seed limit must stay exact (2**63 - 1 is not a float).
    min: int | float | None = None
    max: int | float | None = None
    step: float | None = Field(
        default=None, gt=0, description="Distance to the rejected neighbour (floats; default 1)."
    )
    multiple_of: int | None = Field(default=None, ge=2)
    offset: int = Field(default=0, ge=0, description="Aligned values are k*multiple_of+offset.")
    misaligned: Literal["reject", "floor"] = Field(
        default="reject", description="What the official pipeline does with a misaligned value."
    )
    enum: tuple[str, ...] | None = None
    min_length: int | None = Field(default=None, ge=1, description="str fields: shortest legal.")
    source: str = Field(
        default="",
        description="Where the limits come from: official pipeline, request schema, vLLM-Omni's "
        "invalid-parameter tests (file names); required for numeric fields.",
    )
    unbounded: str = Field(
        default="",
        description="Numeric fields only: the source that says a limit left out really is "
        "unbounded. Without it a missing min or max is a spec error (a gap, not a choice).",
    )
    effect: Literal["output", "none"] = Field(
        default="output",
        description="Whether a legal change of this optional field changes the generated output "
        "(the field-effect gate requires it, SKILL G0-23); `none` exempts a field that only "
        "shapes the transport, the logs or memory, with its reason in `effect_reason`.",
    )
    effect_reason: str = Field(default="", description="Why `effect: none` (required with it).")

    @property
    def rejects_misaligned(self) -> bool:
        return self.multiple_of is not None and self.misaligned == "reject"

    def aligned(self, value: int) -> bool:
        return self.multiple_of is None or (value - self.offset) % self.multiple_of == 0

    def floor_aligned(self, value: int) -> int:
        if self.multiple_of is None:
            return value
        return ((value - self.offset) // self.multiple_of) * self.multiple_of + self.offset


class InputContract(_Spec):
    """A file input (multipart part) with its count and payload limits."""

    field: str = Field(min_length=1)
    min_count: int = Field(default=0, ge=0)
    max_count: int = Field(ge=0, description="0 = the task takes no such input at all.")
    probe_count: int = Field(default=0, ge=0, description="How many the probe request sends.")
    media_types: tuple[str, ...] = ("image/png",)
    max_bytes: int | None = Field(default=None, ge=1, description="Per-file byte cap (413).")
    max_total_bytes: int | None = Field(
        default=None, ge=1, description="Byte cap on all this input's files together (413)."
    )
    max_pixels: int | None = Field(
        default=None, ge=1, description="Cap on an image's decoded width x height (400 or 413)."
    )
    source: str = ""


class OutputContract(_Spec):
    """What an accepted request returns; shape fields name the request fields that set it."""

    kind: Literal["image", "video", "audio"]
    count_field: str | None = Field(default=None, description="Field giving the output count.")
    size_field: str | None = None
    format_field: str | None = Field(
        default=None, description="Field giving the image format or the audio response format."
    )
    frames_field: str | None = None
    length_field: str | None = Field(default=None, description="Audio length in seconds.")
    speed_field: str | None = Field(
        default=None, description="Audio playback speed: the returned length is length / speed."
    )
    sample_rate: int | None = Field(default=None, ge=1)
    channels: int | None = Field(default=None, ge=1)
    length_tolerance_s: float = Field(default=0.05, ge=0)
    codec: VideoCodec | None = Field(
        default=None, description="Video: the codec every MP4 carries (its stsd sample entry)."
    )
    fps_field: str | None = Field(default=None, description="Video: field giving the frame rate.")
    default_fps: float | None = Field(
        default=None, gt=0, description="Video: the frame rate when the request sets none."
    )
    fps_tolerance: float = Field(default=0.01, ge=0, description="Frames per second.")


class EndpointContract(_Spec):
    api_mode: ApiMode
    task: str = Field(min_length=1)
    probe: dict[str, JsonValue] = Field(
        description="The tiny, cheap request every case starts from (CPU-sized shapes)."
    )
    fields: tuple[FieldContract, ...]
    inputs: tuple[InputContract, ...] = ()
    output: OutputContract

    @property
    def path(self) -> str:
        return ENDPOINT_PATHS[self.api_mode]

    def field(self, name: str) -> FieldContract | None:
        return next((f for f in self.fields if f.name == name), None)


class Deviation(_Spec):
    """A known difference of one release from the contract, like a strict xfail: its cases are
    recorded as deviations (never passes) when the release answers exactly ``observed_status``,
    and the gate then passes with the deviation as a limitation of the row. A covered case that
    meets the contract again fails the gate as a stale declaration until it is removed.

    ``reason`` is what a reviewer reads in the matrix cell: one short sentence saying what the
    server does (e.g. "answers 500, not 400, for a size above the maximum").

    The status alone may stand for more than one problem (a 500 for the declared size, and a
    500 for a crash elsewhere): ``observed_error`` and ``observed_defect`` narrow what the
    declaration absorbs to the problem it describes; a case of the same status whose
    observation does not match is judged as a failure."""

    release: str = Field(min_length=1, description="Release it applies to; fnmatch glob allowed.")
    cases: tuple[str, ...] = Field(min_length=1, description="Case id globs, e.g. */oversize.")
    observed_status: int = Field(ge=100, le=599)
    reason: str = Field(min_length=1)
    observed_error: Regex | None = Field(
        default=None, description="Regex searched in the answer's error message (the body's "
        "text where it has no error envelope); unset: any.",
    )  # fmt: skip
    observed_defect: Regex | None = Field(
        default=None, description="Regex searched in the problem the judge reports (e.g. "
        "'accepted-but-invalid', 'wrong output: .*format'); unset: any.",
    )  # fmt: skip

    def observes(self, status: int, error: str, problem: str) -> bool:
        """Whether a case answered ``status`` with ``error`` (message or body) and ``problem``
        (the judge's) shows what this declaration describes."""
        if status != self.observed_status:
            return False
        if self.observed_error is not None and not re.search(self.observed_error, error):
            return False
        return self.observed_defect is None or bool(re.search(self.observed_defect, problem))


class ParityPair(_Spec):
    """Two paths that must produce the same output for the same request and seed."""

    a: ApiMode
    b: ApiMode
    compare: Literal["bytes", "pixels"]


class OutOfScopeEndpoint(_Spec):
    """A path the server serves that this model's contract leaves out, with the reason a reviewer
    reads (e.g. "the speech API: SD3 generates no audio")."""

    path: str = Field(pattern=r"^/", description="As GET /openapi.json lists it, templates too.")
    why: str = Field(min_length=1)


class ModelContract(_Spec):
    schema_version: int = 1
    model: str = Field(min_length=1)
    official: str = Field(min_length=1, description="Pinned official implementation and revision.")
    checkpoint: str = Field(min_length=1, description="Checkpoint revision or bundled recipe.")
    target_release: str = Field(min_length=1, description="vLLM-Omni release the contract targets.")
    endpoints: tuple[EndpointContract, ...] = Field(min_length=1)
    parity: tuple[ParityPair, ...] = ()
    deviations: tuple[Deviation, ...] = ()
    out_of_scope_endpoints: tuple[OutOfScopeEndpoint, ...] = Field(
        default=(), description="Served paths the contract leaves out on purpose, each with why "
        "(SKILL G0-21: every public endpoint is in the contract or listed here).",
    )  # fmt: skip

    def covered_paths(self) -> frozenset[str]:
        """The paths the contract's endpoints own (their job routes too), as path templates."""
        return frozenset(
            path
            for endpoint in self.endpoints
            for path in (endpoint.path, *JOB_PATHS.get(endpoint.api_mode, ()))
        )

    def endpoint(self, api_mode: str) -> EndpointContract | None:
        return next((e for e in self.endpoints if e.api_mode == api_mode), None)
