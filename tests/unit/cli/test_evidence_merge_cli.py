"""``omniqual evidence merge`` as a user runs it: the merged root verifies, compiles and renders;
a conflict exits 1 naming both sources; a path holding no runs exits 2; never a traceback."""

import json
from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.evidence.run_reader import iter_results
from omniqual.evidence.store import RunWriter
from tests.fakes.evidence import FINGERPRINT, record_run, result

MATRIX = Path(__file__).resolve().parents[2] / "data" / "mini-project" / "matrices" / "mini.yaml"
BASE = "model=m;task=t2i;quantization=none;hardware=cpu"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    outcome = runner.invoke(app, list(args))
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit), outcome.exception
    return outcome.exit_code, outcome.stdout, outcome.stderr


def test_merged_root_verifies_compiles_and_renders(tmp_path: Path) -> None:
    record_run(tmp_path / "step-a", [("contract", BASE, O.PASSED)])
    record_run(tmp_path / "step-b", [("load", BASE, O.PASSED)], start_minute=3)
    merged = tmp_path / "merged"
    code, out, err = invoke("evidence", "merge", str(tmp_path / "step-a"),
                            str(tmp_path / "step-b"), "-o", str(merged), "--json")  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert (len(doc["runs"]), doc["results"], doc["artifacts_copied"]) == (2, 2, 2)

    code, out, err = invoke("evidence", "verify", str(merged))
    assert code == 0, out + err
    assert out.count(": intact (1 results, 1 artifacts hashed)") == 2

    code, out, _ = invoke("matrix", "compile", str(MATRIX), "-e", str(merged),
                          "-o", str(tmp_path / "c.json"))  # fmt: skip
    assert code == 0 and "1 validated" in out  # contract + load on one row: both halves merged

    code, out, err = invoke("report", str(MATRIX), "-e", str(merged), "-f", "md")
    assert code == 0, err
    assert all(run in out for run in doc["runs"])


def test_a_conflict_exits_1_naming_both_sources(tmp_path: Path) -> None:
    a = record_run(tmp_path / "step-a", [("contract", BASE, O.PASSED)])
    (original,) = list(iter_results([a]))
    writer = RunWriter.create(tmp_path / "step-b", command=("omniqual",), environment=FINGERPRINT)
    with writer:
        writer.record(result(writer, "contract", BASE, O.FAILED).model_copy(
            update={"result_id": original.result_id}))  # fmt: skip
    code, out, err = invoke("evidence", "merge", str(tmp_path / "step-a"),
                            str(tmp_path / "step-b"), "-o", str(tmp_path / "m"))  # fmt: skip
    assert code == 1 and out == ""
    text = " ".join(err.split())  # rich wraps long lines
    assert f"result {original.result_id} differs between" in text
    assert "step-a" in text and "step-b" in text and "Traceback" not in err


def test_a_directory_without_runs_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = invoke("evidence", "merge", str(tmp_path / "empty"), "-o", str(tmp_path / "m"))
    assert code == 2 and "no run directory" in err
    code, _, err = invoke("evidence", "merge", str(tmp_path / "nope"), "-o", str(tmp_path / "m"))
    assert code == 2 and "no such evidence directory" in err
