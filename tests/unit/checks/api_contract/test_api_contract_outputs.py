"""Output checks: image count/size/format, WAV rate/channels/length, MP4 ftyp and frame count."""

from __future__ import annotations

import base64
import io
import json
import struct
import wave

from PIL import Image

from omniqual.checks.api_contract.outputs import (
    Expected,
    check_audio,
    check_images,
    check_video,
    extract_images,
    mp4_video_frames,
)


def _png(width: int, height: int, fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height)).save(out, format=fmt)
    return out.getvalue()


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def _mp4(frames: int) -> bytes:
    hdlr = _box(b"hdlr", b"\0" * 8 + b"vide" + b"\0" * 12)
    stsz = _box(b"stsz", b"\0" * 4 + b"\0" * 4 + struct.pack(">I", frames))
    stbl = _box(b"stbl", stsz)
    mdia = _box(b"mdia", hdlr + _box(b"minf", stbl))
    moov = _box(b"moov", _box(b"trak", mdia))
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
    assert mp4_video_frames(_mp4(9)) == 9
    assert check_video(_mp4(9), Expected(frames=9)) == []
    assert check_video(_mp4(9), Expected(frames=5)) == ["9 frame(s) in the MP4, 5 expected"]
    assert "no leading ftyp" in check_video(b"\0" * 32, Expected())[0]
