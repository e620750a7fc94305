"""From parity cases to the official pipeline's outputs, and back.

:func:`reference_job` turns the served requests into the reference runner's job (diffusers
argument names, the same seed, steps, guidance, shape and count; the edit's upload written to a
file); :func:`collect` reads what the run wrote into a :class:`ReferenceSet`, the per-case media
both the gate and ``omniqual reference build`` use.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from omniqual.checks.api_contract.wire import file_bytes
from omniqual.checks.parity.requests import ParityCase
from omniqual.deploy.reference_runner import Engine, ReferenceCase, ReferenceJob, ReferenceRun

# Request fields that are the diffusers pipeline's guidance arguments under the same name.
GUIDANCE_FIELDS = ("guidance_scale", "true_cfg_scale", "guidance_scale_2")


@dataclass(frozen=True, slots=True)
class ReferenceMedia:
    items: tuple[bytes, ...]
    """One file per output: PNG, uint8 frames as ``.npy``, or float WAV."""
    media_type: str
    fps: float | None = None
    sample_rate: int | None = None


@dataclass(frozen=True, slots=True)
class ReferenceSet:
    media: Mapping[str, ReferenceMedia] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    """Cases the official pipeline raised on, with the error."""


def _number(case: ParityCase, name: str) -> float | None:
    value = case.values.get(name)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def reference_case(case: ParityCase, image: Path | None) -> ReferenceCase:
    size = case.size
    frames, fps = _number(case, "num_frames"), _number(case, "fps")
    negative = case.values.get("negative_prompt")
    guidance = {n: v for n in GUIDANCE_FIELDS if (v := _number(case, n)) is not None}
    return ReferenceCase(
        id=case.id, kind=case.kind,
        prompt=case.prompt, seed=case.seed, steps=case.steps, guidance=guidance,
        negative_prompt=negative if isinstance(negative, str) else None,
        width=size[0] if size else None, height=size[1] if size else None,
        num_frames=int(frames) if frames is not None else None,
        fps=int(fps) if fps is not None else None,
        audio_length_s=_number(case, "audio_length"), count=case.count,
        image=str(image) if image else None,
    )  # fmt: skip


def reference_job(
    cases: tuple[ParityCase, ...],
    *,
    checkpoint: Path,
    pipeline_class: str,
    dtype: str,
    device: str,
    out_dir: Path,
    engine: Engine = "official",
    engine_args: Mapping[str, JsonValue] | None = None,
) -> ReferenceJob:
    out_dir.mkdir(parents=True, exist_ok=True)
    built: list[ReferenceCase] = []
    for case in cases:
        image: Path | None = None
        if case.files:
            # The same upload the served request carries (api-contract's fixture image).
            image = out_dir / f"input-{case.id.replace('/', '_')}.png"
            image.write_bytes(file_bytes(case.files[0]))
        built.append(reference_case(case, image))
    return ReferenceJob(checkpoint=str(checkpoint), pipeline_class=pipeline_class, dtype=dtype,
                        device=device, out_dir=str(out_dir), cases=tuple(built), engine=engine,
                        engine_args=dict(engine_args or {}))  # fmt: skip


def collect(run: ReferenceRun) -> ReferenceSet:
    media: dict[str, ReferenceMedia] = {}
    errors: dict[str, str] = {}
    for output in run.result.outputs:
        if output.error is not None:
            errors[output.id] = output.error
            continue
        items = tuple((run.out_dir / name).read_bytes() for name in output.files)
        fps = float(output.fps) if output.fps is not None else None
        media[output.id] = ReferenceMedia(items, output.media_type, fps, output.sample_rate)
    return ReferenceSet(media, errors)
