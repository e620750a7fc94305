"""Schema versions of persisted records and the hooks that upgrade older ones on read.

Format history of the journal record envelope (``JOURNAL_SCHEMA_VERSION``):

1 - first version: run-started, result, artifact, run-finished records. Later additions are
    optional fields with defaults: ``prev_sha256``, each record's link in the journal's hash
    chain (absent = written before chaining: the record reads as ever, and verify says the
    chain cannot vouch for it; see omniqual.evidence.chain); the run-started record's
    ``anchored`` (absent = false: the session predates ``anchor.json``, so verify notes that
    nothing vouches for the journal's end instead of calling a missing anchor damage; see
    omniqual.evidence.anchor). ``run.json`` (``RunSummary``, same version) gained ``journal``,
    the journal's anchor at the run's end (absent in summaries written before anchoring).
    ``anchor.json`` has its own ``schema_version`` (``ANCHOR_SCHEMA_VERSION``, 1).

Format history of ``GateResult`` (``RESULT_SCHEMA_VERSION``):

1 - first version. Later additions are optional fields with defaults, so records written
    before them read unchanged: ``limitations`` (absent = none reproduced) and the
    provenance's ``serve_config_sha256`` (absent = unknown). ``gate_spec_sha256`` now hashes the
    gate file with every contract or mapping it names (a gate naming none keeps its old hash);
    a record without it is judged by ``gate_version`` alone, and says so. ``startup_only`` is
    no longer written; a record carrying ``true`` compiles as not evidence. The provenance's
    ``served`` and ``served_identity_sha256`` are optional too (what a URL deployment showed of
    itself; absent = not recorded: such a URL result names no deployment and combines with no
    other result).

To change a format: bump the version in :mod:`omniqual.domain`, add the old version's
``migrate(dict) -> dict`` to the registry below under the version it upgrades *from*, and add a
test reading a recorded line of the old version. Readers then accept every older version that has
an unbroken chain of migrations up to the current one.
"""

from collections.abc import Callable, Mapping
from typing import Any

from omniqual.domain.result import RESULT_SCHEMA_VERSION
from omniqual.domain.run import JOURNAL_SCHEMA_VERSION

RawRecord = dict[str, Any]
Migration = Callable[[RawRecord], RawRecord]

JOURNAL_MIGRATIONS: dict[int, Migration] = {}
"""from_version -> function upgrading a journal record dict to from_version + 1."""

RESULT_MIGRATIONS: dict[int, Migration] = {}
"""from_version -> function upgrading a GateResult dict to from_version + 1."""


class TooNewError(ValueError):
    """The record was written by a newer omniqual than this one."""


class NoMigrationError(ValueError):
    """The record is older than current and no migration chain reaches the current version."""


def upgrade(
    data: RawRecord, *, current: int, registry: Mapping[int, Migration], what: str
) -> RawRecord:
    """Bring ``data`` to ``current`` by applying migrations in order (no-op when current).

    A missing version means the model's default, the current one.
    """
    version = data.get("schema_version", current)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"{what} has no integer schema_version")
    if version > current:
        raise TooNewError(
            f"{what} has schema_version {version}, but this omniqual understands up to "
            f"{current}; upgrade omniqual to read it"
        )
    while version < current:
        migrate = registry.get(version)
        if migrate is None:
            raise NoMigrationError(
                f"{what} has schema_version {version} and no migration from it is known "
                f"(current is {current})"
            )
        data = migrate(dict(data))
        version += 1
        data["schema_version"] = version
    return data


def upgrade_journal_record(data: RawRecord) -> RawRecord:
    """Upgrade a journal record and, for result records, the result it carries."""
    data = upgrade(
        data, current=JOURNAL_SCHEMA_VERSION, registry=JOURNAL_MIGRATIONS, what="journal record"
    )
    result = data.get("result")
    if data.get("kind") == "result" and isinstance(result, dict):
        data["result"] = upgrade(
            result, current=RESULT_SCHEMA_VERSION, registry=RESULT_MIGRATIONS, what="gate result"
        )
    return data
