"""G0-27 for video: the MP4's codec (its stsd sample entry) and frame rate (mdhd timescale over
the stts sample duration) are read from the container, with no decoder, and held against the
contract's declared codec and the requested (or default) fps."""

from __future__ import annotations

import io
from pathlib import Path

import av
import numpy as np
import pytest
from conftest import CONTRACTS, GateRun, run_gate
from served_fake import ServedFake, ServedScript, container_mp4

from omniqual.checks.api_contract.mp4 import mp4_video
from omniqual.checks.api_contract.outputs import Expected, check_video
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import load_contract
from omniqual.specs.source import SpecError
from tests.fakes import FakeConfig

_ASYNC_OUTPUT = (
    "    output: {kind: video, size_field: size, frames_field: num_frames}\n"
    "  - api_mode: videos-sync"
)


def _encoded(codec: str, fps: int, frames: int = 5) -> bytes:
    """A real MP4 muxed by FFmpeg (PyAV), as vLLM-Omni's encoder writes one."""
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for index in range(frames):
            pixels = np.full((48, 64, 3), index * 40, np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode())
    return out.getvalue()


@pytest.mark.parametrize(("codec", "fourcc", "name", "fps"), [
    ("libx264", "avc1", "h264", 16), ("mpeg4", "mp4v", "mpeg4", 24),
])  # fmt: skip
def test_codec_and_fps_of_a_muxed_mp4(codec: str, fourcc: str, name: str, fps: int) -> None:
    video = mp4_video(_encoded(codec, fps))
    assert video is not None
    assert (video.fourcc, video.codec, video.frames, video.size) == (fourcc, name, 5, (64, 48))
    assert video.fps == pytest.approx(fps)


def test_check_video_names_codec_and_fps_mismatches() -> None:
    data = _encoded("libx264", 16)
    assert check_video(data, Expected(frames=5, size=(64, 48), codec="h264", fps=16.0)) == []
    problems = check_video(data, Expected(codec="hevc", fps=24.0))
    assert "MP4 codec avc1 (h264), contract says hevc" in problems
    assert "MP4 plays at 16.000 fps, 24 fps expected" in problems


def test_missing_codec_or_rate_boxes_are_unverifiable_not_passed() -> None:
    bare = (
        container_mp4(5, (64, 64), "avc1", 16.0).replace(b"stsd", b"free").replace(b"stts", b"free")
    )
    problems = check_video(bare, Expected(codec="h264", fps=16.0))
    assert any("codec unverifiable" in p for p in problems)
    assert any("frame rate unverifiable" in p for p in problems)


def _contract(tmp_path: Path, output: str) -> Path:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    assert _ASYNC_OUTPUT in source
    changed = source.replace(_ASYNC_OUTPUT, output + "\n  - api_mode: videos-sync")
    (tmp_path / "fake-omni.yaml").write_text(changed)
    return tmp_path


def _run(config: FakeConfig, contracts: Path, **script: object) -> GateRun:
    storage = contracts / "storage"
    storage.mkdir(exist_ok=True)
    fake = ServedFake(config, ServedScript(storage_dir=storage, **script))  # type: ignore[arg-type]
    return run_gate(fake, contracts_dir=contracts, api_modes=["videos-async"], parity=False,
                    temp_dirs=[str(config.temp_dir)], storage_dirs=[str(storage)])  # fmt: skip


DECLARED = ("    output: {kind: video, size_field: size, frames_field: num_frames, codec: h264,\n"
            "             fps_field: fps, default_fps: 24}")  # fmt: skip


def test_declared_codec_and_fps_pass_when_served(fake_config: FakeConfig, tmp_path: Path) -> None:
    run = _run(fake_config, _contract(tmp_path, DECLARED), mp4_fourcc="avc1")
    assert run.outcome.outcome is GateOutcome.PASSED, run.outcome.reasons


def test_another_frame_rate_than_requested_fails(fake_config: FakeConfig, tmp_path: Path) -> None:
    run = _run(fake_config, _contract(tmp_path, DECLARED), mp4_fourcc="avc1", fps_factor=0.5)
    assert run.outcome.outcome is GateOutcome.FAILED
    text = "\n".join(run.outcome.reasons)
    assert "videos-async/fps/max" in text and "fps expected" in text, text
    assert "videos-async/probe" not in text or "MP4 plays at" in text


def test_another_codec_than_declared_fails(fake_config: FakeConfig, tmp_path: Path) -> None:
    run = _run(fake_config, _contract(tmp_path, DECLARED), mp4_fourcc="mp4v")
    assert run.outcome.outcome is GateOutcome.FAILED
    assert "MP4 codec mp4v (mpeg4), contract says h264" in "\n".join(run.outcome.reasons)


def test_video_fields_on_an_image_output_are_a_spec_error(tmp_path: Path) -> None:
    source = (CONTRACTS / "fake-omni.yaml").read_text()
    old = "output: {kind: image, count_field: n, size_field: size}"
    (tmp_path / "fake-omni.yaml").write_text(source.replace(old, old[:-1] + ", codec: h264}"))
    with pytest.raises(SpecError, match="only a video output has one"):
        load_contract(tmp_path / "fake-omni.yaml")
