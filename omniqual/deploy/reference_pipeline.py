"""Subprocess entry point: the official diffusers pipeline run on the served requests.

Run as ``python -m omniqual.deploy.reference_pipeline JOB.json RESULT.json`` inside the target's
environment (:mod:`omniqual.deploy.reference_runner` writes the job and validates the result).
It loads the pipeline class the contract names from the local checkpoint once, in the served
dtype, and runs every case with the served request's prompt, steps, guidance, shape and count.
The scheduler is the checkpoint's own (``from_pretrained`` reads ``scheduler/``). Noise comes
from ``torch.Generator(device).manual_seed(seed)``, the generator vLLM-Omni 0.30's diffusion
runner makes for a seeded request on a CPU worker (``_initialize_generator``), consumed by the
same ``randn_tensor`` in ``prepare_latents``. Media are written losslessly: images as PNG (the
pipeline's own PIL output), video as uint8 frames in ``.npy`` (rounded the way vLLM-Omni's
muxer rounds them), audio as float WAV. A case that raises is recorded with its error and the
rest still run; a failure to load the pipeline exits non-zero.

torch and diffusers are imported only inside :func:`main`.
"""

import argparse
import json
import time
import traceback
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

_VERSIONED = ("torch", "diffusers", "transformers", "vllm-omni", "numpy", "pillow")


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """Each distribution's installed version, ``absent`` where it is not installed (shared with
    :mod:`omniqual.deploy.offline_pipeline`)."""
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def _kwargs(case: dict[str, Any], kind: str, torch: Any, device: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "prompt": case["prompt"],
        "generator": torch.Generator(device=device).manual_seed(int(case["seed"])),
    }
    if case.get("steps") is not None:
        kwargs["num_inference_steps"] = int(case["steps"])
    kwargs.update(case.get("guidance") or {})
    if case.get("negative_prompt") is not None:
        kwargs["negative_prompt"] = case["negative_prompt"]
    if kind in ("image", "video") and case.get("width"):
        kwargs["width"], kwargs["height"] = int(case["width"]), int(case["height"])
    if kind == "image":
        kwargs["num_images_per_prompt"] = int(case.get("count") or 1)
        kwargs["output_type"] = "pil"
    elif kind == "video":
        if case.get("num_frames"):
            kwargs["num_frames"] = int(case["num_frames"])
        kwargs["output_type"] = "np"
    else:
        kwargs["num_waveforms_per_prompt"] = int(case.get("count") or 1)
        if case.get("audio_length_s") is not None:
            kwargs["audio_end_in_s"] = float(case["audio_length_s"])
    if case.get("image"):
        from PIL import Image

        with Image.open(case["image"]) as image:
            kwargs["image"] = image.convert("RGB")
    return kwargs


def _write(result: Any, case: dict[str, Any], kind: str, pipe: Any, out: Path) -> dict[str, Any]:
    import numpy as np

    stem, files = case["id"].replace("/", "_"), list[str]()
    entry: dict[str, Any] = {"id": case["id"], "files": files}
    if kind == "image":
        for index, image in enumerate(result.images):
            files.append(f"{stem}-{index}.png")
            image.save(out / files[-1], format="PNG")
        entry["media_type"] = "image/png"
    elif kind == "video":
        for index, video in enumerate(np.asarray(result.frames)):
            frames = np.rint(np.clip(video.astype(np.float32), 0.0, 1.0) * 255.0).astype(np.uint8)
            files.append(f"{stem}-{index}.npy")
            np.save(out / files[-1], frames, allow_pickle=False)
        entry["media_type"], entry["fps"] = "application/x-npy", case.get("fps")
    else:
        import soundfile  # type: ignore[import-untyped]

        rate = int(pipe.vae.sampling_rate)
        for index, audio in enumerate(result.audios):
            samples = audio.float().cpu().numpy().T  # channels-last, as vLLM-Omni writes it
            files.append(f"{stem}-{index}.wav")
            soundfile.write(out / files[-1], samples, rate, format="WAV", subtype="FLOAT")
        entry["media_type"], entry["sample_rate"] = "audio/wav", rate
    return entry


def run(job: dict[str, Any]) -> dict[str, Any]:
    import diffusers
    import torch

    started = time.monotonic()
    device = job.get("device") or "cpu"
    dtype = getattr(torch, job["dtype"])
    pipeline_cls = getattr(diffusers, job["pipeline_class"])
    pipe = pipeline_cls.from_pretrained(job["checkpoint"], local_files_only=True, torch_dtype=dtype)
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    load_s = time.monotonic() - started
    out = Path(job["out_dir"])
    outputs: list[dict[str, Any]] = []
    for case in job["cases"]:
        kind = case["kind"]
        begun = time.monotonic()
        try:
            with torch.inference_mode():
                result = pipe(**_kwargs(case, kind, torch, device))
            entry = _write(result, case, kind, pipe, out)
        except Exception as exc:  # a case's crash is data for the gate
            last = traceback.format_exception_only(exc)[-1].strip()
            entry = {"id": case["id"], "files": [], "error": last[:400]}
        entry["seconds"] = round(time.monotonic() - begun, 4)
        outputs.append(entry)
    return {
        "pipeline_class": type(pipe).__name__,
        "scheduler": type(pipe.scheduler).__name__ if getattr(pipe, "scheduler", None) else "",
        "dtype": job["dtype"],
        "device": device,
        "generator": f"torch.Generator(device={device!r}).manual_seed(seed)",
        "versions": package_versions(_VERSIONED),
        "threads": torch.get_num_threads(),
        "load_s": round(load_s, 4),
        "outputs": outputs,
    }


def run_job_files(run_job: Callable[[dict[str, Any]], dict[str, Any]], description: str) -> None:
    """``PROGRAM JOB.json RESULT.json``: read the job, run it, write the result (shared with
    :mod:`omniqual.deploy.offline_pipeline`)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("job", type=Path)
    parser.add_argument("result", type=Path)
    args = parser.parse_args()
    job = json.loads(args.job.read_text(encoding="utf-8"))
    result = run_job(job)
    args.result.write_text(json.dumps(result, indent=1), encoding="utf-8")


def main() -> None:
    run_job_files(run, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
