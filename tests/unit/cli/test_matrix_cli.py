"""``omniqual matrix ...`` as a user runs it: exit codes and messages, never a traceback."""

import json
from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from tests.fakes.evidence import record_run

MATRICES = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_validate_ok() -> None:
    code, out, _ = invoke("matrix", "validate", str(MATRICES / "mini.yaml"))
    assert code == 0
    assert "3 rows" in out


def test_validate_names_every_planted_mistake_with_its_line() -> None:
    code, _, err = invoke("matrix", "validate", str(MATRICES / "broken.yaml"))
    assert code == 2
    lines = [line for line in err.splitlines() if "broken.yaml:" in line]
    assert len(lines) == 3
    assert any(":4: rows.0.key.task:" in line for line in lines)
    assert any(":7: rows.1.requires.1: unknown gate 'lod'" in line for line in lines)
    assert any(":8: rows.2.key.colour: unknown axis" in line for line in lines)


def test_missing_file_is_one_line_and_exit_2() -> None:
    code, _, err = invoke("matrix", "validate", str(MATRICES / "nope.yaml"))
    assert code == 2
    assert "file not found" in err
    assert "Traceback" not in err


def test_declared_state_without_evidence_is_an_error(tmp_path: Path) -> None:
    text = (
        (MATRICES / "mini.yaml")
        .read_text()
        .replace(
            "requires: [contract, load]\n",
            "requires: [contract, load]\n    declared: validated\n",
            1,
        )
    )
    path = MATRICES / "declared-tmp.yaml"
    path.write_text(text)
    try:
        code, _, err = invoke("matrix", "validate", str(path))
        assert code == 2
        assert "declared 'validated' but the evidence says 'not tested'" in err
        record_run(tmp_path, [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
        code, _, err = invoke("matrix", "validate", str(path), "--evidence", str(tmp_path))
        assert code == 0, err
    finally:
        path.unlink()


def test_compile_writes_sorted_json(tmp_path: Path) -> None:
    record_run(tmp_path / "runs", [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
    out = tmp_path / "compiled.json"
    code, stdout, _ = invoke(
        "matrix", "compile", str(MATRICES / "mini.yaml"), "-e", str(tmp_path / "runs"),
        "-o", str(out),
    )  # fmt: skip
    assert code == 0
    assert "1 validated" in stdout
    data = json.loads(out.read_text())
    assert list(data) == sorted(data)
    states = {row["key"]: row["state"] for row in data["rows"]}
    assert states[BASE] == "validated"
    assert sorted(set(states.values())) == ["not tested", "validated"]


def test_diff_reports_state_changes(tmp_path: Path) -> None:
    before, after = tmp_path / "a.json", tmp_path / "b.json"
    invoke("matrix", "compile", str(MATRICES / "mini.yaml"), "-o", str(before))
    record_run(tmp_path / "runs", [("contract", BASE, O.PASSED), ("load", BASE, O.PASSED)])
    invoke("matrix", "compile", str(MATRICES / "mini.yaml"), "-e", str(tmp_path / "runs"),
           "-o", str(after))  # fmt: skip
    code, out, _ = invoke("matrix", "diff", str(before), str(after), "--format", "json")
    assert code == 0
    assert BASE in out
    assert "validated" in out and "not tested" in out


def test_render_rejects_an_unknown_format() -> None:
    code, _, err = invoke("matrix", "render", str(MATRICES / "mini.yaml"), "--format", "pdf")
    assert code == 2
    assert "--format must be" in err
