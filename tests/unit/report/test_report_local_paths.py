"""No report shows where things lay on the machine that made it: a checkpoint directory under
the user's home cache is named by the checkpoint's name and sha256, any other local path by its
last component, in every format (Markdown, HTML, JSON, step summary, CSV, matrix pages, diff)."""

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from omniqual.domain.evidence import CaseResult, ErrorInfo
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint, RunSummary
from omniqual.report.blocks import Code, Table
from omniqual.report.csv_export import csv_files
from omniqual.report.diff import diff_matrices, render_diff
from omniqual.report.matrix_pages import render_matrix_pages
from omniqual.report.render import RUN_FORMATS, render_matrix, render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view
from omniqual.report.templates import DEFAULT_TEMPLATES_DIR
from tests.unit.report.conftest import T0

HOME = "/home/alice"
CHECKPOINT = f"{HOME}/.cache/omniqual/checkpoints/9f3e2a/sd3-tiny"
SHA = "c0ffee" + "1" * 58
SHOWN = f"sd3-tiny@sha256:{SHA[:12]}"
REPO = str(DEFAULT_TEMPLATES_DIR.parent)
ROW = "model=flux;task=t2i;quantization=bf16;hardware=h200"

# Any absolute path of two or more components not inside a URL (an HTTP endpoint is one of the
# ``/v1/...`` family) and any home-relative ``~/`` path.
_ABSOLUTE = re.compile(r"(?<![\w.~/:<-])(?:file://)?/[\w.@+%-]+(?:/[\w.@+%-]*)+")
_HOME_RELATIVE = re.compile(r"(?<![\w.~/-])~/")


def _leaks(text: str, *local: str) -> list[str]:
    found = [p for p in _ABSOLUTE.findall(text) if not p.startswith("/v1/")]
    found += _HOME_RELATIVE.findall(text)
    found += [root for root in local if root in text]
    return found


def _launch(tmp: Path, user_home: str) -> GateResult:
    provenance = Provenance(
        model=CHECKPOINT, model_revision="bundled:sd3-tiny", checkpoint_sha256=SHA,
        serve_config_sha256="5" * 64, source="launched", target_host="harness-host",
        serve_argv=("vllm", "serve", CHECKPOINT, "--omni", "--port", "8091",
                    "--download-dir", f"{user_home}/hf", "--deploy-config",
                    f"{REPO}/runners/deploy/sd3.yaml"),
    )  # fmt: skip
    return GateResult(
        result_id="res-launch", run_id="run-1", gate_id="g1", gate_version=1, gate_kind="parity",
        row=ROW, outcome=GateOutcome.FAILED, target="sd3-embedded",
        reasons=(f"loader read {CHECKPOINT}/transformer/config.json",
                 f"scratch left in {tmp}/scratch/step-3"),
        command=("omniqual", "gate", "run", "g1", "--evidence", f"{tmp}/evidence",
                 "--matrix", f"{REPO}/matrices/embedded-cpu.yaml"),
        requested={"model": CHECKPOINT, "output_dir": f"{user_home}/out", "seed": 7},
        effective={"model": CHECKPOINT, "cache": {"dir": "~/.cache/omniqual/x"}},
        cases=(CaseResult(id="c1", endpoint="/v1/images/generations", expected_status="200",
                          observed_status="500", outcome=GateOutcome.FAILED,
                          note=f"traceback in /tmp/vllm-{SHA[:6]}/worker.py"),),
        error=ErrorInfo(type="OSError", message=f"cannot open file://{HOME}/models/missing"),
        provenance=provenance, started_at=T0, finished_at=T0,
    )  # fmt: skip


def _evidence(tmp: Path, user_home: str, make_row: Callable[..., CompiledRow],
              make_matrix: Callable[..., CompiledMatrix]) -> RunEvidence:  # fmt: skip
    launch = _launch(tmp, user_home)
    row = make_row(CellState.LIMITED, axes={"api_mode": "images-generations"},
                   note=f"weights at {CHECKPOINT}",
                   reasons=(f"see {user_home}/notes.txt",))  # fmt: skip
    matrix = make_matrix(row).model_copy(update={"evidence_dirs": (f"{tmp}/evidence",)})
    environment = EnvironmentFingerprint(
        hostname_hash="0" * 64, os="Linux", kernel="6.0", machine="x86_64", cpu_model="test",
        cpu_count=2, memory_total_bytes=1 << 34, python="CPython 3.11", omniqual_version="0.1.0",
        describes=f"the harness host ({REPO})",
    )  # fmt: skip
    run = RunSummary(run_id="run-1", started_at=T0, finished_at=T0, status="completed",
                     command=("omniqual", "run", f"{REPO}/campaigns/c.yaml", "--evidence",
                              f"{tmp}/evidence"),
                     environment=environment, results=(launch,))  # fmt: skip
    return RunEvidence("Local paths", matrix, runs=(run,), scope=f"rows under {REPO}")


@pytest.fixture
def user_home(monkeypatch: pytest.MonkeyPatch) -> str:
    """The user's home somewhere no fixed list of filesystem roots names."""
    home = "/nonstandard/users/bob"
    monkeypatch.setenv("HOME", home)
    return home


@pytest.mark.parametrize("fmt", RUN_FORMATS)
def test_the_run_report_names_the_checkpoint_and_shows_no_local_path(
    fmt: str,
    tmp_path: Path,
    user_home: str,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
) -> None:
    evidence = _evidence(tmp_path, user_home, make_row, make_matrix)
    text = render_run_report(evidence, fmt)  # type: ignore[arg-type]
    assert _leaks(text, HOME, user_home, str(tmp_path), REPO) == []
    assert SHOWN in text
    assert CHECKPOINT not in text


def test_the_model_column_serve_command_and_curl_name_the_checkpoint(
    tmp_path: Path,
    user_home: str,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
) -> None:
    view = run_report_view(_evidence(tmp_path, user_home, make_row, make_matrix))
    blocks = [b for s in view.sections for b in s.blocks]
    tables = {b.title: b for b in blocks if isinstance(b, Table)}
    code = {b.title: b.text for b in blocks if isinstance(b, Code)}
    revisions = tables["Revisions under test"]
    model = revisions.headers.index("model")
    assert [r[model] for r in revisions.rows] == [SHOWN]
    serve = code["Recipe #1: serve command"]
    assert f"vllm serve {SHOWN} --omni" in serve
    assert "--download-dir hf " in serve
    assert "--deploy-config sd3.yaml" in serve
    assert f'"model": "{SHOWN}"' in code["Recipe #1: request (t2i via images-generations)"]
    # A file inside the checkpoint keeps its place in it; any other path keeps its last part.
    reasons = "; ".join(cell for row in view.verdict_reasons.rows for cell in row)
    assert f"loader read {SHOWN}/transformer/config.json" in reasons
    assert "scratch left in step-3" in reasons
    # A cell too short for the reason is cut after its paths were shortened, never inside one.
    assert "first: loader read config.json" in "; ".join(view.verdicts.rows[0])


def test_every_table_exported_as_csv_is_free_of_local_paths(
    tmp_path: Path,
    user_home: str,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
) -> None:
    files = csv_files(run_report_view(_evidence(tmp_path, user_home, make_row, make_matrix)))
    assert files
    for name, text in files.items():
        assert _leaks(text, HOME, user_home, str(tmp_path), REPO) == [], name


def test_rendered_matrices_and_their_diff_show_no_local_path(
    tmp_path: Path,
    user_home: str,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
) -> None:
    matrix = _evidence(tmp_path, user_home, make_row, make_matrix).matrix
    wider = matrix.model_copy(
        update={
            "rows": (
                *matrix.rows,
                make_row(
                    CellState.NOT_TESTED,
                    axes={"model": "qwen"},
                    note=f"cache in {user_home}/.cache",
                ),
            )
        }
    )
    outputs = {
        "matrix.md": render_matrix(wider, "md"),
        "matrix.html": render_matrix(wider, "html"),
        **{str(p): html for p, html in render_matrix_pages(wider, page_rows=1).items()},
        "diff.md": render_diff(diff_matrices(matrix, wider), "md"),
        "diff.json": render_diff(diff_matrices(matrix, wider), "json"),
    }  # fmt: skip
    assert len(outputs) > 5  # the paged form really has pages
    for name, text in outputs.items():
        assert _leaks(text, HOME, user_home, str(tmp_path), REPO) == [], name
    assert "Evidence directories: evidence" in outputs["matrix.md"]


def test_the_feature_support_tables_show_no_local_path(user_home: str) -> None:
    from omniqual.report.support_document import render_support_tables
    from tests.unit.report import support_fixtures as sf

    limited = sf.row(
        CellState.LIMITED,
        limitation=f"only with the cache in {user_home}/.cache/dit",
        reasons=(f"bounded by {CHECKPOINT}/scheduler",),
        cache_policy="cache_dit",
    )
    text = render_support_tables(sf.matrix(sf.row(CellState.VALIDATED), limited), sf.MAPPING)
    assert "only with the cache in dit" in text  # the limitation is there, without its path
    assert _leaks(text, HOME, user_home, REPO) == []
