"""`omniqual perf baseline update` on the command line: ``--threshold`` sets the baseline's
threshold, and one below what its launch spread can hold is refused (exit 2) naming the
threshold it can hold."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from omniqual.cli.perf import perf_app
from omniqual.domain.axes import Selector
from omniqual.domain.result import GateResult
from omniqual.specs.perf_baseline import load_baseline
from tests.unit.engine.test_perf_baseline_update import launches

app = typer.Typer()
app.add_typer(perf_app, name="perf")
cli = CliRunner()


@pytest.fixture(autouse=True)
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    by_run = {r.run_id: r for r in launches()}

    def latest(run_dir: Path, _selector: Selector, _defaults: object = None) -> GateResult:
        return by_run[run_dir.name]

    monkeypatch.setattr("omniqual.engine.perf_baseline.latest_perf_result", latest)


def update(tmp_path: Path, *extra: str) -> tuple[int, str]:
    args = ["perf", "baseline", "update", "--row", "model=sd3-tiny", "--owner", "owners",
            "--baselines", str(tmp_path)]  # fmt: skip
    for run in ("run0", "run1", "run2"):
        args += ["--from", str(tmp_path / run)]
    result = cli.invoke(app, [*args, *extra])
    return result.exit_code, result.output


def test_a_threshold_the_spread_can_hold_is_written(tmp_path: Path) -> None:
    code, output = update(tmp_path, "--threshold", "0.05")
    assert code == 0, output
    [written] = tmp_path.glob("*.yaml")
    baseline = load_baseline(written)
    assert baseline.threshold == 0.05
    assert baseline.resolution is not None and baseline.resolution.min_threshold < 0.05
    assert "can hold" in output  # the printed diff says what it resolves


def test_a_threshold_below_its_resolution_is_refused_naming_what_it_holds(tmp_path: Path) -> None:
    code, output = update(tmp_path, "--threshold", "0.01")
    assert code == 2
    assert "it can hold 3% or more" in output
    assert not list(tmp_path.glob("*.yaml"))
