"""A result's requested/effective settings are JSON as recorded: tuples a check returns become
lists and a path its text, never a crash that loses the result."""

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.run.campaign import run_campaign
from omniqual.engine.run.gate_runner import json_ready
from omniqual.specs.campaign import load_campaign
from tests.fakes.projects import make_project


def test_tuples_become_lists_and_paths_their_text() -> None:
    settings = {"command": ("python", "-m", "x"), "dir": Path("/refs/sd3"), "n": 3,
                "nested": {"pair": (1, 2)}}  # fmt: skip
    assert json_ready(settings) == {"command": ["python", "-m", "x"], "dir": "/refs/sd3",
                                    "n": 3, "nested": {"pair": [1, 2]}}  # fmt: skip


def test_a_check_that_reports_tuples_still_records_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, monkeypatch)
    (project / "gates" / "good.yaml").write_text(
        "id: good\nkind: scripted\nversion: 1\nparams: {effective_tuple: true}\n"
    )
    outcome = asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    good = [r for r in outcome.results if r.gate_id == "good"]
    assert good and all(r.outcome is GateOutcome.PASSED for r in good)
    assert all(r.effective["command"] == ["python", "-m", "x"] for r in good)
