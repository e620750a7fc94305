"""Encoders for the compare tests: PNG, WAV and MP4 built in memory (named uniquely so no other
test directory's module shadows it)."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def png_bytes(array: np.ndarray, compress_level: int = 6) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()


def wav_bytes(samples: np.ndarray, rate: int, subtype: str = "PCM_16") -> bytes:
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV", subtype=subtype)
    return buffer.getvalue()


def mp4_bytes(frames: np.ndarray, fps: int) -> bytes:
    import av

    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        for array in frames:
            frame = av.VideoFrame.from_ndarray(array, format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buffer.getvalue()
