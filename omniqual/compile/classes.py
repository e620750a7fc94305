"""Compile from run digests, part two: one rule-table derivation per class of alike rows.

Rows with the same requirements whose held results agree, in order, in everything the rule table
reads (gate, version, spec hash, revisions, outcome, startup-only, having artifacts, limitations,
first three reasons, count, and the order of their finish times within the row) derive the same
state, reasons, staleness and gate outcomes, resting on the results at the same positions. The
rule table reads result ids and times only to pass ids on and to order times, so deriving once
per class and giving each row its own result ids is exact; a hundred thousand rows typically
fall in a few dozen classes.
"""

import contextlib
import functools
import gc
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime

import numpy as np

from omniqual.compile.columns import (
    K_GATE,
    K_OUTCOME,
    K_RUN,
    K_SPEC,
    Ints,
    Kept,
    LocatedDigest,
    Winners,
    combine,
    dense,
    gather,
    winners,
)
from omniqual.compile.construct import constructor
from omniqual.compile.hosts import host_notes
from omniqual.compile.matrix import (
    LEGACY_STARTUP,
    Held,
    build_row,
    derive_template,
    finish_matrix,
    requirements_of,
    target_revisions,
)
from omniqual.compile.parents import parent_evidence
from omniqual.domain.matrix import CompiledMatrix, CompiledRow, EvidenceRef, LoadedMatrix
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.rules import CurrentGate, EvidenceItem, ParentEvidence, RowRequirements
from omniqual.evidence.run_digest import to_datetime

_REF = constructor(
    EvidenceRef,
    {"run_id": "r", "result_id": "i", "gate_id": "g", "outcome": "passed", "artifacts": ("a",),
     "link": "l"},
)  # fmt: skip
MAX_HELD = 64
"""Rows holding more buckets than this are each a class of their own."""


def compile_digests(
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    digests: list[LocatedDigest],
    *,
    evidence_dirs: Sequence[str] = (),
    now: datetime | None = None,
) -> CompiledMatrix:
    """The compiled matrix, the same as compile_matrix over the digests' results in order.
    ``digests`` is consumed (emptied)."""
    # Hundreds of thousands of small acyclic objects (rows, evidence references): the cyclic
    # collector would rescan all of them over and over while they are made.
    moved = digests[:]
    digests.clear()  # so that the digests are freed before the rows are made
    with _collector_paused():
        return _compile(matrix, gates, moved, evidence_dirs, now)


def _compile(
    matrix: LoadedMatrix,
    gates: Mapping[str, CurrentGate],
    digests: list[LocatedDigest],
    evidence_dirs: Sequence[str],
    now: datetime | None,
) -> CompiledMatrix:
    keys = [str(row.key) for row in matrix.rows]
    kept = gather(keys, digests, [row.key.get("hardware") for row in matrix.rows])
    won = winners(kept, len(keys))
    counts = np.bincount(won.row, minlength=len(keys))
    starts = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    maker = _Maker(kept, won, digests)
    target = target_revisions(matrix)
    first = starts.tolist()
    parents = parent_evidence(matrix, functools.partial(_row_items, maker, first), gates, target)
    of_row, requirements = _requirements(matrix, parents)
    classes, representatives = _classes(kept, won, of_row, counts, starts)
    templates = [
        derive_template(requirements[of_row[r]], [maker.held(w) for w in range(first[r],
                        first[r + 1])], gates, target)
        for r in representatives.tolist()
    ]  # fmt: skip
    row_classes = classes.tolist()
    # The results each row rests on, made in one pass; the columns are not needed after.
    needed = [first[r] + p for r, c in enumerate(row_classes) for p in templates[c].supporting]
    refs = maker.refs(needed)
    runs = sorted({kept.texts[c] for c in np.unique(kept.codes[:, K_RUN]).tolist()})
    excluded = kept.excluded
    del maker, kept, won, digests
    rows: list[CompiledRow] = []
    at = 0
    for row, key, c, req in zip(matrix.rows, keys, row_classes, of_row.tolist(), strict=True):
        template = templates[c]
        end = at + len(template.supporting)
        notes = host_notes(excluded.get(len(rows)))
        rows.append(build_row(row, key, requirements[req], template, tuple(refs[at:end]), notes))
        at = end
    return finish_matrix(matrix, rows, runs, evidence_dirs=evidence_dirs, now=now)


def _row_items(maker: "_Maker", first: list[int], r: int) -> list[EvidenceItem]:
    """What the rule table reads of row ``r``'s held results (a parent's, for its candidates)."""
    return [maker.held(w).item for w in range(first[r], first[r + 1])]


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _requirements(
    matrix: LoadedMatrix, parents: list[ParentEvidence | None]
) -> tuple[Ints, list[RowRequirements]]:
    """Per row, the index of its requirements (with its parent's evidence) among the distinct
    ones."""
    index: dict[RowRequirements, int] = {}
    # Rows of one product share their spec object, and with it their parent row.
    by_spec: dict[tuple[int, ParentEvidence | None], int] = {}
    of_row = np.zeros(len(matrix.rows), np.int64)
    for r, (row, parent) in enumerate(zip(matrix.rows, parents, strict=True)):
        found = by_spec.get((id(row.spec), parent))
        if found is None:
            req = requirements_of(row, parent)
            found = by_spec[(id(row.spec), parent)] = index.setdefault(req, len(index))
        of_row[r] = found
    return of_row, list(index)


def _classes(
    kept: Kept, won: Winners, of_row: Ints, counts: Ints, starts: Ints
) -> tuple[Ints, Ints]:
    """(class of each row, a representative row of each class)."""
    n_rows, w = len(of_row), won.index
    code = np.zeros(0, np.int64)
    if len(w):
        # Dense rank of each finish time within its row: only their order matters.
        finished = kept.finished[w]
        order = np.lexsort((finished, won.row))
        rows, times = won.row[order], finished[order]
        row_start = np.r_[True, rows[1:] != rows[:-1]]
        steps = np.cumsum(row_start | np.r_[True, times[1:] != times[:-1]])
        begins = np.maximum.accumulate(np.where(row_start, np.arange(len(order)), 0))
        rank = np.empty(len(order), np.int64)
        rank[order] = steps - steps[begins]
        columns = [dense(kept.codes[w, K_GATE]), dense(kept.versions[w]),
                   dense(kept.codes[w, K_SPEC]), dense(kept.codes[w, K_OUTCOME]),
                   (kept.startup[w].astype(np.int64), 2),
                   (kept.has_artifacts[w].astype(np.int64), 2), dense(kept.limitations[w]),
                   dense(kept.reasons3[w]), dense(won.count), dense(rank)]  # fmt: skip
        columns += [dense(kept.revisions[w, k]) for k in range(kept.revisions.shape[1])]
        code = dense(combine(columns, len(w)))[0]
    width = int(min(counts.max(initial=0), MAX_HELD))
    table = np.full((n_rows, width + 1), -1, np.int64)
    table[:, 0] = of_row
    position = np.arange(len(w)) - starts[won.row]
    fits = counts[won.row] <= width
    table[won.row[fits], 1 + position[fits]] = code[fits]
    crowded = np.flatnonzero(counts > width)
    table[crowded, 0] = -2 - crowded
    _, representatives, classes = np.unique(table, axis=0, return_index=True,
                                            return_inverse=True)  # fmt: skip
    return classes.reshape(-1), representatives


class _Maker:
    """Python objects for single winners (by position in Winners order)."""

    def __init__(self, kept: Kept, won: Winners, digests: Sequence[LocatedDigest]) -> None:
        self._kept, self._won, self._digests = kept, won, digests

    def _bounds(self, ws: Ints) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
        """(source, id start, id end, artifacts start, artifacts end) of winners ``ws``."""
        k = self._won.index[ws]
        source, local = self._kept.source[k], self._kept.local[k].astype(np.int64)
        bounds = np.zeros((len(ws), 4), np.int64)
        for n in np.unique(source).tolist():
            mine = source == n
            d = self._digests[n].digest
            at = local[mine]
            bounds[mine] = np.stack(
                [
                    d.id_offsets[at],
                    d.id_offsets[at + 1],
                    d.artifacts[0][at],
                    d.artifacts[0][at + 1],
                ],
                axis=1,
            )
        id_lo, id_hi, art_lo, art_hi = bounds.T.tolist()
        return source.tolist(), id_lo, id_hi, art_lo, art_hi

    def refs(self, needed: list[int]) -> list[EvidenceRef]:
        ws = np.array(needed, np.int64)
        kept, texts = self._kept, self._kept.texts
        codes = kept.codes[self._won.index[ws]]
        startup = kept.startup[self._won.index[ws]].tolist()
        runs = [texts[c] for c in codes[:, K_RUN].tolist()]
        gates = [texts[c] for c in codes[:, K_GATE].tolist()]
        skipped = GateOutcome.SKIPPED.value
        outcomes = [
            skipped if s else texts[c]
            for c, s in zip(codes[:, K_OUTCOME].tolist(), startup, strict=True)
        ]
        sources, id_lo, id_hi, art_lo, art_hi = self._bounds(ws)
        # Every needed artifact hash at once: numpy gathers, Python only slices.
        source_arr, lo, hi = np.array(sources), np.array(art_lo), np.array(art_hi)
        flat: list[str] = []
        starts = np.zeros(len(sources) + 1, np.int64)
        np.cumsum(hi - lo, out=starts[1:])
        order = np.argsort(source_arr, kind="stable")
        strings = np.empty(int(starts[-1]), object)
        for n in np.unique(source_arr).tolist():
            mine = order[source_arr[order] == n]
            counts = (hi - lo)[mine]
            at = np.repeat(lo[mine] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            where = np.repeat(starts[mine] - np.cumsum(counts) + counts, counts) + np.arange(
                counts.sum()
            )
            d = self._digests[n].digest
            strings[where] = np.array(d.text, object)[d.artifacts[1][at]]
        flat = strings.tolist()
        first = starts.tolist()
        out = []
        for i, n in enumerate(sources):
            d = self._digests[n].digest
            result_id = d.ids[id_lo[i] : id_hi[i]].decode()
            # Every value is a str (or a tuple of them) read from a digest of validated
            # results: no validation (see construct).
            out.append(_REF(
                run_id=runs[i], result_id=result_id, gate_id=gates[i],
                outcome=outcomes[i], artifacts=tuple(flat[first[i] : first[i + 1]]),
                link=f"{self._digests[n].link}#{result_id}",
            ))  # fmt: skip
        return out

    def held(self, w: int) -> Held:
        kept, k = self._kept, int(self._won.index[w])
        texts = kept.texts
        (n,), (id_lo,), (id_hi,), (art_lo,), (art_hi,) = self._bounds(np.array([w]))
        d = self._digests[n].digest
        result_id = d.ids[id_lo:id_hi].decode()
        artifacts = tuple(d.text[c] for c in d.artifacts[1][art_lo:art_hi].tolist())
        c = kept.codes[k].tolist()
        if kept.startup[k]:
            outcome, reasons = GateOutcome.SKIPPED, LEGACY_STARTUP
        else:
            outcome, reasons = GateOutcome(texts[c[K_OUTCOME]]), kept.tuples[kept.reasons3[k]]
        item = EvidenceItem(
            result_id=result_id, run_id=texts[c[K_RUN]], gate_id=texts[c[K_GATE]],
            gate_version=int(kept.versions[k]), outcome=outcome,
            finished_at=to_datetime(int(kept.finished[k]), int(kept.offset[k])),
            has_artifacts=bool(artifacts),
            revisions=tuple(None if x < 0 else texts[x] for x in kept.revisions[k].tolist()),
            spec_sha256=None if c[K_SPEC] < 0 else texts[c[K_SPEC]],
            limitations=kept.tuples[kept.limitations[k]], reasons=reasons,
            count=int(self._won.count[w]),
        )  # fmt: skip
        return Held(item, artifacts, f"{self._digests[n].link}#{result_id}")
