"""What an MP4 says about its first video track, read from its boxes (no decoder needed):
the sample count of ``stsz`` (one sample per frame), the ``tkhd`` display size, the codec of the
first ``stsd`` sample entry (its fourcc) and the frame rate (``mdhd`` timescale over the ``stts``
sample duration most samples have, what ffprobe reports as ``r_frame_rate``). A box that is not
there is reported as missing, so a caller can fail on it instead of assuming."""

import struct
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mp4Video:
    frames: int | None
    """``stsz`` sample count; None when the video track has no sample-size box."""
    size: tuple[int, int] | None
    """``tkhd`` width x height (16.16 fixed point, integer part); None when absent."""
    fourcc: str | None = None
    """The first ``stsd`` sample entry's type (``avc1`` for H.264); None when absent."""
    timescale: int | None = None
    """``mdhd`` time units per second; None when absent or zero."""
    sample_delta: int | None = None
    """The ``stts`` duration most samples have, in timescale units; None when absent or zero."""

    @property
    def fps(self) -> float | None:
        if self.timescale is None or self.sample_delta is None:
            return None
        return self.timescale / self.sample_delta

    @property
    def codec(self) -> str | None:
        """The codec name of the fourcc (``h264``), else the fourcc itself."""
        return CODEC_OF_FOURCC.get(self.fourcc, self.fourcc) if self.fourcc else None


CODEC_OF_FOURCC: dict[str, str] = {
    "avc1": "h264",
    "avc3": "h264",
    "hvc1": "hevc",
    "hev1": "hevc",
    "av01": "av1",
    "vp09": "vp9",
    "mp4v": "mpeg4",
}
"""ISO/IEC 14496-15 and the codecs' MP4 bindings: sample entry types per codec."""


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


def _fourcc(data: bytes, stbl: tuple[int, int] | None) -> str | None:
    stsd = _child(data, *stbl, b"stsd") if stbl else None
    if stsd is None or stsd[0] + 16 > stsd[1]:  # version/flags, count, first entry's header
        return None
    return data[stsd[0] + 12 : stsd[0] + 16].decode("latin-1")


def _timescale(data: bytes, mdhd: tuple[int, int] | None) -> int | None:
    if mdhd is None or mdhd[0] + 4 > mdhd[1]:
        return None
    at = mdhd[0] + (20 if data[mdhd[0]] == 1 else 12)  # after the version's two timestamps
    if at + 4 > mdhd[1]:
        return None
    return int(struct.unpack(">I", data[at : at + 4])[0]) or None


def _sample_delta(data: bytes, stbl: tuple[int, int] | None) -> int | None:
    stts = _child(data, *stbl, b"stts") if stbl else None
    if stts is None or stts[0] + 8 > stts[1]:
        return None
    count = struct.unpack(">I", data[stts[0] + 4 : stts[0] + 8])[0]
    entries = [
        struct.unpack(">II", data[at : at + 8])
        for at in range(stts[0] + 8, min(stts[1], stts[0] + 8 + 8 * count) - 7, 8)
    ]
    if not entries:
        return None
    # The duration most samples have: muxers may give the last sample another one.
    return int(max(entries, key=lambda entry: entry[0])[1]) or None


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
            _stsz_count(data, stbl),
            _tkhd_size(data, _child(data, start, end, b"tkhd")),
            _fourcc(data, stbl),
            _timescale(data, _child(data, *mdia, b"mdhd")),
            _sample_delta(data, stbl),
        )
    return None
