"""Decoding served media bytes into arrays: images (Pillow), MP4 video (PyAV), audio (soundfile).

Everything the comparison functions take comes through here, so a decode failure is one error
type (:class:`MediaDecodeError`) with the reason, whatever the container.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from PIL import Image, UnidentifiedImageError

# Modes kept as they are; everything else is converted to RGB, or RGBA when it carries alpha.
_KEPT_MODES = {"RGB": 3, "RGBA": 4, "L": 1}


class MediaDecodeError(ValueError):
    """The bytes are not decodable media of the expected kind."""


@dataclass(frozen=True)
class DecodedVideo:
    """Decoded frames (T×H×W×3, uint8 RGB) and the stream's average frame rate, when it has one."""

    frames: npt.NDArray[np.uint8]
    fps: float | None

    def __post_init__(self) -> None:
        # Checked here so a malformed reference (say, a hand-made frame dump) fails by name
        # instead of as a broadcasting error deep in a metric.
        shape = self.frames.shape
        if self.frames.dtype != np.uint8 or len(shape) != 4 or shape[3] != 3:
            raise MediaDecodeError(
                f"video frames must be T×H×W×3 uint8, got {shape} {self.frames.dtype}"
            )
        if self.fps is not None and not (math.isfinite(self.fps) and self.fps > 0):
            raise MediaDecodeError(f"a frame rate must be positive and finite, got {self.fps}")

    @property
    def frame_count(self) -> int:
        return int(self.frames.shape[0])

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every frame."""
        return int(self.frames.shape[2]), int(self.frames.shape[1])


@dataclass(frozen=True)
class DecodedAudio:
    """Decoded samples (N×C, float32 in [-1, 1] for PCM sources) at ``sample_rate`` Hz."""

    samples: npt.NDArray[np.float32]
    sample_rate: int

    def __post_init__(self) -> None:
        if self.samples.dtype != np.float32 or self.samples.ndim != 2:
            raise MediaDecodeError(
                f"audio samples must be N×C float32, got {self.samples.shape} {self.samples.dtype}"
            )
        if self.sample_rate <= 0:
            raise MediaDecodeError(f"a sample rate must be positive, got {self.sample_rate}")

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1])

    @property
    def length(self) -> int:
        """Samples per channel."""
        return int(self.samples.shape[0])

    @property
    def duration_s(self) -> float:
        return self.length / self.sample_rate


def decode_image(data: bytes) -> npt.NDArray[np.uint8]:
    """An H×W×C uint8 array: RGB and RGBA keep their channels, grayscale is H×W×1.

    Palette and other 8-bit modes become RGB (RGBA when they carry transparency). 16-bit
    grayscale keeps its high byte (Pillow's own conversion would clip it at 255); 32-bit integer
    and float images have no agreed 8-bit reading and are refused.
    """
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            picture: Image.Image = image
            if picture.mode.startswith("I;16"):
                high_byte = np.asarray(picture).astype(np.uint16) >> 8
                array = high_byte.astype(np.uint8)
            elif picture.mode in ("I", "F"):
                raise MediaDecodeError(
                    f"a {picture.mode!r}-mode image (32-bit) has no 8-bit reading to compare"
                )
            else:
                if picture.mode not in _KEPT_MODES:
                    has_alpha = "A" in picture.getbands() or "transparency" in picture.info
                    picture = picture.convert("RGBA" if has_alpha else "RGB")
                array = np.asarray(picture, dtype=np.uint8)
    except MediaDecodeError:
        raise
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise MediaDecodeError(f"not a decodable image: {exc}") from exc
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    return np.ascontiguousarray(array)


def decode_video(data: bytes) -> DecodedVideo:
    """All frames of the first video stream as RGB, with its average frame rate."""
    import av  # PyAV loads FFmpeg's libraries; only video comparisons pay for that.

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.video:
                raise MediaDecodeError("the container has no video stream")
            stream = container.streams.video[0]
            rate = stream.average_rate
            frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]
    except av.FFmpegError as exc:
        raise MediaDecodeError(f"not a decodable video: {exc}") from exc
    if not frames:
        raise MediaDecodeError("the video stream has no frames")
    fps = float(rate) if rate is not None and rate > 0 else None
    return DecodedVideo(frames=np.stack(frames).astype(np.uint8, copy=False), fps=fps)


def decode_audio(data: bytes) -> DecodedAudio:
    """Samples as N×C float32 (PCM scaled to [-1, 1]) and the sample rate, via libsndfile."""
    import soundfile  # type: ignore[import-untyped]

    try:
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, TypeError) as exc:
        raise MediaDecodeError(f"not decodable audio: {exc}") from exc
    return DecodedAudio(
        samples=np.ascontiguousarray(samples, dtype=np.float32), sample_rate=int(rate)
    )
