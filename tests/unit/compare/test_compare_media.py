"""Decoding round trips: PNG and WAV exact, MP4 frame count, size and rate; bad bytes refused."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from synthetic_media import mp4_bytes, png_bytes, wav_bytes

from omniqual.compare import (
    DecodedAudio,
    DecodedVideo,
    MediaDecodeError,
    decode_audio,
    decode_image,
    decode_video,
)


@pytest.mark.parametrize("channels", [3, 4])
def test_png_round_trip_is_exact_and_keeps_channels(noise_image, channels: int) -> None:
    image = noise_image(channels=channels)
    decoded = decode_image(png_bytes(image))
    assert decoded.dtype == np.uint8
    assert np.array_equal(decoded, image)


def test_grayscale_is_one_channel(noise_image) -> None:
    gray = noise_image(channels=1)[:, :, 0]
    decoded = decode_image(png_bytes(gray))
    assert decoded.shape == (*gray.shape, 1)
    assert np.array_equal(decoded[:, :, 0], gray)


def test_a_palette_image_becomes_rgb(noise_image) -> None:
    palette = Image.fromarray(noise_image()).convert("P")
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG")
    decoded = decode_image(buffer.getvalue())
    assert decoded.shape == (48, 64, 3)
    assert np.array_equal(decoded, np.asarray(palette.convert("RGB")))


def test_wav_round_trip_is_exact(rng: np.random.Generator) -> None:
    pcm = rng.integers(-32768, 32768, size=(4000, 2), dtype=np.int16)
    decoded = decode_audio(wav_bytes(pcm, 22050))
    assert decoded.sample_rate == 22050
    assert decoded.samples.dtype == np.float32
    assert decoded.samples.shape == (4000, 2)
    assert np.array_equal(decoded.samples, pcm.astype(np.float32) / 32768.0)
    assert decoded.duration_s == pytest.approx(4000 / 22050)


def test_mono_audio_is_n_by_1(rng: np.random.Generator) -> None:
    samples = rng.uniform(-1, 1, size=1000).astype(np.float32)
    decoded = decode_audio(wav_bytes(samples, 16000, subtype="FLOAT"))
    assert decoded.samples.shape == (1000, 1)
    assert np.array_equal(decoded.samples[:, 0], samples)


def test_mp4_round_trip_keeps_frame_count_size_and_rate(rng: np.random.Generator) -> None:
    frames = np.repeat(
        rng.integers(0, 256, size=(6, 1, 1, 3), dtype=np.uint8), 48 * 64, axis=1
    ).reshape(6, 48, 64, 3)

    video = decode_video(mp4_bytes(frames, fps=8))

    assert video.frames.shape == (6, 48, 64, 3)
    assert video.frames.dtype == np.uint8
    assert video.frame_count == 6
    assert video.size == (64, 48)
    assert video.fps == pytest.approx(8.0)
    # Lossy, but flat colours survive H.264 within a few levels.
    assert np.max(np.abs(video.frames.astype(int) - frames.astype(int))) <= 8


@pytest.mark.parametrize(
    ("decode", "message"),
    [
        (decode_image, "not a decodable image"),
        (decode_audio, "not decodable audio"),
        (decode_video, "not a decodable video"),
    ],
)
def test_garbage_bytes_are_a_decode_error(decode, message: str) -> None:
    with pytest.raises(MediaDecodeError, match=message):
        decode(b"definitely not media" * 10)


def test_16_bit_grayscale_keeps_its_high_byte() -> None:
    deep = (np.arange(64 * 64, dtype=np.uint16).reshape(64, 64) * 16).astype(np.uint16)
    decoded = decode_image(png_bytes(deep))
    assert decoded.shape == (64, 64, 1)
    assert np.array_equal(decoded[:, :, 0], (deep >> 8).astype(np.uint8))


def test_32_bit_float_images_are_refused_by_name() -> None:
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((4, 4), dtype=np.float32)).save(buffer, format="TIFF")
    with pytest.raises(MediaDecodeError, match="'F'-mode image"):
        decode_image(buffer.getvalue())


@pytest.mark.parametrize(
    ("frames", "fps", "message"),
    [
        (np.zeros((2, 8, 8, 3), dtype=np.float32), 8.0, "T×H×W×3 uint8"),
        (np.zeros((2, 8, 8), dtype=np.uint8), 8.0, "T×H×W×3 uint8"),
        (np.zeros((2, 8, 8, 3), dtype=np.uint8), 0.0, "positive and finite"),
    ],
)
def test_a_malformed_video_is_refused_at_construction(frames, fps, message: str) -> None:
    with pytest.raises(MediaDecodeError, match=message):
        DecodedVideo(frames=frames, fps=fps)


def test_malformed_audio_is_refused_at_construction() -> None:
    with pytest.raises(MediaDecodeError, match="N×C float32"):
        DecodedAudio(samples=np.zeros(100, dtype=np.float32), sample_rate=16000)
    with pytest.raises(MediaDecodeError, match="sample rate must be positive"):
        DecodedAudio(samples=np.zeros((100, 1), dtype=np.float32), sample_rate=0)
