"""Gather what compile reads from run directories: each run's digest (or, as the reference, each
result parsed from the journals), with the link to its journal relative to the compiled matrix."""

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from omniqual.compile.columns import LocatedDigest
from omniqual.compile.matrix import LocatedResult
from omniqual.evidence.digest import iter_run_digests
from omniqual.evidence.digest_files import current_digest
from omniqual.evidence.journal import JOURNAL_NAME
from omniqual.evidence.run_reader import find_runs


def collect_digests(dirs: Sequence[Path], relative_to: Path) -> list[LocatedDigest]:
    """The digest of every run under ``dirs`` (rebuilt from its journal when missing or stale),
    with the link to its journal."""
    return [
        LocatedDigest(current_digest(run_dir), os.path.relpath(run_dir / JOURNAL_NAME, relative_to))
        for run_dir in find_runs(dirs)
    ]


def collect_results(dirs: Sequence[Path], relative_to: Path) -> Iterator[LocatedResult]:
    """Every result in the runs under ``dirs`` parsed from the journals, one run in memory at a
    time (what compile read before digests; kept as their reference)."""
    links: dict[Path, str] = {}
    for run_dir, digest in iter_run_digests(dirs):
        link = links.get(run_dir)
        if link is None:
            link = links[run_dir] = os.path.relpath(run_dir / JOURNAL_NAME, relative_to)
        yield LocatedResult(digest, f"{link}#{digest.result_id}")
