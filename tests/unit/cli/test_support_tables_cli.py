"""``matrix render --format vllm-omni-features`` and ``matrix audit-claims`` as a user runs them:
files written, findings printed, exit 1 on a contradicted claim or a bare ✅ the evidence does
not back (G8-05)."""

import json
from pathlib import Path

from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.domain.outcomes import CellState as S
from tests.unit.report.support_fixtures import HW, matrix, row

ROOT = Path(__file__).resolve().parents[3]
FEATURES = str(ROOT / "matrices" / "vllm-omni-features.yaml")
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def compiled_file(tmp_path: Path, *rows: object) -> str:
    path = tmp_path / "m.compiled.json"
    path.write_text(json.dumps(matrix(*rows).model_dump(mode="json")))  # type: ignore[arg-type]
    return str(path)


def test_render_writes_the_tables_for_the_asked_hardware(tmp_path: Path) -> None:
    compiled = compiled_file(tmp_path, row(S.VALIDATED), row(S.VALIDATED, cache_policy="cache_dit"))
    out = tmp_path / "features.md"
    code, said, _ = invoke("matrix", "render", compiled, "--format", "vllm-omni-features",
                           "--hardware", HW, "--features", FEATURES, "-o", str(out))  # fmt: skip
    assert code == 0 and f"wrote {out}" in said
    text = out.read_text(encoding="utf-8")
    assert f"### ImageGen on {HW}" in text
    assert "| **Stable-Diffusion-3** | ❓ | [✅](runs/run-1/journal.jsonl#" in text
    code, _, err = invoke("matrix", "render", compiled, "--format", "vllm-omni-features",
                          "--hardware", "tpu", "--features", FEATURES)  # fmt: skip
    assert code == 2 and "no row of m is on hardware 'tpu'" in err


def test_audit_exits_1_on_a_contradiction_or_a_bare_unverified_tick(tmp_path: Path) -> None:
    doc = tmp_path / "claims.md"
    doc.write_text("### ImageGen\n\n| Model | ⚡Cache-DiT | 🔄Step Execution |\n|---|---|---|\n"
                   "| **Stable-Diffusion-3** | ✅ | ✅ |\n", encoding="utf-8")  # fmt: skip
    unverified = compiled_file(tmp_path, row(S.VALIDATED))
    code, said, _ = invoke("matrix", "audit-claims", str(doc), "--matrix", unverified,
                           "--features", FEATURES)  # fmt: skip
    assert code == 1
    assert "unverified (2):" in said and "2 cells audited" in said
    noted = tmp_path / "noted.md"
    noted.write_text("### ImageGen\n\n| Model | ⚡Cache-DiT | 🔄Step Execution |\n"
                     "|---|---|---|\n| **Stable-Diffusion-3** | ✅[^1] | ✅ (planned) |\n",
                     encoding="utf-8")  # fmt: skip
    code, said, _ = invoke("matrix", "audit-claims", str(noted), "--matrix", unverified,
                           "--features", FEATURES)  # fmt: skip
    assert code == 0 and "unverified (2):" in said
    refused = compiled_file(tmp_path, row(S.UNSUPPORTED, execution="step/1", reasons=("no",)))
    code, said, _ = invoke("matrix", "audit-claims", str(doc), "--matrix", refused,
                           "--features", FEATURES)  # fmt: skip
    assert code == 1
    assert "contradicted (1):" in said and "Stable-Diffusion-3, 🔄Step Execution" in said


def test_audit_of_a_document_with_nothing_to_map_is_a_usage_error(tmp_path: Path) -> None:
    doc = tmp_path / "claims.md"
    doc.write_text("### ImageGen\n\n| Model | ⚡Cache-DiT |\n|---|---|\n| **Bagel** | ✅ |\n")
    compiled = compiled_file(tmp_path, row(S.VALIDATED))
    code, said, err = invoke("matrix", "audit-claims", str(doc), "--matrix", compiled,
                             "--features", FEATURES)  # fmt: skip
    assert code == 2
    assert "model 'Bagel' (line 5) is not under models:" in said
    assert "no claim could be audited" in err
