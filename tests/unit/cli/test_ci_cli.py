"""``omniqual ci plan`` as a user runs it on the project's own matrix: a pipeline file that
parses, usage errors as one line with exit 2."""

from pathlib import Path

import yaml
from typer.testing import CliRunner

from omniqual.cli.main import app

ROOT = Path(__file__).resolve().parents[3]
MATRIX = str(ROOT / "matrices" / "embedded-cpu.yaml")
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    outcome = runner.invoke(app, ["ci", "plan", *args])
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.exception
    return outcome.exit_code, outcome.stdout, outcome.stderr


def test_writes_a_buildkite_pipeline_for_the_embedded_matrix(tmp_path: Path) -> None:
    out = tmp_path / "pipeline.yml"
    code, _, err = invoke(MATRIX, "--format", "buildkite", "--tracks", "function", "--row",
                          "model=sd3-tiny", "--setup", "pip install .", "-o", str(out))  # fmt: skip
    assert code == 0, err
    steps = yaml.safe_load(out.read_text())["steps"]
    keys = [s["key"] for s in steps if "key" in s]
    runs = [[c for c in s["commands"] if "gate run" in c] for s in steps[:-2]]
    targets = [commands[0].split()[5] for commands in runs]  # --target RECIPE
    assert targets == sorted(targets) and keys[-1] == "omniqual-report"  # ordered by recipe
    assert "gates-sd3-tiny-on-cpu" in keys and "gates-sd3-tiny-step-on-cpu" in keys
    sd3 = next(s for s in steps if s.get("key") == "gates-sd3-tiny-on-cpu")
    assert sd3["agents"] == {"queue": "cpu"} and sd3["commands"][0] == "pip install ."
    gates = [c.split()[3] for c in sd3["commands"] if c.startswith("omniqual gate run")]
    # The function track's gates.
    assert gates == ["api-contract", "field-effect", "isolation", "lora", "strict-load"]
    step = next(s for s in steps if s.get("key") == "gates-sd3-tiny-step-on-cpu")
    assert [c.split()[3] for c in step["commands"] if "gate run" in c] == ["fails-fast"]
    assert f"{len(keys) - 1} step(s)" in err


def test_github_actions_to_stdout() -> None:
    code, out, _ = invoke(MATRIX, "-f", "github-actions", "--row", "model=stable-audio-tiny")
    assert code == 0
    jobs = yaml.safe_load(out)["jobs"]
    # One job per recipe of the selected rows (the baseline and its TeaCache row), then the
    # report after all of them.
    recipes = ["gates-stable-audio-tiny-on-cpu", "gates-stable-audio-tiny-tea-cache-on-cpu"]
    assert list(jobs) == [*recipes, "omniqual-report"]
    assert jobs["omniqual-report"]["needs"] == recipes


def test_a_ci_level_keeps_its_tracks_and_no_tracks_keeps_every_gate() -> None:
    code, out, _ = invoke(MATRIX, "-f", "buildkite", "--level", "L5", "--row", "model=wan-t2v-tiny")
    assert code == 0
    gates = {c.split()[3] for s in yaml.safe_load(out)["steps"] for c in s.get("commands", ())
             if c.startswith("omniqual gate run")}  # fmt: skip
    assert gates == {"abort", "soak", "fault-injection", "startup"}  # reliability: weekly L5
    code, out, _ = invoke(MATRIX, "-f", "buildkite", "--row", "model=wan-t2v-tiny")
    gates = {c.split()[3] for s in yaml.safe_load(out)["steps"] for c in s.get("commands", ())
             if c.startswith("omniqual gate run")}  # fmt: skip
    assert gates == {"api-contract", "strict-load", "reference-parity", "abort", "soak",
                     "fails-fast", "isolation", "fault-injection", "startup"}  # fmt: skip


def test_usage_errors_exit_2_with_one_line() -> None:
    for args, message in (
        (["-f", "gitlab"], "--format must be buildkite or github-actions"),
        (["-f", "buildkite", "-t", "speed"], "unknown track(s) 'speed'"),
        (["-f", "buildkite", "--row", "model=nope"], "needs a gate of the chosen tracks"),
        (["-f", "buildkite", "--queue", "h200"], "is not HARDWARE=QUEUE"),
    ):
        code, out, err = invoke(MATRIX, *args)
        assert code == 2 and out == "", args
        assert message in " ".join(err.split()) and "Traceback" not in err
