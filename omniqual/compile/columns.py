"""Compile from run digests, part one: the results on planned rows and the latest of each bucket.

The semantics are those of :func:`omniqual.compile.matrix.compile_matrix` over the same results in
the same order: per planned row, results fall in buckets the rule table cannot tell apart except
by time (gate, version, spec hash, revisions with unknown read as None, conclusive and not
startup-only); the latest of a bucket (on a tie, the later one read) stands for it with the
bucket's count, and a row's buckets keep the order in which they were first seen. All of it is
done on columns: a million results never become a million Python objects.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from omniqual.compile.hosts import HostCheck
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import REVISION_FIELDS
from omniqual.domain.rules import UNKNOWN_VALUES
from omniqual.evidence.run_digest import (
    GATE,
    MEASURED_ON,
    OUTCOME,
    REVISIONS,
    ROW,
    RUN,
    SPEC,
    RunDigest,
)

Ints = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
_LIMIT = 1 << 62


@dataclass(frozen=True, slots=True)
class LocatedDigest:
    """A run's digest and the link (relative to the output) to its journal."""

    digest: RunDigest
    link: str


KEPT_CODES = (RUN, GATE, SPEC, OUTCOME)
"""The string columns compile keeps (rows become row indices, revisions are normalised)."""
K_RUN, K_GATE, K_SPEC, K_OUTCOME = range(4)


@dataclass(frozen=True, slots=True)
class Kept:
    """The results on planned rows, in reading order; string codes index ``texts``, tuple
    codes ``tuples`` (both shared by all runs)."""

    texts: list[str]
    tuples: list[tuple[str, ...]]
    source: I32
    """Which digest, and the index within it."""
    local: I32
    row: I32
    codes: I32
    """The KEPT_CODES columns, in that order."""
    revisions: I32
    """The revision columns with every unknown spelling read as None (-1)."""
    versions: Ints
    startup: npt.NDArray[np.bool_]
    finished: Ints
    offset: I32
    limitations: I32
    reasons3: I32
    """The tuple code of a result's first three reasons: all the rule table reads of them."""
    has_artifacts: npt.NDArray[np.bool_]
    excluded: dict[int, dict[str, int]]
    """Per row index, results not kept because their host cannot be of the row's hardware:
    why, and how many."""


def _of_hardware(
    d: RunDigest,
    keep: I32,
    row: I32,
    hardware: list[str | None],
    hosts: HostCheck,
    excluded: dict[int, dict[str, int]],
) -> I32:
    """``keep`` without the results whose measuring host contradicts their row's hardware
    (counted in ``excluded``); one check per distinct (row, host) pair."""
    measured = d.codes[keep, MEASURED_ON]
    known = measured >= 0
    if not known.any():
        return keep
    pairs, inverse = np.unique(np.stack([row[known], measured[known]], axis=1), axis=0,
                               return_inverse=True)  # fmt: skip
    whys = [hosts.why(hardware[r], d.text[c]) for r, c in pairs.tolist()]
    if all(why is None for why in whys):
        return keep
    dropped = np.array([why is not None for why in whys])[inverse.reshape(-1)]
    for p, n in zip(*np.unique(inverse.reshape(-1)[dropped], return_counts=True), strict=True):
        why = whys[int(p)]
        assert why is not None
        notes = excluded.setdefault(int(pairs[p][0]), {})
        notes[why] = notes.get(why, 0) + int(n)
    out = np.ones(len(keep), np.bool_)
    out[np.flatnonzero(known)[dropped]] = False
    return keep[out]


def gather(
    keys: list[str], digests: list[LocatedDigest], hardware: list[str | None] | None = None
) -> Kept:
    """The results on the planned rows ``keys`` (row i has key keys[i], and hardware value
    ``hardware[i]``: results measured on a host of another class are not kept)."""
    row_index = {key: i for i, key in enumerate(keys)}
    hosts = HostCheck()
    excluded: dict[int, dict[str, int]] = {}
    texts: dict[str, int] = {}
    tuples: dict[tuple[str, ...], int] = {}
    selected: list[tuple[int, I32, I32]] = []
    for n, located in enumerate(digests):
        d = located.digest
        if len(d):
            # A trailing -1 maps the None code (-1) to itself.
            rows = np.fromiter((row_index.get(s, -1) for s in d.text), np.int32, len(d.text))
            row = np.append(rows, np.int32(-1))[d.codes[:, ROW]]
            keep = np.flatnonzero(row >= 0).astype(np.int32)
            if keep.size and hardware is not None:
                keep = _of_hardware(d, keep, row[keep], hardware, hosts, excluded)
            if keep.size:
                selected.append((n, keep, row[keep]))
    total = sum(len(keep) for _, keep, _ in selected)
    shapes: dict[str, tuple[tuple[int, ...], type]] = {
        "source": ((total,), np.int32), "local": ((total,), np.int32),
        "row": ((total,), np.int32), "codes": ((total, len(KEPT_CODES)), np.int32),
        "revisions": ((total, len(REVISION_FIELDS)), np.int32),
        "versions": ((total,), np.int64), "startup": ((total,), np.bool_),
        "finished": ((total,), np.int64), "offset": ((total,), np.int32),
        "limitations": ((total,), np.int32), "reasons3": ((total,), np.int32),
        "has_artifacts": ((total,), np.bool_),
    }  # fmt: skip
    out: dict[str, npt.NDArray[Any]] = {k: np.empty(*shape) for k, shape in shapes.items()}
    at = 0
    for n, keep, row in selected:
        d = digests[n].digest
        span = slice(at, at + len(keep))
        at += len(keep)
        remap = np.fromiter((texts.setdefault(s, len(texts)) for s in d.text), np.int32,
                            len(d.text))  # fmt: skip
        remap = np.append(remap, np.int32(-1))
        own = d.string_tuples()
        full = np.array([tuples.setdefault(t, len(tuples)) for t in own], np.int32)
        first3 = np.array([tuples.setdefault(t[:3], len(tuples)) for t in own], np.int32)
        art = d.artifacts[0]
        out["source"][span], out["local"][span], out["row"][span] = n, keep, row
        out["codes"][span] = remap[d.codes[keep][:, KEPT_CODES]]
        out["revisions"][span] = remap[d.codes[keep, REVISIONS]]
        out["versions"][span], out["startup"][span] = d.versions[keep], d.startup_only[keep]
        out["finished"][span], out["offset"][span] = d.finished_us[keep], d.finished_offset[keep]
        out["limitations"][span] = full[d.limitations[keep]]
        out["reasons3"][span] = first3[d.reasons[keep]]
        out["has_artifacts"][span] = art[keep + 1] > art[keep]
    text_list = list(texts)
    unknown = np.array([s in UNKNOWN_VALUES for s in text_list] + [True])
    revisions = out["revisions"]
    revisions[unknown[revisions]] = -1
    return Kept(texts=text_list, tuples=list(tuples), excluded=excluded, **out)


def dense(codes: Ints | I32) -> tuple[Ints, int]:
    """``codes`` renumbered 0..k-1 in their order, and k (a table lookup when their range is
    small, as string codes are: no sort)."""
    if not codes.size:
        return codes.astype(np.int64), 1
    low, high = int(codes.min()), int(codes.max())
    if high - low <= max(4 * codes.size, 1 << 16):
        present = np.zeros(high - low + 1, np.bool_)
        present[codes - low] = True
        return (np.cumsum(present) - 1)[codes.astype(np.int64) - low], int(present.sum())
    values, inverse = np.unique(codes, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(values)


def combine(columns: list[tuple[Ints, int]], size: int) -> Ints:
    """One int64 per position telling apart every combination of the dense ``columns`` (each
    with its number of values), ordered by the first column, then the next..."""
    key, span = np.zeros(size, np.int64), 1
    for column, k in columns:
        if span * k >= _LIMIT:  # too many combinations for int64: renumber those seen so far
            key, span = dense(key)
        key, span = key * k + column, span * k
    return key


def conclusive_codes(kept: Kept) -> npt.NDArray[np.bool_]:
    """Per result: conclusive and not startup-only (an index -1 reads the trailing False)."""
    conclusive = [s in (GateOutcome.PASSED.value, GateOutcome.FAILED.value) for s in kept.texts]
    flags: npt.NDArray[np.bool_] = np.array([*conclusive, False])[kept.codes[:, K_OUTCOME]]
    return flags & ~kept.startup


@dataclass(frozen=True, slots=True)
class Winners:
    """The latest result of each bucket: indices into Kept, ordered by row, then by when the
    bucket was first seen; ``count`` results each stands for."""

    index: Ints
    count: Ints
    row: I32


def winners(kept: Kept, n_rows: int) -> Winners:
    n = len(kept.row)
    if not n:
        none = np.zeros(0, np.int64)
        return Winners(index=none, count=none, row=kept.row)
    columns = [(kept.row.astype(np.int64), max(n_rows, 1)), dense(kept.codes[:, K_GATE]),
               dense(kept.versions), dense(kept.codes[:, K_SPEC])]  # fmt: skip
    columns += [dense(kept.revisions[:, k]) for k in range(kept.revisions.shape[1])]
    columns.append((conclusive_codes(kept).astype(np.int64), 2))
    key = combine(columns, n)
    order = np.lexsort((kept.finished, key))  # stable: on a tie the later one read wins
    ordered = key[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], n]
    index = order[ends - 1]
    first_seen = np.minimum.reduceat(order, starts)
    arrange = np.lexsort((first_seen, kept.row[index]))
    index = index[arrange]
    return Winners(index=index, count=(ends - starts)[arrange], row=kept.row[index])
