"""The fake server as a launched vLLM-Omni looks to the api-contract gate beyond its routes: the
paths its ``/openapi.json`` lists, the log it writes, the files it stores for finished video jobs
and the MP4 container it answers (its codec and frame rate, which the fake's MP4s leave out).
Each ``ServedScript`` switch is one way a real server breaks a rule the gate decides; all off,
the fake behaves as a clean vLLM-Omni 0.30 does."""

from __future__ import annotations

import contextlib
import io
import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from omniqual.checks.api_contract.mp4 import mp4_video
from omniqual.checks.api_contract.wire import fixture_png
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_core import Outcome, Reply
from tests.fakes.fake_media import parse_form
from tests.fakes.fake_openapi import openapi_document

_JOB = re.compile(r"^/v1/videos/(?P<id>video_gen_[^/]+)(?P<content>/content)?$")


@dataclass
class ServedScript:
    extra_paths: tuple[str, ...] = ()
    """Paths the fake's /openapi.json lists beside its own (a route it serves, say)."""
    no_openapi: bool = False
    """GET /openapi.json answers 404 (a server built without its schema)."""
    log_path: Path | None = None
    """Where the fake writes its log: an access line per request, as uvicorn does."""
    logs_prompts: bool = False
    """The log also gets each request's prompt text (a server logging requests)."""
    logs_image_urls: bool = False
    """The log also gets each chat image_url it received (data URLs with their base64)."""
    logs_uploads: bool = False
    """The log also gets the raw bytes of each multipart upload."""
    mp4_fourcc: str | None = None
    """Video answers become MP4s whose sample entry is this fourcc, at the requested fps."""
    fps_factor: float = 1.0
    """... times this (a server that encodes at another frame rate than asked)."""
    storage_dir: Path | None = None
    """Where a finished job's video is stored (named by its id), as VLLM_OMNI_STORAGE_PATH."""
    keeps_stored_file: bool = False
    """DELETE answers OK but leaves the job's stored file behind."""
    serves_deleted_content: bool = False
    """The content route still answers 200 with the video after the job's DELETE."""
    decodes_headers_only: bool = False
    """An edit whose image header declares more pixels than the model's cap is served anyway
    (its pixels reach the engine): no decoded-pixel cap."""


class ServedFake(FakeOmni):
    """``FakeOmni`` with the outside of a launched server scripted by ``ServedScript``."""

    def __init__(self, config: FakeConfig, script: ServedScript | None = None) -> None:
        super().__init__(config)
        self.script = script or ServedScript()
        self.deleted_content: dict[str, bytes] = {}

    def _route(self, method: str, path: str, request: httpx.Request) -> Outcome:
        outcome = self._served(method, path, request)
        if self.script.log_path is not None:
            status = outcome.response.status_code if isinstance(outcome, Reply) else 0
            with self.script.log_path.open("ab") as log:
                log.write(f'INFO: 127.0.0.1 - "{method} {path} HTTP/1.1" {status}\n'.encode())
                log.write(self._logged_content(request))
        return outcome

    def _logged_content(self, request: httpx.Request) -> bytes:
        script, lines = self.script, []
        doc = _json_body(request)
        form = parse_form(request.headers.get("content-type", ""), request.content)
        if script.logs_prompts:
            lines += [f"prompt={doc[k]!r}" for k in ("prompt", "input") if k in doc]
            lines += [f"prompt={part['text']!r}" for part in _chat_parts(doc) if "text" in part]
            lines += [f"prompt={form.first('prompt')!r}"] if form and form.first("prompt") else []
        if script.logs_image_urls:
            lines += [
                f"image_url={part['image_url']['url']}"
                for part in _chat_parts(doc)
                if isinstance(part.get("image_url"), dict)
            ]
        text = "".join(f"INFO request {line}\n" for line in lines).encode()
        if script.logs_uploads and form is not None:
            text += b"".join(data + b"\n" for parts in form.files.values() for _, data in parts)
        return text

    def _served(self, method: str, path: str, request: httpx.Request) -> Outcome:
        outcome = self._served_plain(method, path, request)
        if self.script.mp4_fourcc is None or not isinstance(outcome, Reply):
            return outcome
        response = outcome.response
        if response.headers.get("content-type") != "video/mp4" or response.status_code != 200:
            return outcome
        fps = self._requested_fps(path, request) * self.script.fps_factor
        video = mp4_video(response.content)
        assert video is not None and video.frames is not None and video.size is not None
        body = container_mp4(video.frames, video.size, self.script.mp4_fourcc, fps)
        headers = {k: v for k, v in response.headers.items() if k != "content-length"}
        return Reply(httpx.Response(200, content=body, headers=headers), outcome.route,
                     outcome.work_s)  # fmt: skip

    def _header_sized(self, request: httpx.Request) -> httpx.Request:
        """The edit as the engine would get it: an image the header says is huge is taken at
        its word and stands in as a small decodable one (the fake renders no huge pixels)."""
        form = parse_form(request.headers.get("content-type", ""), request.content)
        if form is None:
            return request
        files = []
        for name, parts in form.files.items():
            for filename, data in parts:
                unreadable = (OSError, ValueError, Image.DecompressionBombError)
                with contextlib.suppress(*unreadable), Image.open(io.BytesIO(data)) as image:
                    if image.width * image.height > self.config.max_pixels:
                        data = fixture_png()
                files.append((name, (filename, data, "image/png")))
        rebuilt = httpx.Request("POST", request.url, data=form.fields, files=files)
        rebuilt.read()
        return rebuilt

    def _requested_fps(self, path: str, request: httpx.Request) -> float:
        if path.endswith("/content"):
            with self.lock:
                return float(self.state.jobs[path.split("/")[3]].fps)
        form = parse_form(request.headers.get("content-type", ""), request.content)
        given = form.first("fps") if form else None
        return float(given) if given else float(self.config.default_fps)

    def _served_plain(self, method: str, path: str, request: httpx.Request) -> Outcome:
        if self.script.decodes_headers_only and (method, path) == ("POST", "/v1/images/edits"):
            request = self._header_sized(request)
        job = _JOB.match(path)
        if job is None:
            return self._served_openapi(method, path, request)
        video_id, content = job.group("id"), job.group("content")
        if content and method == "GET" and video_id in self.deleted_content:
            body = self.deleted_content[video_id]
            return Reply(httpx.Response(200, content=body, headers={"content-type": "video/mp4"}),
                         "GET /v1/videos/{id}/content")  # fmt: skip
        outcome = super()._route(method, path, request)
        if not isinstance(outcome, Reply) or outcome.response.status_code != 200:
            return outcome
        stored = self.script.storage_dir / video_id if self.script.storage_dir else None
        if content and method == "GET" and stored is not None:
            stored.write_bytes(outcome.response.content)  # the file the job finished into
        if not content and method == "DELETE":
            if self.script.serves_deleted_content and stored is not None and stored.exists():
                self.deleted_content[video_id] = stored.read_bytes()
            if stored is not None and not self.script.keeps_stored_file:
                stored.unlink(missing_ok=True)
        return outcome

    def _served_openapi(self, method: str, path: str, request: httpx.Request) -> Outcome:
        if path == "/openapi.json" and method == "GET":
            if self.script.no_openapi:
                return Reply(httpx.Response(404, json={"detail": "Not Found"}), "GET /openapi.json")
            doc = openapi_document(self.config)
            for extra in self.script.extra_paths:
                doc["paths"][extra] = {"post": {}}
            return self.ok_json(doc, "GET /openapi.json")
        return super()._route(method, path, request)


def _json_body(request: httpx.Request) -> dict[str, Any]:
    if not request.headers.get("content-type", "").startswith("application/json"):
        return {}
    try:
        doc = json.loads(request.content)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _chat_parts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for message in doc.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        parts += [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    return parts


def container_mp4(frames: int, size: tuple[int, int], fourcc: str, fps: float) -> bytes:
    """An MP4 whose video track says what a muxer writes: tkhd size, mdhd timescale, one stsd
    sample entry of ``fourcc``, stts durations at ``fps`` and one stsz sample per frame."""
    delta = 512  # as FFmpeg: a timescale of fps * 512 keeps each frame a whole number of units
    timescale = round(fps * delta)
    tkhd = _box(b"tkhd", b"\0" * 76 + struct.pack(">II", size[0] << 16, size[1] << 16))
    mdhd = _box(b"mdhd", b"\0" * 12 + struct.pack(">II", timescale, delta * frames) + b"\0" * 4)
    hdlr = _box(b"hdlr", b"\0" * 8 + b"vide" + b"\0" * 12)
    entry = _box(fourcc.encode(), b"\0" * 78)
    stsd = _box(b"stsd", struct.pack(">II", 0, 1) + entry)
    stts = _box(b"stts", struct.pack(">III", 0, 1, frames) + struct.pack(">I", delta))
    stsz = _box(b"stsz", b"\0" * 8 + struct.pack(">I", frames))
    stbl = _box(b"stbl", stsd + stts + stsz)
    moov = _box(b"moov", _box(b"trak", tkhd + _box(b"mdia", mdhd + hdlr + _box(b"minf", stbl))))
    ftyp = _box(b"ftyp", b"isom" + struct.pack(">I", 0x200) + b"isomiso2avc1mp41")
    return ftyp + moov + _box(b"mdat", b"\0" * (64 * frames))


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload
