"""``omniqual bench`` usage errors: one clear line and exit 2, before any target is contacted."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app

runner = CliRunner()
MIX = (
    "name: cli-mix\nentries:\n  - {name: img, task: t2i, endpoint: image, weight: 1,"
    " shape: {width: 64, height: 64, steps: 2}}\n"
)


def invoke(tmp_path: Path, *args: str, workload: str = MIX) -> tuple[int, str]:
    mix = tmp_path / "mix.yaml"
    mix.write_text(workload, encoding="utf-8")
    # Port 9 (discard) on loopback: nothing here may ever reach it.
    base = ["bench", "--target", "http://127.0.0.1:9", "--workload", str(mix)]
    outcome = runner.invoke(app, [*base, *args])
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.exception
    return outcome.exit_code, outcome.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rate", "5", "--rates", "1,2", "--duration", "1"), "exactly one of --rate, --rates"),
        (("--rate", "5", "--sweep", "--duration", "1"), "exactly one of --rate, --rates"),
        (
            (
                "--duration",
                "1",
            ),
            "exactly one of --rate, --rates or --sweep (got none of them)",
        ),
        (("--rate", "5"), "exactly one of --duration or --requests"),
        (("--rate", "5", "--duration", "1", "--requests", "9"), "exactly one of --duration"),
        (("--rate", "5", "--duration", "1", "--profile", "bursty"), "is not one of poisson"),
        (("--rate", "5", "--duration", "1", "--profile", "gamma:x"), "gamma needs a number"),
        (("--rates", "1,,2", "--duration", "1"), "is not a number"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, err = invoke(tmp_path, *args)
    assert code == 2
    assert message in " ".join(err.split())
    assert "Traceback" not in err


def test_a_bad_workload_is_a_usage_error(tmp_path: Path) -> None:
    bad = "name: x\nentries: []\n"
    code, err = invoke(tmp_path, "--rate", "5", "--duration", "1", workload=bad)
    assert code == 2
    assert "entries" in err and "Traceback" not in err


def test_an_unknown_recipe_is_a_usage_error(tmp_path: Path) -> None:
    mix = tmp_path / "mix.yaml"
    mix.write_text(MIX, encoding="utf-8")
    outcome = runner.invoke(app, ["bench", "--target", "no-such-recipe", "--workload", str(mix),
                                  "--rate", "5", "--duration", "1"])  # fmt: skip
    assert outcome.exit_code == 2
    assert "no-such-recipe" in outcome.stderr
