"""What an MP4 says about its first video track, read from its boxes (no decoder needed):
the sample count of ``stsz`` (one sample per frame) and the ``tkhd`` display size. A box that is
not there is reported as missing, so a caller can fail on it instead of assuming."""

import struct
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mp4Video:
    frames: int | None
    """``stsz`` sample count; None when the video track has no sample-size box."""
    size: tuple[int, int] | None
    """``tkhd`` width x height (16.16 fixed point, integer part); None when absent."""


def _boxes(data: bytes, start: int, end: int) -> Iterator[tuple[bytes, int, int]]:
    """(type, payload start, box end) of the boxes in data[start:end]."""
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        header = 8
        if size == 1 and pos + 16 <= end:
            size, header = struct.unpack(">Q", data[pos + 8 : pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            return
        yield kind, pos + header, pos + size
        pos += size


def _child(data: bytes, start: int, end: int, kind: bytes) -> tuple[int, int] | None:
    return next(((s, e) for k, s, e in _boxes(data, start, end) if k == kind), None)


def _stsz_count(data: bytes, stbl: tuple[int, int] | None) -> int | None:
    stsz = _child(data, *stbl, b"stsz") if stbl else None
    if stsz is None or stsz[0] + 12 > stsz[1]:
        return None
    return int(struct.unpack(">I", data[stsz[0] + 8 : stsz[0] + 12])[0])


def _tkhd_size(data: bytes, tkhd: tuple[int, int] | None) -> tuple[int, int] | None:
    if tkhd is None or tkhd[1] - tkhd[0] < 84:  # version 0 tkhd payload is 84 bytes
        return None
    width, height = struct.unpack(">II", data[tkhd[1] - 8 : tkhd[1]])
    return width >> 16, height >> 16


def mp4_video(data: bytes) -> Mp4Video | None:
    """The first video track (``hdlr`` type ``vide``) under ``moov``; None without one."""
    moov = _child(data, 0, len(data), b"moov")
    if moov is None:
        return None
    for kind, start, end in _boxes(data, *moov):
        mdia = _child(data, start, end, b"mdia") if kind == b"trak" else None
        hdlr = _child(data, *mdia, b"hdlr") if mdia else None
        if mdia is None or hdlr is None or data[hdlr[0] + 8 : hdlr[0] + 12] != b"vide":
            continue
        minf = _child(data, *mdia, b"minf")
        stbl = _child(data, *minf, b"stbl") if minf else None
        return Mp4Video(
            _stsz_count(data, stbl), _tkhd_size(data, _child(data, start, end, b"tkhd"))
        )
    return None
