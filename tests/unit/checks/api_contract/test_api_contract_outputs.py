"""Output checks: image count/size/format; audio of every container decoded (rate, channels,
length); MP4 resolution and frame count always checked."""

from __future__ import annotations

import base64
import io
import json
import struct
import wave

import numpy as np
import soundfile
from PIL import Image

from omniqual.checks.api_contract.mp4 import mp4_video
from omniqual.checks.api_contract.outputs import (
    Expected,
    check_audio,
    check_images,
    check_video,
    extract_images,
)


def _png(width: int, height: int, fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format=fmt)
    return out.getvalue()


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def _mp4(frames: int, size: tuple[int, int] = (64, 64), *, stsz: bool = True) -> bytes:
    tkhd = _box(b"tkhd", b"\0" * 76 + struct.pack(">II", size[0] << 16, size[1] << 16))
    hdlr = _box(b"hdlr", b"\0" * 8 + b"vide" + b"\0" * 12)
    table = _box(b"stsz", b"\0" * 4 + b"\0" * 4 + struct.pack(">I", frames)) if stsz else b""
    mdia = _box(b"mdia", hdlr + _box(b"minf", _box(b"stbl", table)))
    moov = _box(b"moov", _box(b"trak", tkhd + mdia))
    return _box(b"ftyp", b"isom\0\0\0\0") + moov + _box(b"mdat", b"x" * 10)


def test_images_from_json_and_checks() -> None:
    body = json.dumps({"data": [{"b64_json": base64.b64encode(_png(32, 16)).decode()}]}).encode()
    images, problem = extract_images(body, "application/json")
    assert problem is None and len(images) == 1
    assert check_images(images, Expected(count=1, size=(32, 16), image_format="PNG")) == []
    wrong = check_images(images, Expected(count=2, size=(64, 64), image_format="JPEG"))
    assert "1 image(s) returned, 2 requested" in wrong
    assert "image 0 is 32x16, expected 64x64" in wrong and "image 0 is PNG, JPEG requested" in wrong


def test_chat_data_urls_are_extracted() -> None:
    url = "data:image/png;base64," + base64.b64encode(_png(8, 8)).decode()
    doc = {
        "choices": [{"message": {"content": [{"type": "image_url", "image_url": {"url": url}}]}}]
    }
    images, problem = extract_images(json.dumps(doc).encode(), "application/json")
    assert problem is None and images == [_png(8, 8)]


def test_wav_checks() -> None:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(44100)
        wav.writeframes(b"\0" * 4 * 22050)
    data = out.getvalue()
    assert check_audio(data, "audio/wav", Expected(length_s=0.5), 44100, 2, 0.05) == []
    problems = check_audio(data, "audio/wav", Expected(length_s=1.0), 48000, 1, 0.05)
    assert len(problems) == 3 and "0.500 s of audio, 1 s requested" in problems
    assert check_audio(b"", "audio/wav", Expected(), None, None, 0.05) == ["empty audio body"]


def test_mp4_box_parse() -> None:
    video = mp4_video(_mp4(9, (48, 32)))
    assert video is not None and video.frames == 9 and video.size == (48, 32)
    assert check_video(_mp4(9), Expected(frames=9, size=(64, 64))) == []
    assert check_video(_mp4(9), Expected(frames=5)) == ["9 frame(s) in the MP4, 5 expected"]
    assert "no leading ftyp" in check_video(b"\0" * 32, Expected())[0]


def test_mp4_resolution_is_checked() -> None:
    assert check_video(_mp4(5, (32, 64)), Expected(frames=5, size=(64, 64))) == [
        "MP4 is 32x64, expected 64x64"
    ]


def test_mp4_without_stsz_or_moov_fails_with_its_reason() -> None:
    problems = check_video(_mp4(5, stsz=False), Expected(frames=5, size=(64, 64)))
    assert problems == ["MP4 video track has no stsz box: frame count unverifiable"]
    bare = _box(b"ftyp", b"isom\0\0\0\0") + _box(b"mdat", b"x" * 10)
    assert "no moov box" in check_video(bare, Expected(frames=5))[0]


def _encoded(fmt: str, seconds: float, rate: int = 44100, channels: int = 2) -> bytes:
    out = io.BytesIO()
    samples = np.zeros((round(seconds * rate), channels), dtype=np.float32)
    soundfile.write(out, samples, rate, format=fmt)
    return out.getvalue()


def test_non_wav_audio_is_decoded_and_checked() -> None:
    flac = _encoded("FLAC", 0.5)
    assert (
        check_audio(flac, "audio/flac", Expected(length_s=0.5, audio_format="flac"), 44100, 2, 0.05)
        == []
    )
    wrong = check_audio(
        _encoded("FLAC", 1.0, 22050, 1), "audio/flac", Expected(length_s=0.5), 44100, 2, 0.05
    )
    assert wrong == [
        "sample rate 22050, contract says 44100",
        "1 channel(s), contract says 2",
        "1.000 s of audio, 0.5 s requested",
    ]
    mp3 = _encoded("MP3", 0.5)
    assert (
        check_audio(mp3, "audio/mpeg", Expected(length_s=0.5, audio_format="mp3"), 44100, 2, 0.05)
        == []
    )
    assert check_audio(flac, "audio/flac", Expected(audio_format="mp3"), None, None, 0.05) == [
        "flac audio returned, mp3 requested"
    ]
    assert (
        "does not decode"
        in check_audio(b"\x01" * 64, "audio/flac", Expected(), None, None, 0.05)[0]
    )


def test_headerless_pcm_length_is_checked() -> None:
    pcm = b"\0" * (4 * 22050)  # 0.5 s of 16-bit stereo at 44.1 kHz
    assert check_audio(pcm, "audio/pcm", Expected(length_s=0.5), 44100, 2, 0.05) == []
    assert check_audio(pcm, "audio/pcm", Expected(length_s=1.0), 44100, 2, 0.05) == [
        "0.500 s of audio, 1 s requested"
    ]
