"""Where a report links its figures: a result's journal line and an artifact's file, as paths
relative to the directory the report is written to.

A run directory is named by its run id (``<root>/<run_id>/journal.jsonl``); a result is reached
by its id as the fragment (``journal.jsonl#<result_id>``), the same form compiled matrices use.
A run the report cannot locate gets no link (an empty string), never a guessed one.
"""

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

JOURNAL = "journal.jsonl"
ARTIFACTS = "artifacts"


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _relative(path: Path, base: Path | None) -> str:
    text = _relative_text(path, base)
    # A directory named like a URL scheme ("javascript:…") must stay a relative path.
    return f"./{text}" if _SCHEME.match(text) else text


def _relative_text(path: Path, base: Path | None) -> str:
    if base is None:
        # No output directory: a relative path stays as given; an absolute one is made relative
        # to the working directory, where the report is printed.
        if not path.is_absolute():
            return PurePosixPath(*path.parts).as_posix()
        base = Path.cwd()
    return Path(os.path.relpath(path, base)).as_posix()


@dataclass(frozen=True, slots=True)
class EvidenceLinks:
    """Run directories by run id, and the directory the report lands in."""

    run_dirs: dict[str, Path] = field(default_factory=dict)
    report_dir: Path | None = None

    @classmethod
    def from_artifact_dirs(
        cls, artifact_dirs: Iterable[Path], report_dir: Path | None
    ) -> "EvidenceLinks":
        """Run directories are the parents of their ``artifacts`` directories."""
        runs = {d.parent.name: d.parent for d in artifact_dirs if d.name == ARTIFACTS}
        return cls(runs, report_dir)

    def result(self, run_id: str, result_id: str) -> str:
        run_dir = self.run_dirs.get(run_id)
        if run_dir is None:
            return ""
        return f"{_relative(run_dir / JOURNAL, self.report_dir)}#{result_id}"

    def artifact(self, run_id: str, sha256: str) -> str:
        run_dir = self.run_dirs.get(run_id)
        if run_dir is None:
            return ""
        return _relative(run_dir / ARTIFACTS / sha256, self.report_dir)
