"""``ci plan``: a sample matrix rendered as a Buildkite and a GitHub Actions pipeline, parsed back
(yaml.safe_load) and checked for its steps, queues and commands."""

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from omniqual.domain.gate import Track
from omniqual.engine.ci.plan import parse_queues, parse_tracks, plan_ci, tracks_at_level
from omniqual.engine.ci.render import CiFormat, render_pipeline

MINI = Path(__file__).resolve().parents[2] / "data" / "mini-project"
CPU = "cpu-x86_64-2core-avx2"
H200 = "1x-h200-141gb"


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    """Two CPU rows of one recipe, a GPU row, a GPU row without a recipe; gates in three tracks
    and one in none."""
    root = tmp_path / "proj"
    for sub in ("matrices", "gates", "runners"):
        (root / sub).mkdir(parents=True)
    (root / "matrices" / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    for gate, track in (("contract", "function"), ("parity", "accuracy"),
                        ("soak", "reliability"), ("untracked", None)):  # fmt: skip
        line = f"track: {track}\n" if track else ""
        (root / "gates" / f"{gate}.yaml").write_text(
            f"id: {gate}\nkind: scripted\nversion: 1\n{line}"
        )
    for recipe, model, hardware in (("tiny", "m", CPU), ("big", "big", H200)):
        (root / "runners" / f"{recipe}.yaml").write_text(
            f"id: {recipe}\ndescription: d\nkind: url\nurl: http://127.0.0.1:9\n"
            f"row: {{model: {model}, quantization: none, hardware: {hardware}}}\n"
        )
    path = root / "matrices" / "sample.yaml"
    path.write_text(
        "name: sample\nrows:\n"
        f"  - key: {{model: m, task: t2i, quantization: none, hardware: {CPU}}}\n"
        "    recipe: tiny\n    requires: [contract, soak, untracked]\n"
        f"  - key: {{model: m, task: t2v, quantization: none, hardware: {CPU}}}\n"
        "    recipe: tiny\n    requires: [contract, parity]\n"
        f"  - key: {{model: big, task: t2i, quantization: none, hardware: {H200}}}\n"
        "    recipe: big\n    requires: [soak, parity, contract]\n"
        f"  - key: {{model: big, task: t2i, quantization: fp8, hardware: {H200}}}\n"
        "    requires: [contract]\n"
    )
    return path


def render(matrix: Path, fmt: CiFormat, **options: Any) -> dict[str, Any]:
    text = render_pipeline(plan_ci(matrix, **options), fmt)
    document = yaml.safe_load(text)
    assert isinstance(document, dict)
    return document


def gate_runs(commands: list[str]) -> list[list[str]]:
    return [shlex.split(c.split(" || ")[0]) for c in commands if c.startswith("omniqual gate run")]


def test_buildkite_one_step_per_recipe_and_queue_then_wait_and_report(matrix: Path) -> None:
    steps = render(matrix, CiFormat.BUILDKITE)["steps"]
    assert [s.get("key") for s in steps] == [
        "gates-big-on-1x-h200-141gb", "gates-tiny-on-cpu", None, "omniqual-report"
    ]  # fmt: skip
    big, tiny, wait, report = steps
    assert big["agents"] == {"queue": H200} and tiny["agents"] == {"queue": "cpu"}
    runs = gate_runs(tiny["commands"])
    assert [r[3] for r in runs] == ["contract", "parity", "soak", "untracked"]  # track order
    assert runs[0] == [
        "omniqual", "gate", "run", "contract", "--target", "tiny",
        "--matrix", "matrices/sample.yaml",
        "--evidence", "omniqual-ci/steps/gates-tiny-on-cpu/runs",
        "--junit", "omniqual-ci/steps/gates-tiny-on-cpu/junit/contract.xml",
    ]  # fmt: skip
    # Every gate runs although one fails; the step ends with the failure ($$ escapes Buildkite).
    assert tiny["commands"][0] == "status=0" and tiny["commands"][-1] == 'exit "$$status"'
    assert all(c.endswith("|| status=$$?") for c in tiny["commands"][1:-1])
    assert tiny["artifact_paths"] == ["omniqual-ci/steps/gates-tiny-on-cpu/**/*"]
    assert [r[3] for r in gate_runs(big["commands"])] == ["contract", "parity", "soak"]
    assert wait == {"wait": None, "continue_on_failure": True}
    assert report["commands"][0].startswith("buildkite-agent artifact download ")
    assert "omniqual evidence merge omniqual-ci/steps -o omniqual-ci/merged" in report["commands"]
    assert ("omniqual report matrices/sample.yaml --evidence omniqual-ci/merged --format md "
            "-o omniqual-ci/report/report.md") in report["commands"]  # fmt: skip
    assert "omniqual-ci/merged/**/*" in report["artifact_paths"]
    for step in (big, tiny, report):
        assert re.fullmatch(r"[A-Za-z0-9_:-]+", step["key"])


def test_github_actions_jobs_runs_on_upload_and_needs(matrix: Path) -> None:
    workflow = render(matrix, CiFormat.GITHUB_ACTIONS)
    jobs = workflow["jobs"]
    assert list(jobs) == ["gates-big-on-1x-h200-141gb", "gates-tiny-on-cpu", "omniqual-report"]
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", job) for job in jobs)
    assert "on" in workflow and workflow["name"] == "omniqual"
    tiny = jobs["gates-tiny-on-cpu"]
    assert tiny["runs-on"] == ["self-hosted", "cpu"]
    assert jobs["gates-big-on-1x-h200-141gb"]["runs-on"] == ["self-hosted", H200]
    checkout, run, upload = tiny["steps"]
    assert checkout["uses"].startswith("actions/checkout@")
    lines = run["run"].splitlines()
    assert lines[0] == "status=0" and lines[-1] == 'exit "$status"'
    assert [r[3] for r in gate_runs(lines[1:-1])] == ["contract", "parity", "soak", "untracked"]
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    assert upload["with"]["path"] == "omniqual-ci/steps/gates-tiny-on-cpu"
    assert upload["with"]["name"] == "omniqual-evidence-gates-tiny-on-cpu"
    report = jobs["omniqual-report"]
    assert report["needs"] == ["gates-big-on-1x-h200-141gb", "gates-tiny-on-cpu"]
    assert report["if"] == "always()"
    download = report["steps"][1]
    assert download["with"] == {"pattern": "omniqual-evidence-*", "path": "omniqual-ci/steps"}
    script = report["steps"][2]["run"].splitlines()
    assert script[0] == "omniqual evidence merge omniqual-ci/steps -o omniqual-ci/merged"
    assert any(line.startswith("omniqual report matrices/sample.yaml") for line in script)


def test_tracks_rows_and_queues_narrow_the_plan(matrix: Path) -> None:
    plan = plan_ci(matrix, tracks=parse_tracks(["reliability"]))
    assert [(s.key, [r.gate_id for r in s.runs]) for s in plan.steps] == [
        ("gates-big-on-1x-h200-141gb", ["soak"]), ("gates-tiny-on-cpu", ["soak"]),
    ]  # fmt: skip
    plan = plan_ci(matrix, tracks=parse_tracks(["function,accuracy"]), row_selector="task=t2v",
                   queues=parse_queues([f"{CPU}=cpu-small"]))  # fmt: skip
    (step,) = plan.steps
    assert (step.key, step.queue, step.hardware) == ("gates-tiny-on-cpu-small", "cpu-small", (CPU,))
    assert [(r.gate_id, r.argv[-2:]) for r in step.runs] == [
        ("contract", ("--row", "task=t2v")), ("parity", ("--row", "task=t2v")),
    ]  # fmt: skip
    assert step.runs[0].rows == (f"model=m;task=t2v;quantization=none;hardware={CPU}",)


def test_rows_without_a_recipe_are_named_and_the_plan_is_deterministic(matrix: Path) -> None:
    plan = plan_ci(matrix)
    assert plan.unplanned_rows == (f"model=big;task=t2i;quantization=fp8;hardware={H200}",)
    assert plan.tracks == () and plan.command == "omniqual ci plan matrices/sample.yaml"
    narrowed = plan_ci(matrix, tracks=(Track.FUNCTION,), row_selector="task=t2v")
    header = render_pipeline(narrowed, CiFormat.BUILDKITE).splitlines()[0]
    assert header.startswith("# Generated by `omniqual ci plan matrices/sample.yaml --tracks "
                             "function --row task=t2v --format buildkite`")  # fmt: skip
    for fmt in CiFormat:
        assert render_pipeline(plan_ci(matrix), fmt) == render_pipeline(plan, fmt)


def test_bad_tracks_queues_and_rows_are_usage_errors(matrix: Path) -> None:
    with pytest.raises(ValueError, match="unknown track"):
        parse_tracks(["speed"])
    with pytest.raises(ValueError, match="HARDWARE=QUEUE"):
        parse_queues(["h200"])
    with pytest.raises(ValueError, match="unknown axis 'colour'"):
        plan_ci(matrix, row_selector="colour=red")
    with pytest.raises(ValueError, match=r"no gate .* in track"):
        plan_ci(matrix, tracks=(Track.PERFORMANCE,))


def test_a_ci_level_picks_the_tracks_that_run_there(matrix: Path) -> None:
    assert tracks_at_level("L5") == (Track.RELIABILITY,)
    assert tracks_at_level("l3") == (Track.FUNCTION, Track.ACCURACY, Track.PERFORMANCE)
    assert tracks_at_level("L2", (Track.FUNCTION, Track.RELIABILITY)) == (Track.FUNCTION,)
    with pytest.raises(ValueError, match="no track of reliability runs at CI level L3"):
        tracks_at_level("L3", (Track.RELIABILITY,))
    with pytest.raises(ValueError, match="unknown CI level 'L9'"):
        tracks_at_level("L9")
    plan = plan_ci(matrix, tracks=tracks_at_level("L5"))
    assert {r.gate_id for s in plan.steps for r in s.runs} == {"soak"}
