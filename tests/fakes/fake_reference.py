"""A fake reference runner for reference-parity tests: the "official pipeline" of the fake server.

It writes what a faithful fake server answers for the same request (the fake's seed-deterministic
PNG for prompt, seed, output index and steps), optionally with Gaussian noise on the pixels, a
crash of the whole run, or a crash of single cases, and returns a real :class:`ReferenceRun`
(so the check reads files and validates the result exactly as after a subprocess).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from omniqual.deploy.reference_runner import (
    ReferenceJob,
    ReferenceOutput,
    ReferenceResult,
    ReferenceRun,
    ReferenceRunError,
)
from tests.fakes.fake_media import make_image


def _noisy(png: bytes, sigma: float, seed: int) -> bytes:
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64)
    noise = np.random.default_rng(seed).normal(0.0, sigma, pixels.shape)
    noisy = np.clip(np.rint(pixels + noise), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(noisy).save(out, format="PNG")
    return out.getvalue()


@dataclass
class FakeReferenceRunner:
    noise_sigma: float = 0.0
    crash: str | None = None
    """The whole run fails with this tail (like a non-zero exit of the subprocess)."""
    case_errors: dict[str, str] = field(default_factory=dict)
    jobs: list[ReferenceJob] = field(default_factory=list)

    def __call__(
        self, job: ReferenceJob, *, python: str | None, env: dict[str, str], timeout_s: float
    ) -> ReferenceRun:
        self.jobs.append(job)
        if self.crash is not None:
            raise ReferenceRunError(f"the reference exited with code 1: {self.crash}")
        out = Path(job.out_dir)
        outputs: list[ReferenceOutput] = []
        for case in job.cases:
            if case.id in self.case_errors:
                outputs.append(ReferenceOutput(id=case.id, error=self.case_errors[case.id]))
                continue
            files: list[str] = []
            for index in range(case.count):
                png = make_image(case.width or 64, case.height or 64, "png", case.seed,
                                 case.prompt, index, case.steps)  # fmt: skip
                if self.noise_sigma:
                    png = _noisy(png, self.noise_sigma, case.seed + index)
                files.append(f"{case.id.replace('/', '_')}-{index}.png")
                (out / files[-1]).write_bytes(png)
            outputs.append(ReferenceOutput(id=case.id, files=tuple(files), media_type="image/png"))
        result = ReferenceResult(
            pipeline_class=job.pipeline_class, scheduler="FakeScheduler", dtype=job.dtype,
            device=job.device, generator="fake(seed)", versions={"fake": "1"}, threads=1,
            load_s=0.0, outputs=tuple(outputs),
        )  # fmt: skip
        return ReferenceRun(result, out, ("fake-reference", job.pipeline_class), 0.0)
