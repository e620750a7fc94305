"""The columnar per-run digest (``digest.npz``): what compile reads instead of the journal.

It holds, for every result in the journal and in journal order, only what compile reads (the
fields of :class:`~omniqual.evidence.digest.ResultDigest`) as numpy arrays: strings are codes into
one table per digest, reasons and limitations codes into a table of distinct tuples (failures
repeat theirs), artifacts offsets into a flat array of codes, times epoch microseconds plus the
UTC offset. It is a cache: the journal stays the source of truth. The digest records the
journal it was built from (size, line count, sha256 of all of it and of its tail, and its chain
head: the sha256 of its last line), so a digest of a journal that changed since is stale and is
rebuilt, and the record anchors the journal's end as ``anchor.json`` does; ``evidence verify``
checks the two agree.
numpy is a core dependency already; an uncompressed .npz loads at memory speed.
"""

import hashlib
import io
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import HARNESS_HOST, REVISION_FIELDS
from omniqual.domain.result import RESULT_SCHEMA_VERSION, GateResult
from omniqual.evidence.chain import chain_head
from omniqual.evidence.digest import ArtifactDigest, ProvenanceDigest, ResultDigest

DIGEST_NAME = "digest.npz"
FORMAT = 4
"""Bumped whenever what a digest holds changes: a digest of another format is stale.
2: the journal stamp records the chain head; 3: each result's target host and the host it was
measured on; 4: each result's served identity (a revision)."""
TAIL_BYTES = 1 << 16
NAIVE = -(1 << 31)
"""UTC offset recorded for a time written without a zone."""

CODE_COLUMNS = ("run_id", "gate_id", "gate_spec_sha256", "row", "outcome", *REVISION_FIELDS,
                "target_host", "measured_on")  # fmt: skip
RUN, GATE, SPEC, ROW, OUTCOME = range(5)
REVISIONS = slice(5, 5 + len(REVISION_FIELDS))
TARGET_HOST, MEASURED_ON = 5 + len(REVISION_FIELDS), 6 + len(REVISION_FIELDS)

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int32]


class JournalStamp(BaseModel):
    """The journal a digest was built from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    size: int
    lines: int
    sha256: str
    tail_sha256: str
    """sha256 of the last TAIL_BYTES. Nothing trusts it any more (an edit before the tail keeps
    it): compile and verify compare ``sha256``; it is still written so that older omniqual reads
    the digest."""
    head_sha256: str | None = None
    """The chain head: sha256 of the journal's last complete line (the last record summarised;
    see omniqual.evidence.chain). None only in digests of format 1."""


class DigestMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    format: int
    results: int
    journal: JournalStamp


def tail_sha256(path: Path, size: int) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, size - TAIL_BYTES))
        return hashlib.sha256(handle.read(min(size, TAIL_BYTES))).hexdigest()


def stamp_journal(path: Path) -> JournalStamp:
    """Hash and count the whole journal as it is now."""
    sha = hashlib.sha256()
    lines = size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
            lines += chunk.count(b"\n")
            size += len(chunk)
    return JournalStamp(size=size, lines=lines, sha256=sha.hexdigest(),
                        tail_sha256=tail_sha256(path, size),
                        head_sha256=chain_head(path, size))  # fmt: skip


def _strings(values: Iterable[str]) -> tuple[npt.NDArray[np.uint8], Ints]:
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), offsets


def _unstrings(blob: bytes, offsets: Ints) -> list[str]:
    bounds = offsets.tolist()
    return [blob[a:b].decode() for a, b in itertools.pairwise(bounds)]


@dataclass(frozen=True, slots=True, eq=False)
class RunDigest:
    """One run's results as columns (see the module doc); row i is the journal's i-th result."""

    meta: DigestMeta
    text: tuple[str, ...]
    ids: bytes
    id_offsets: Ints
    codes: Codes
    """Shape (results, len(CODE_COLUMNS)): indices into ``text``, -1 for None."""
    versions: Ints
    startup_only: npt.NDArray[np.bool_]
    finished_us: Ints
    finished_offset: npt.NDArray[np.int32]
    reasons: Codes
    limitations: Codes
    """Both: indices into ``tuples``."""
    tuples: tuple[Ints, Codes]
    """Distinct string tuples: (offsets, codes into ``text``)."""
    artifacts: tuple[Ints, Codes]
    """Per result, its artifacts' sha256: (offsets, codes into ``text``)."""

    def __len__(self) -> int:
        return self.meta.results

    def result_id(self, i: int) -> str:
        return self.ids[self.id_offsets[i] : self.id_offsets[i + 1]].decode()

    def save(self) -> bytes:
        text_blob, text_offsets = _strings(self.text)
        arrays: dict[str, npt.NDArray[np.generic]] = {
            "meta": np.frombuffer(self.meta.model_dump_json().encode(), np.uint8),
            "text": text_blob, "text_offsets": text_offsets,
            "ids": np.frombuffer(self.ids, np.uint8), "id_offsets": self.id_offsets,
            "codes": self.codes, "versions": self.versions, "startup_only": self.startup_only,
            "finished_us": self.finished_us, "finished_offset": self.finished_offset,
        }  # fmt: skip
        arrays["reasons"], arrays["limitations"] = self.reasons, self.limitations
        arrays["tuple_offsets"], arrays["tuples"] = self.tuples
        arrays["artifact_offsets"], arrays["artifacts"] = self.artifacts
        buffer = io.BytesIO()
        np.savez(buffer, allow_pickle=False, **arrays)
        return buffer.getvalue()

    @classmethod
    def load(cls, path: Path) -> "RunDigest":
        """Raises OSError or ValueError (incl. pydantic's) for an unreadable digest."""
        with np.load(path, allow_pickle=False) as npz:
            a = {name: npz[name] for name in npz.files}
        meta = DigestMeta.model_validate_json(a["meta"].tobytes())
        n = meta.results
        codes = a["codes"]
        columns = ("id_offsets", "artifact_offsets", "versions", "startup_only", "finished_us",
                   "finished_offset", "reasons", "limitations")  # fmt: skip
        lengths = {len(a[c]) - c.endswith("offsets") for c in columns}
        if codes.shape != (n, len(CODE_COLUMNS)) or lengths != {n}:
            raise ValueError("column lengths disagree with the recorded result count")
        return cls(
            meta=meta,
            text=tuple(_unstrings(a["text"].tobytes(), a["text_offsets"])),
            ids=a["ids"].tobytes(), id_offsets=a["id_offsets"], codes=codes,
            versions=a["versions"], startup_only=a["startup_only"],
            finished_us=a["finished_us"], finished_offset=a["finished_offset"],
            reasons=a["reasons"], limitations=a["limitations"],
            tuples=(a["tuple_offsets"], a["tuples"]),
            artifacts=(a["artifact_offsets"], a["artifacts"]),
        )  # fmt: skip

    def string_tuples(self) -> list[tuple[str, ...]]:
        offsets, values = (part.tolist() for part in self.tuples)
        text = self.text
        return [tuple(text[c] for c in values[a:b]) for a, b in itertools.pairwise(offsets)]

    def results(self) -> list[ResultDigest]:
        """Every result back as the journal-derived view (tests, verify)."""
        text = self.text
        codes = self.codes.tolist()
        tuples = self.string_tuples()
        reasons, limitations = self.reasons.tolist(), self.limitations.tolist()
        a_off, a_val = (part.tolist() for part in self.artifacts)

        out = []
        for i, row in enumerate(codes):
            s: list[Any] = [None if c < 0 else text[c] for c in row]
            out.append(ResultDigest.model_construct(
                schema_version=RESULT_SCHEMA_VERSION, result_id=self.result_id(i), run_id=s[RUN],
                gate_id=s[GATE], gate_version=int(self.versions[i]),
                gate_spec_sha256=s[SPEC], row=s[ROW], outcome=GateOutcome(s[OUTCOME]),
                reasons=tuples[reasons[i]], limitations=tuples[limitations[i]],
                startup_only=bool(self.startup_only[i]),
                artifacts=tuple(ArtifactDigest.model_construct(sha256=h)
                                for h in map(text.__getitem__, a_val[a_off[i] : a_off[i + 1]])),
                provenance=ProvenanceDigest.model_construct(
                    **dict(zip(REVISION_FIELDS, s[REVISIONS], strict=True)),
                    target_host=s[TARGET_HOST]),
                finished_at=to_datetime(int(self.finished_us[i]), int(self.finished_offset[i])),
                measured_on=s[MEASURED_ON],
            ))  # fmt: skip
        return out


_EPOCH = datetime(1970, 1, 1)


def to_datetime(us: int, offset: int) -> datetime:
    """The recorded time: ``us`` is the instant (wall clock for a zoneless time)."""
    wall = _EPOCH + timedelta(microseconds=us)
    if offset == NAIVE:
        return wall
    aware = wall.replace(tzinfo=UTC)
    return aware if offset == 0 else aware.astimezone(timezone(timedelta(seconds=offset)))


def _instant(at: datetime) -> tuple[int, int]:
    offset = at.utcoffset()
    if offset is None:
        return (at - _EPOCH) // timedelta(microseconds=1), NAIVE
    wall = at.replace(tzinfo=None) - offset
    return (wall - _EPOCH) // timedelta(microseconds=1), int(offset.total_seconds())


class DigestBuilder:
    """Collects results one by one (at run end, or while re-reading a journal)."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._ids: list[str] = []
        self._codes: list[tuple[int, ...]] = []
        self._versions: list[int] = []
        self._startup: list[bool] = []
        self._times: list[tuple[int, int]] = []
        self._tuples: dict[tuple[int, ...], int] = {}
        self._reasons: list[int] = []
        self._limitations: list[int] = []
        self._artifacts: tuple[list[int], list[int]] = ([0], [])

    def _code(self, value: str | None) -> int:
        if value is None:
            return -1
        return self._index.setdefault(value, len(self._index))

    def _tuple(self, values: Iterable[str]) -> int:
        key = tuple(self._code(v) for v in values)
        return self._tuples.setdefault(key, len(self._tuples))

    def add(self, r: GateResult | ResultDigest, host: str | None = None) -> None:
        """``host``: where a full result's session ran (an encoded ``MeasuredOn``), kept as its
        ``measured_on`` when its target ran there; a digest carries its own."""
        p = r.provenance
        if isinstance(r, ResultDigest):
            measured = r.measured_on
        else:
            measured = host if p.target_host == HARNESS_HOST else None
        strings = (r.run_id, r.gate_id, r.gate_spec_sha256, r.row, r.outcome.value,
                   *(getattr(p, name) for name in REVISION_FIELDS), p.target_host,
                   measured)  # fmt: skip
        self._codes.append(tuple(self._code(s) for s in strings))
        self._ids.append(r.result_id)
        self._versions.append(r.gate_version)
        self._startup.append(r.startup_only)
        self._times.append(_instant(r.finished_at))
        self._reasons.append(self._tuple(r.reasons))
        self._limitations.append(self._tuple(r.limitations))
        offsets, codes = self._artifacts
        codes.extend(self._code(a.sha256) for a in r.artifacts)
        offsets.append(len(codes))

    def build(self, journal: JournalStamp) -> RunDigest:
        n = len(self._ids)
        ids, id_offsets = _strings(self._ids)
        times = np.array(self._times, np.int64).reshape(n, 2)
        offsets = np.zeros(len(self._tuples) + 1, np.int64)
        np.cumsum([len(t) for t in self._tuples], out=offsets[1:])
        values = [c for t in self._tuples for c in t]
        return RunDigest(
            meta=DigestMeta(format=FORMAT, results=n, journal=journal),
            text=tuple(self._index),
            ids=ids.tobytes(), id_offsets=id_offsets,
            codes=np.array(self._codes, np.int32).reshape(n, len(CODE_COLUMNS)),
            versions=np.array(self._versions, np.int64),
            startup_only=np.array(self._startup, np.bool_),
            finished_us=times[:, 0].copy(), finished_offset=times[:, 1].astype(np.int32),
            reasons=np.array(self._reasons, np.int32),
            limitations=np.array(self._limitations, np.int32),
            tuples=(np.array(offsets, np.int64), np.array(values, np.int32)),
            artifacts=(np.array(self._artifacts[0], np.int64),
                       np.array(self._artifacts[1], np.int32)),
        )  # fmt: skip
