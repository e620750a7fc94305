"""Results from deployments given by URL combine in a row only when they were measured on one
served identity; results recording no identity at all never combine (both compile paths)."""

import json
from datetime import UTC, datetime
from pathlib import Path

from omniqual.compile.classes import compile_digests
from omniqual.compile.collect import collect_digests, collect_results
from omniqual.compile.matrix import compile_matrix
from omniqual.domain.matrix import CompiledRow
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import UNKNOWN, Provenance
from omniqual.engine.matrix_service import ProjectMatrix
from omniqual.engine.targets.served_identity import ServedIdentity
from tests.unit.compile.test_compile_truth import BASE, project, record

NOW = datetime(2026, 2, 1, tzinfo=UTC)
STARTED = datetime(2026, 1, 1, 8, tzinfo=UTC)


def served_by(url: str, started: datetime = STARTED) -> Provenance:
    """What a result taken against ``url`` records (the same model and release everywhere)."""
    identity = ServedIdentity(url, ("m",), (), {}, "0.30.0", UNKNOWN, UNKNOWN,
                              openapi_sha256="0" * 64, started_at=started)  # fmt: skip
    return identity.provenance(Provenance(vllm_omni_version="0.30.0"))


def base_row(loaded: ProjectMatrix, runs: Path) -> CompiledRow:
    """The row compiled both ways, which must agree."""
    current = loaded.current_gates()
    via_journal = compile_matrix(loaded.matrix, current, collect_results([runs], runs), now=NOW)
    via_digest = compile_digests(loaded.matrix, current, collect_digests([runs], runs), now=NOW)
    assert via_digest == via_journal
    return next(r for r in via_digest.rows if r.key == BASE)


def test_results_from_two_urls_never_validate_one_row(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    record(tmp_path / "runs", loaded,
           [("load", O.PASSED, {"provenance": served_by("http://b")}),
            ("contract", O.PASSED, {"provenance": served_by("http://a")})])  # fmt: skip
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.reasons[0].startswith("evidence from different checkpoints/servers: ")
    assert "served_identity_sha256=" in row.reasons[0]
    # The same gate on the first server completes the row.
    record(tmp_path / "runs", loaded, [("load", O.PASSED, {"provenance": served_by("http://a")})])
    assert base_row(loaded, tmp_path / "runs").state is CellState.VALIDATED


def test_a_restarted_server_is_another_deployment(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    later = datetime(2026, 1, 1, 9, tzinfo=UTC)
    record(tmp_path / "runs", loaded,
           [("contract", O.PASSED, {"provenance": served_by("http://a")}),
            ("load", O.PASSED, {"provenance": served_by("http://a", later)})])  # fmt: skip
    assert base_row(loaded, tmp_path / "runs").state is CellState.NOT_TESTED


def test_url_results_that_recorded_no_identity_never_combine(tmp_path: Path) -> None:
    loaded = project(tmp_path)
    # As an older omniqual recorded any URL result: nothing of the deployment known.
    older = Provenance(model="m", model_revision=UNKNOWN, checkpoint_sha256=UNKNOWN,
                       vllm_omni_version=UNKNOWN, vllm_omni_commit=UNKNOWN, vllm_version=UNKNOWN,
                       serve_config_sha256=UNKNOWN, source="reported",
                       target_host="not-visible")  # fmt: skip
    record(tmp_path / "runs", loaded, [("contract", O.PASSED, {"provenance": older}),
                                       ("load", O.PASSED, {"provenance": older})])  # fmt: skip
    journal = next((tmp_path / "runs").glob("*/journal.jsonl"))
    lines = []
    for raw in journal.read_text().splitlines():  # as written before the identity was kept
        doc = json.loads(raw)
        if doc["kind"] == "result":
            for key in ("served", "served_identity_sha256"):
                doc["result"]["provenance"].pop(key)
        lines.append(json.dumps(doc, sort_keys=True) + "\n")
    journal.write_text("".join(lines))
    for name in ("anchor.json", "digest.npz"):  # that omniqual anchored none of these bytes
        (journal.parent / name).unlink()
    row = base_row(loaded, tmp_path / "runs")
    assert row.state is CellState.NOT_TESTED
    assert row.reasons[0].startswith("evidence from deployments nobody can tell apart")
    assert row.gate_outcomes == {"contract": "passed", "load": "passed"}  # still read
