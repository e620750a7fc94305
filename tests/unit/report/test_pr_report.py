"""The PR report: scope, gaps that name their gate, evidence links, the hardware recipe with its
curl, the coverage map, a self-contained and escaped HTML page, and the CSV export."""

import csv
import hashlib
import io
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from omniqual.domain.evidence import Artifact, CaseResult, Measurement
from omniqual.domain.matrix import CompiledMatrix, CompiledRow
from omniqual.domain.outcomes import CellState, GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.report.blocks import Code, KeyValues, Table
from omniqual.report.csv_export import csv_files, write_csv
from omniqual.report.render import render_run_report
from omniqual.report.run_views import RunEvidence, run_report_view

ROW = "model=flux;task=t2i;quantization=bf16;hardware=h200"
PROMPT = "a lighthouse at dusk, photorealistic"
EVIL = "<script>alert(1)</script>"


def _evidence(matrix: CompiledMatrix, *results: GateResult, **fields: object) -> RunEvidence:
    base: dict[str, object] = {
        "artifact_dirs": (Path("evidence") / "run-1" / "artifacts",),
        "report_dir": Path("out"),
    }
    base.update(fields)
    return RunEvidence("t", matrix, results=results, **base)  # type: ignore[arg-type]


def _matrix(make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix],
            **axes: str) -> CompiledMatrix:  # fmt: skip
    return make_matrix(make_row(CellState.VALIDATED, axes=axes))


def test_results_on_rows_outside_the_matrix_are_left_out(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    outside = make_result("elsewhere", row="model=other;task=t2i;quantization=bf16;hardware=h200")
    view = run_report_view(_evidence(_matrix(make_row, make_matrix), make_result("g1"), outside))
    assert view.out_of_scope == 1
    assert [row[0] for row in view.verdicts.rows] == ["g1"]
    assert "elsewhere" not in render_run_report(_evidence(_matrix(make_row, make_matrix),
                                                          outside), "md")  # fmt: skip


def test_an_empty_section_names_the_gate_and_rows_that_would_fill_it(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    matrix = make_matrix(make_row(CellState.NOT_TESTED, required_gates=("soak-mixed",)))
    view = run_report_view(_evidence(matrix, gate_kinds={"soak-mixed": "soak"}))
    performance = next(s for s in view.sections if s.number == 6)
    assert performance.empty
    assert performance.empty_note == "no evidence recorded: run gate `soak-mixed` on rows #1"
    output = next(s for s in view.sections if s.number == 7)
    assert "add a gate of kind `isolation` or `output_contract`" in output.empty_note
    assert "run gate `soak-mixed` on rows #1" in render_run_report(
        _evidence(matrix, gate_kinds={"soak-mixed": "soak"}), "md"
    )


def test_every_figure_row_links_its_record(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    result = make_result("perf", "load", measurements=(
        Measurement(name="latency_p95", value=1.5, unit="s", samples=20),),
        artifacts=(Artifact(sha256="a" * 64, size=3, media_type="text/plain", role="log",
                            name="server.log"),))  # fmt: skip
    evidence = _evidence(_matrix(make_row, make_matrix), result)
    view = run_report_view(evidence)
    journal = "../evidence/run-1/journal.jsonl#res-perf"
    measurements = next(b for s in view.sections if s.number == 6 for b in s.blocks
                        if b.title == "Measurements")  # fmt: skip
    assert isinstance(measurements, Table) and measurements.links == (journal,)
    artifacts = next(b for s in view.sections for b in s.blocks if b.title.startswith("Artifacts"))
    assert isinstance(artifacts, Table)
    assert artifacts.links == ("../evidence/run-1/artifacts/" + "a" * 64,)
    assert view.verdicts.links == (journal,)
    assert f"[record]({journal})" in render_run_report(evidence, "md")
    assert f'<a class="ev" href="{journal}">1500</a>' in render_run_report(evidence, "html")  # ms


@pytest.mark.parametrize(
    ("api_mode", "task", "endpoint"),
    [
        ("images-generations", "t2i", "/v1/images/generations"),
        ("chat-completions", "t2i", "/v1/chat/completions"),
        ("images-edits", "i2i", "/v1/images/edits"),
        ("videos-async", "t2v", "/v1/videos"),
        ("videos-sync", "i2v", "/v1/videos/sync"),
        ("audio-generate", "t2a", "/v1/audio/generate"),
    ],
)
def test_recipe_has_the_serve_command_one_curl_and_no_prompt(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
    api_mode: str,
    task: str,
    endpoint: str,
) -> None:
    axes = {"api_mode": api_mode, "task": task}
    matrix = make_matrix(make_row(CellState.VALIDATED, axes=axes))
    argv = ("vllm", "serve", "org/model", "--omni", "--port", "8123",
            "--deploy-config", "deploy/h200.yaml", "--api-key", "s3cr3t-value")  # fmt: skip
    result = make_result(
        "g1", row=matrix.rows[0].key, requested={"prompt": PROMPT},
        provenance=Provenance(model="org/model", serve_argv=argv, target_host="not-visible"),
    )  # fmt: skip
    view = run_report_view(_evidence(matrix, result))
    blocks = next(s for s in view.sections if s.number == 4).blocks
    codes = [b for b in blocks if isinstance(b, Code)]
    assert [c.title for c in codes] == ["Recipe #1: serve command",
                                        f"Recipe #1: request ({task} via {api_mode})"]  # fmt: skip
    serve, curl = codes[0].text, codes[1].text
    assert serve.startswith("vllm serve org/model --omni --port 8123") and "s3cr3t" not in serve
    assert curl.count("curl ") >= 1 and f"http://127.0.0.1:8123{endpoint}" in curl
    assert "<your prompt>" in curl and PROMPT not in curl and "org/model" in curl
    recipe = next(b for b in blocks if isinstance(b, KeyValues) and b.title == "Recipe #1")
    items = dict(recipe.items)
    assert items["config files"] == "--deploy-config deploy/h200.yaml"
    assert items["host: gpu"].startswith("not knowable on this host")


DEPLOY_YAML = (
    "# deploy for h200\nstages:\n  - stage_id: 0\n    note: " + EVIL + "\n"
    "    hf_token: hf_abcdefghijklmnopqrstuvwxyz123456\n"
    + "".join(f"  - stage_id: {i}\n" for i in range(1, 80))
)


def _recorded_config(
    tmp_path: Path,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> RunEvidence:
    """A launch whose --deploy-config file was recorded as an artifact in run-1's store."""
    data = DEPLOY_YAML.encode()
    digest = hashlib.sha256(data).hexdigest()
    artifacts = tmp_path / "evidence" / "run-1" / "artifacts"
    artifacts.mkdir(parents=True)
    (artifacts / digest).write_bytes(data)
    matrix = make_matrix(make_row(CellState.VALIDATED, axes={"api_mode": "images-generations"}))
    argv = ("vllm", "serve", "org/model", "--port", "8123",
            "--deploy-config", "/srv/deploy/h200.yaml")  # fmt: skip
    result = make_result(
        "g1", row=matrix.rows[0].key, provenance=Provenance(serve_argv=argv),
        artifacts=(Artifact(sha256=digest, size=len(data), media_type="application/yaml",
                            role="deploy-config", name="h200.yaml"),),
    )  # fmt: skip
    return _evidence(matrix, result, artifact_dirs=(artifacts,), report_dir=tmp_path / "out")


def test_a_recorded_deploy_config_is_shown_escaped_in_html_and_fenced_in_markdown(
    tmp_path: Path,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    evidence = _recorded_config(tmp_path, make_row, make_matrix, make_result)
    digest = hashlib.sha256(DEPLOY_YAML.encode()).hexdigest()
    href = f"../evidence/run-1/artifacts/{digest}"
    blocks = next(s for s in run_report_view(evidence).sections if s.number == 4).blocks
    recipe = next(b for b in blocks if isinstance(b, KeyValues) and b.title == "Recipe #1")
    assert dict(recipe.items)["config files"].startswith(
        f"--deploy-config h200.yaml (recorded, sha256 {digest[:12]}"  # the path: its name
    )
    config = next(b for b in blocks if isinstance(b, Code) and "deploy config" in b.title)
    assert config.link == href and config.language == "yaml"
    assert "stage_id: 79" in config.text and "hf_abcdef" not in config.text  # secret masked

    html = render_run_report(evidence, "html")
    parser = _Tags()
    parser.feed(html)
    assert "script" not in [tag for tag, _ in parser.tags]  # the YAML's <script> stays text
    assert "note: &lt;script&gt;alert(1)&lt;/script&gt;" in html and "hf_abcdef" not in html
    assert "<details><summary>84 lines</summary>" in html and f'<a href="{href}">' in html
    assert "  - stage_id: 79" in html  # HTML shows the whole (short) file

    md = render_run_report(evidence, "md")
    fenced = md.split("```yaml\n", 1)[1].split("\n```", 1)[0]
    assert fenced.splitlines() == config.text.splitlines()[:60]  # bounded, in one yaml fence
    assert f"{EVIL}" in fenced and "hf_abcdef" not in md
    assert "stage_id: 79" not in md  # cut, and it says so, linking the whole file
    assert f"_First 60 of 84 lines shown. The whole file: [artifact]({href})._" in md


def test_a_named_config_without_a_recorded_artifact_is_only_named(
    tmp_path: Path,
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    evidence = _recorded_config(tmp_path, make_row, make_matrix, make_result)
    old = evidence.results[0].model_copy(update={"artifacts": ()})  # an older run: no artifact
    view = run_report_view(_evidence(evidence.matrix, old))
    blocks = next(s for s in view.sections if s.number == 4).blocks
    recipe = next(b for b in blocks if isinstance(b, KeyValues) and b.title == "Recipe #1")
    assert dict(recipe.items)["config files"] == "--deploy-config h200.yaml"  # not its path
    assert not [b for b in blocks if isinstance(b, Code) and "deploy config" in b.title]


def test_the_coverage_map_is_grey_where_the_matrix_has_no_row(
    make_row: Callable[..., CompiledRow], make_matrix: Callable[..., CompiledMatrix]
) -> None:
    matrix = make_matrix(
        make_row(CellState.VALIDATED, axes={"model": "a"}),
        make_row(CellState.LIMITED, axes={"model": "a", "quantization": "fp8"}),
        make_row(CellState.UNSUPPORTED, axes={"model": "b"}),
    )
    cover = run_report_view(_evidence(matrix)).coverage
    assert cover.columns == ("baseline", "quantization=fp8")
    grid = {line.label: [(c.state, c.row) for c in line.cells] for line in cover.lines}
    assert grid == {
        "a": [("validated", 1), ("limited", 2)],
        "b": [("unsupported", 3), ("not tested", None)],
    }
    html = render_run_report(_evidence(matrix), "html")
    absent = 'class="cell state-not-tested cell-absent"'
    assert f'{absent} title="b / quantization=fp8: no row in the matrix"' in html
    assert "| a | 🟩 #1 | 🟨 #2 |" in render_run_report(_evidence(matrix), "md")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _evil_evidence(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> RunEvidence:
    matrix = make_matrix(make_row(CellState.LIMITED, axes={"model": EVIL}, reasons=(EVIL,)))
    result = make_result(
        "g1", "api_contract", row=matrix.rows[0].key, outcome=GateOutcome.FAILED,
        reasons=(EVIL,), provenance=Provenance(model=EVIL, serve_argv=("vllm", "serve", EVIL)),
        cases=(CaseResult(id="c", endpoint="/v1/images/generations", field="size", sent=EVIL,
                          expected_status="400", observed_status="200",
                          outcome=GateOutcome.FAILED, note=EVIL),),
    )  # fmt: skip
    return _evidence(matrix, result)


def test_html_is_escaped_and_self_contained(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    html = render_run_report(_evil_evidence(make_row, make_matrix, make_result), "html")
    parser = _Tags()
    parser.feed(html)
    names = [tag for tag, _ in parser.tags]
    assert "script" not in names and "link" not in names and "iframe" not in names
    assert EVIL in "".join(parser.text)  # shown as text, never as markup
    for tag, attrs in parser.tags:
        for name in ("src", "href", "xlink:href", "data"):
            value = attrs.get(name) or ""
            assert not value.lower().startswith(("http:", "https:", "//", "javascript:")), (
                tag, name, value)  # fmt: skip
            if name == "src" and name in attrs:
                assert value.startswith("data:"), (tag, value)
    assert "@import" not in html and "url(" not in html


def test_markdown_keeps_a_planted_script_inert(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    evidence = _evil_evidence(make_row, make_matrix, make_result)
    for fmt in ("md", "step-summary"):
        text = render_run_report(evidence, fmt)
        outside_code = "".join(text.split("```")[::2])
        assert "<script" not in outside_code


def test_every_table_round_trips_through_csv(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
    tmp_path: Path,
) -> None:
    evidence = _evil_evidence(make_row, make_matrix, make_result)
    view = run_report_view(evidence)
    files = csv_files(view)
    tables = [view.verdicts] + [b for s in view.sections for b in s.blocks
                                if isinstance(b, Table) and b.rows]  # fmt: skip
    assert len(files) == len(tables)
    for (name, text), table in zip(files.items(), tables, strict=True):
        parsed = list(csv.reader(io.StringIO(text)))
        linked = any(table.links)
        assert tuple(parsed[0]) == ((*table.headers, "evidence") if linked else table.headers)
        body = [tuple(r) for r in parsed[1:]]
        expected = [(*row, table.links[i]) if linked else row for i, row in enumerate(table.rows)]
        assert body == expected, name
    written = write_csv(view, tmp_path / "tables")
    assert sorted(p.name for p in written) == sorted(files)
    assert written[0].read_text(encoding="utf-8") == files[written[0].name]


def test_a_small_report_is_not_trimmed_and_the_step_summary_points_at_the_full_one(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    evidence = _evidence(_matrix(make_row, make_matrix), make_result("g1"),
                         full_report="report.html")  # fmt: skip
    md = render_run_report(evidence, "md")
    assert "Trimmed" not in md and md == render_run_report(evidence, "md-full")
    summary = render_run_report(evidence, "step-summary")
    assert "- Full report: report.html" in summary
    assert "| 6 | Raw performance runs and memory traces | no evidence recorded" in summary


def test_markdown_tables_are_contiguous() -> None:
    """A blank line inside a Markdown table ends it: GitHub would show the rest as text."""
    from tests.golden.report_fixtures import run_evidence

    text = render_run_report(run_evidence(), "md-full")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---") or line.startswith("|:-"):
            assert lines[i - 1].startswith("|"), f"separator without its header at line {i}"
    assert "|\n\n|" not in text


def test_ci_tracks_prefer_the_declared_track_and_name_the_ci_levels(
    make_row: Callable[..., CompiledRow],
    make_matrix: Callable[..., CompiledMatrix],
    make_result: Callable[..., GateResult],
) -> None:
    matrix = make_matrix(make_row(CellState.VALIDATED, required_gates=("probe", "soak-x")))
    kinds, tracks = {"soak-x": "soak"}, {"probe": "reliability"}
    evidence = _evidence(matrix, make_result("probe", "custom_probe"), gate_kinds=kinds,
                         gate_tracks=tracks)  # fmt: skip
    ci = next(s for s in run_report_view(evidence).sections if s.number == 9)
    (table,) = ci.blocks
    assert isinstance(table, Table)
    assert [row[:3] for row in table.rows] == [
        ("performance", "L3, L4", "soak-x (inferred from the check kind)"),
        ("reliability", "L5", "probe (declared)"),
    ]
    assert table.rows[0][5] == "soak-x #1" and table.rows[1][3] == "1 of 1"


@pytest.mark.parametrize(
    ("torch", "gpus", "stack", "interconnect"),
    [
        ("2.5.1+cu124", 8, "CUDA 12.4 (torch 2.5.1+cu124)", "not knowable from the fingerprint"),
        ("2.5.1+rocm6.2", 1, "ROCm 6.2 (torch 2.5.1+rocm6.2)", "none (one device or no GPU)"),
        ("2.13.0+cpu", 0, "none: CPU build of torch (2.13.0+cpu)", "none (one device or no GPU)"),
        ("2.5.1", 1, "unknown (not recorded) (torch 2.5.1 names no build)", "none"),
    ],
)
def test_the_target_host_says_what_the_fingerprint_knows(
    torch: str, gpus: int, stack: str, interconnect: str
) -> None:
    from omniqual.domain.run import EnvironmentFingerprint, GpuInfo
    from omniqual.report.recipe_block import host_items

    env = EnvironmentFingerprint(
        hostname_hash="0" * 64, os="Linux", kernel="6", machine="x86_64", cpu_model="cpu",
        cpu_count=2, memory_total_bytes=1 << 30, python="3.11", omniqual_version="0.1.0",
        packages={"torch": torch},
        gpus=tuple(GpuInfo(index=i, name="NVIDIA H200", memory_total_bytes=141 << 30,
                           driver="560.35") for i in range(gpus)),
    )  # fmt: skip
    items = dict(host_items("harness-host", env))
    assert items["cuda / rocm"] == stack
    assert items["interconnect"].startswith(interconnect)
    assert items["driver"] == ("560.35" if gpus else "none")
    assert items["gpu"] == (
        f"{gpus} x NVIDIA H200 141 GiB" if gpus else "none (no GPU on this host)"
    )
