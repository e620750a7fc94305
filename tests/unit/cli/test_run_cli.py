"""``omniqual run`` and ``omniqual gate run`` as a user runs them (scripted checks, no sockets)."""

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from omniqual.cli.exits import user_errors
from omniqual.cli.main import app
from omniqual.deploy.launcher import LaunchError
from omniqual.engine.run.resources import Host
from omniqual.evidence.store import read_run
from tests.fakes.priors import worked_priors  # noqa: F401 (the fixture)
from tests.fakes.projects import make_project

pytestmark = pytest.mark.usefixtures("worked_priors")

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)
    return root


def test_run_writes_reports_and_fails_on_a_failed_gate(project: Path) -> None:
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--json", "--junit", "j.xml"])
    assert result.exit_code == 1, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert {line["gate"] for line in lines} == {"good", "bad"}
    assert {"m.compiled.json", "matrix.md", "matrix.html", "report.md", "report.html"} <= {
        p.name for p in (project / "out").iterdir()
    }
    assert "planted fault" in (project / "j.xml").read_text()
    assert "validated" in (project / "out" / "matrix.md").read_text()


def test_run_into_a_log_prints_plain_progress_and_json_keeps_stdout_to_itself(
    project: Path,
) -> None:
    stamp = re.compile(r"^\[\d\d:\d\d\] ", re.MULTILINE)
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])  # stdout and stderr: no terminal
    assert result.exit_code == 1, result.output
    assert all(stamp.match(line) for line in result.stdout.splitlines())
    lines = [stamp.sub("", line) for line in result.stdout.splitlines()]
    assert lines[0].startswith("plan: 3 gates, 0 launches; ~")
    t2v = "model=m,task=t2v"  # the axes that tell the planned rows apart, as a selector
    assert f"gate bad on {t2v}: started (3/3)" in lines
    assert any(line.startswith(f"gate bad on {t2v}: failed in ")
               and line.endswith(" left) - planted fault") for line in lines)  # fmt: skip
    assert not stamp.search(result.stderr)
    as_json = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--json"])
    assert [json.loads(line)["gate"] for line in as_json.stdout.splitlines()] == [
        "good", "good", "bad"
    ]  # fmt: skip
    assert "gate bad on" in as_json.stderr


def test_report_policy_exits_zero_with_findings(project: Path) -> None:
    (project / "c.yaml").write_text(
        "name: c\nmatrix: matrices/m.yaml\nevidence: runs\nexit_policy: report\n"
    )
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 0, result.output
    assert "--strict" not in result.output
    assert runner.invoke(app, ["run", "c.yaml", "-o", "out", "--strict"]).exit_code == 1


def test_gate_run_on_one_row(project: Path) -> None:
    result = runner.invoke(
        app, ["gate", "run", "good", "--target", "live", "--matrix", "matrices/m.yaml",
              "--row", "task=t2i", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert line["outcome"] == "passed"
    assert line["row"] == "model=m;task=t2i;quantization=none;hardware=cpu"


def test_gate_run_with_no_matching_row_is_a_usage_error(project: Path) -> None:
    result = runner.invoke(
        app, ["gate", "run", "good", "--target", "live", "--matrix", "matrices/m.yaml",
              "--row", "task=t2v,quantization=fp8"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "no matrix row matches" in result.stderr


def test_gate_run_with_an_unknown_axis_is_a_usage_error(project: Path) -> None:
    result = runner.invoke(
        app, ["gate", "run", "good", "--target", "live", "--matrix", "matrices/m.yaml",
              "--row", "colour=red"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "unknown axis 'colour'" in result.stderr


def test_an_unknown_campaign_file_is_one_line(project: Path) -> None:
    result = runner.invoke(app, ["run", "nope.yaml"])
    assert result.exit_code == 2
    assert "file not found" in result.stderr
    assert "Traceback" not in result.output


def test_gate_run_against_a_url_fitting_several_deployments_lists_them(project: Path) -> None:
    (project / "runners" / "live-fp8.yaml").write_text(
        "id: live-fp8\ndescription: d\nkind: url\nurl: http://127.0.0.1:9\n"
        "row: {model: m, quantization: fp8, hardware: cpu}\n"
    )
    with (project / "matrices" / "m.yaml").open("a") as handle:
        handle.write("  - key: {task: t2i, quantization: fp8}\n    recipe: live-fp8\n"
                     "    requires: [good]\n")  # fmt: skip
    result = runner.invoke(
        app,
        ["gate", "run", "good", "--target", "http://127.0.0.1:9", "--matrix", "matrices/m.yaml"],
    )
    assert result.exit_code == 2, result.output
    assert "recipe live (2 rows)" in result.stderr and "recipe live-fp8 (1 row)" in result.stderr
    assert not (project / "runs").exists() or not any((project / "runs").iterdir())


def test_many_report_files_in_one_directory_are_said_as_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omniqual.cli.gate import _say_written

    tables = [tmp_path / "report-tables" / f"{n:02d}.csv" for n in range(20)]
    _say_written([tmp_path / "report.md", tmp_path / "report.html", *tables])
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"wrote {tmp_path / 'report.md'}", f"wrote {tmp_path / 'report.html'}",
                     f"wrote 20 files in {tmp_path / 'report-tables'}/"]  # fmt: skip


def test_run_takes_jobs_and_refuses_a_bad_count(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--jobs", "none"])
    assert result.exit_code == 2 and "--jobs takes" in result.output
    monkeypatch.setattr("omniqual.engine.run.scheduler.host_resources", lambda: Host(cores=8))
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out", "--jobs", "2", "--json"])
    assert result.exit_code == 1, result.output  # the project's planted failure
    (run_dir,) = (project / "runs").iterdir()
    # Run as groups beside each other: each result says it ran alone (one group here).
    assert all(r.effective["concurrent_with"] == [] for r in read_run(run_dir).results)


def test_a_target_error_says_what_else_failed_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    @user_errors
    def failing() -> None:
        exc = LaunchError("a: server exited with code 1", reason="exited", recipe_id="a")
        exc.add_note("launch group b also failed: LaunchError: b: not ready within 9s")
        raise exc

    with pytest.raises(typer.Exit) as raised:
        failing()
    assert raised.value.exit_code == 3
    said = capsys.readouterr().err
    assert "a: server exited with code 1" in said and "launch group b also failed" in said
