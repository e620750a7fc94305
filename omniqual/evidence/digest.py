"""Fast reading of results from a journal: only the fields the rule table and links need.

Parsing each line into a full GateResult costs more than twice as much as this view. It is what
the columnar run digest (``run_digest``) holds per result and is rebuilt from when a run has none
or a stale one; compile itself reads the digest. Records of an older schema take the full path
(with its migrations) and are then reduced to the same view, so both paths agree. A result's
``measured_on`` comes from the run-started record of its session (a resumed run may have moved
to another host).
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from omniqual.domain.hardware import measured_on
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import HARNESS_HOST
from omniqual.domain.result import RESULT_SCHEMA_VERSION
from omniqual.domain.run import (
    JOURNAL_SCHEMA_VERSION,
    EnvironmentFingerprint,
    ResultRecorded,
    RunStarted,
)
from omniqual.evidence.journal import JOURNAL_NAME, JournalReader, parse_record
from omniqual.evidence.run_reader import find_runs

_VIEW = ConfigDict(extra="ignore", frozen=True)


class ArtifactDigest(BaseModel):
    model_config = _VIEW
    sha256: str


class ProvenanceDigest(BaseModel):
    model_config = _VIEW
    model_revision: str | None = None
    checkpoint_sha256: str | None = None
    vllm_omni_version: str | None = None
    vllm_omni_commit: str | None = None
    vllm_version: str | None = None
    serve_config_sha256: str | None = None
    served_identity_sha256: str | None = None
    target_host: str | None = None
    """Whether the target ran on the harness host (``harness-host``) or is not visible."""


class ResultDigest(BaseModel):
    model_config = _VIEW
    schema_version: int
    result_id: str
    run_id: str
    gate_id: str
    gate_version: int
    gate_spec_sha256: str | None = None
    row: str
    outcome: GateOutcome
    reasons: tuple[str, ...] = ()
    limitations: tuple[str, ...] = ()
    startup_only: bool = False
    artifacts: tuple[ArtifactDigest, ...] = ()
    provenance: ProvenanceDigest = Field(default_factory=ProvenanceDigest)
    finished_at: datetime
    measured_on: str | None = None
    """The measuring host's facts (:meth:`MeasuredOn.encode`) when the target ran on the host
    its session's fingerprint describes; None where that is not known (a URL target)."""


class _ResultLine(BaseModel):
    model_config = _VIEW
    schema_version: int
    kind: Literal["result"]
    result: ResultDigest


class _OtherLine(BaseModel):
    model_config = _VIEW
    schema_version: int
    kind: Literal["artifact", "run-finished"]


class _StartLine(BaseModel):
    model_config = _VIEW
    schema_version: int
    kind: Literal["run-started"]


_LINE: TypeAdapter[_ResultLine | _OtherLine | _StartLine] = TypeAdapter(
    Annotated[_ResultLine | _OtherLine | _StartLine, Field(discriminator="kind")]
)


@dataclass(frozen=True, slots=True)
class _Session:
    fingerprint: EnvironmentFingerprint


def _parse_digest(raw: bytes) -> ResultDigest | _Session | None:
    """A result's view, or a session's start (its fingerprint), else None."""
    try:
        line = _LINE.validate_json(raw)
    except ValidationError:
        line = None
    if line is not None and line.schema_version == JOURNAL_SCHEMA_VERSION:
        if isinstance(line, _OtherLine):
            return None
        if isinstance(line, _ResultLine) and line.result.schema_version == RESULT_SCHEMA_VERSION:
            return line.result
    # Older, newer or damaged: the full parser migrates, or raises with file:line.
    record = parse_record(raw)
    if isinstance(record, ResultRecorded):
        return ResultDigest.model_validate(record.result.model_dump())
    if isinstance(record, RunStarted):
        return _Session(record.environment)
    return None


DigestReader = JournalReader[ResultDigest | _Session | None]


def digest_reader(run_dir: Path) -> DigestReader:
    """A reader of the run's journal into result views (for :func:`read_digests`); after
    iterating, it tells whether the journal has a torn tail."""
    return JournalReader(run_dir / JOURNAL_NAME, _parse_digest)


def iter_digests(run_dir: Path) -> Iterator[ResultDigest]:
    """The run's results in journal order, each with the host its session's fingerprint
    describes where its target ran there (``measured_on``)."""
    return read_digests(digest_reader(run_dir))


def read_digests(reader: DigestReader) -> Iterator[ResultDigest]:
    """:func:`iter_digests` through a reader the caller keeps."""
    host: str | None = None
    for parsed in reader:
        if isinstance(parsed, _Session):
            host = measured_on(parsed.fingerprint).encode()
        elif parsed is not None:
            yield with_host(parsed, host)


def with_host(digest: ResultDigest, host: str | None) -> ResultDigest:
    """``digest`` measured on ``host`` (an encoded :class:`MeasuredOn`) if its target ran on
    the harness host; else as it is (unknown)."""
    if host is None or digest.provenance.target_host != HARNESS_HOST:
        return digest
    return digest.model_copy(update={"measured_on": host})


def iter_run_digests(paths: Sequence[Path]) -> Iterator[tuple[Path, ResultDigest]]:
    for run_dir in find_runs(paths):
        for digest in iter_digests(run_dir):
            yield run_dir, digest
