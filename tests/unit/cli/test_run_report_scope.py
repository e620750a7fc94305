"""``omniqual run`` writes the campaign's scope (from its plan) and the project's skill rules into
the report it renders; ``omniqual report`` of recorded runs has no campaign, but the rules."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)
from tests.fakes.projects import make_project

pytestmark = pytest.mark.usefixtures("worked_priors")

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)
    rules = root / "gates" / "rules"
    rules.mkdir()
    (rules / "checks.yaml").write_text(
        "kinds:\n  scripted:\n    package: tests/fakes/checks.py\n    cases: {planted: fault}\n"
    )
    (rules / "gate-0.yaml").write_text(
        "group: G0\ntitle: 'Gate 0: the contract'\nrules:\n"
        "  - {id: G0-01, statement: s1, mode: automatic, source: S1, status: decided,\n"
        "     decided_by: [{gate: good, case: planted}]}\n"
        "  - {id: G0-02, statement: s2, mode: automatic, source: S1, status: missing,\n"
        "     reason: nothing counts it}\n"
    )
    # The t2v row runs `good` only: `bad` is left to the full campaign (c.yaml); the t2v fp8 row
    # has no recipe, so nothing of it runs.
    (root / "tour.yaml").write_text(
        "name: tour\nmatrix: matrices/m.yaml\nevidence: runs\nfull_campaign: c.yaml\n"
        "include:\n  - rows: task=t2i\n  - rows: task=t2v\n    gates: [good]\n"
    )
    return root


def test_run_says_which_rows_it_qualified_in_full_and_which_it_sampled(project: Path) -> None:
    result = runner.invoke(app, ["run", "tour.yaml", "-o", "out"])
    assert result.exit_code == 0, result.output
    md = (project / "out" / "report.md").read_text()
    assert "## Campaign scope" in md
    assert "_From the plan of tour:" in md and "the full campaign, c.yaml" in md
    assert "- **Qualified in full (1):** #1" in md
    assert "- **Only sampled (1):** #3 (left out: bad)" in md
    assert "## Skill rules covered" in md
    assert "| G0 · Gate 0: the contract | 2 | 1 | 0 | 0 | 1 | 0 |" in md
    assert "**1** rule(s) decided by those results" in md
    assert "missing or out of scope (1): G0-02" in md
    assert 'id="rule-G0-01"' in (project / "out" / "report.html").read_text()


def test_report_of_recorded_runs_has_the_rules_but_no_campaign_scope(project: Path) -> None:
    assert runner.invoke(app, ["run", "tour.yaml", "-o", "out"]).exit_code == 0
    result = runner.invoke(app, ["report", "matrices/m.yaml", "-e", "runs"])
    assert result.exit_code == 0, result.output
    assert "## Skill rules covered" in result.stdout
    assert "Campaign scope" not in result.stdout
