"""``gate run --target URL`` records only on rows the deployment is
(scripted checks, no sockets)."""

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.single_gate import AmbiguousTarget, run_single_gate
from omniqual.engine.targets.served_identity import ServedIdentity
from tests.fakes import checks
from tests.fakes.projects import make_project

URL = "http://127.0.0.1:9"


def _served(monkeypatch: pytest.MonkeyPatch, *ids: str, root: str | None = None) -> None:
    async def identify(url: str) -> ServedIdentity:
        roots = (root,) if root else ()
        endpoints = {"images-generations": True, "videos-async": False}
        return ServedIdentity(url, ids, roots, endpoints, "0.30.0", UNKNOWN, UNKNOWN)

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Rows of two models; each model's deployment is one recipe."""
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    (root / "runners" / "other.yaml").write_text(
        "id: other\ndescription: another model's deployment\nkind: url\n"
        f"url: {URL}\nmodel: org/other-model\n"
        "row: {model: other, quantization: none, hardware: cpu}\n"
    )
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, quantization: none}\nrows:\n"
        "  - key: {model: m, task: t2i}\n    recipe: live\n    requires: [good]\n"
        "  - key: {model: m, task: t2v}\n    recipe: live\n    requires: [good]\n"
        "  - key: {model: other, task: t2i}\n    recipe: other\n    requires: [good]\n"
    )
    return root


def _run(row: str = "") -> list[str]:
    results = asyncio.run(
        run_single_gate("good", URL, row, matrix=Path("matrices/m.yaml"),
                        evidence_root=Path("runs"), command=["t"])
    )  # fmt: skip
    return sorted(r.row for r in results)


def test_a_url_result_lands_only_on_the_served_models_rows(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _served(monkeypatch, "m")
    assert _run() == [
        "model=m;task=t2i;quantization=none;hardware=cpu",
        "model=m;task=t2v;quantization=none;hardware=cpu",
    ]
    assert all(row.startswith("model=m;") for _, row in checks.CALLS)


def test_a_served_path_matches_the_recipes_model_by_its_directory(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _served(monkeypatch, "/data/models/other-model", root="/data/models/other-model")
    assert _run() == ["model=other;task=t2i;quantization=none;hardware=cpu"]


def test_a_url_serving_no_rows_model_records_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _served(monkeypatch, "stabilityai/stable-audio-open-1.0")
    with pytest.raises(ValueError, match=r"serves stabilityai/stable-audio-open-1\.0.*nothing"):
        _run()
    assert checks.CALLS == []


def test_rows_of_several_deployments_stop_with_the_candidates(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "runners" / "live-fp8.yaml").write_text(
        f"id: live-fp8\ndescription: d\nkind: url\nurl: {URL}\n"
        "row: {model: m, quantization: fp8, hardware: cpu}\n"
    )
    with (project / "matrices" / "m.yaml").open("a") as handle:
        handle.write(
            "  - key: {model: m, task: t2i, quantization: fp8}\n"
            "    recipe: live-fp8\n    requires: [good]\n"
        )
    _served(monkeypatch, "m")
    with pytest.raises(AmbiguousTarget) as caught:
        _run()
    message = str(caught.value)
    assert "recipe live (2 rows): --row quantization=none" in message
    assert "recipe live-fp8 (1 row): --row quantization=fp8" in message
    assert checks.CALLS == []
    # --row names the deployment: then only its rows are recorded.
    assert _run("quantization=none") == [
        "model=m;task=t2i;quantization=none;hardware=cpu",
        "model=m;task=t2v;quantization=none;hardware=cpu",
    ]


def test_a_row_whose_endpoint_is_missing_is_not_that_deployment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    axes = project / "matrices" / "axes.yaml"
    axes.write_text(
        axes.read_text().replace(
            "provenance:",
            "  - name: api_mode\n    description: api\n"
            "    values: [{name: images-generations}, {name: videos-async}]\nprovenance:",
        )
    )
    (project / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, quantization: none, model: m}\nrows:\n"
        "  - key: {task: t2i, api_mode: images-generations}\n    recipe: live\n"
        "    requires: [good]\n"
        "  - key: {task: t2v, api_mode: videos-async}\n    recipe: live\n    requires: [good]\n"
    )
    _served(monkeypatch, "m")
    assert _run() == ["model=m;task=t2i;quantization=none;hardware=cpu;api_mode=images-generations"]


def test_a_url_result_carries_what_the_server_reported(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _served(monkeypatch, "m")
    results = asyncio.run(
        run_single_gate("good", URL, "task=t2i", matrix=Path("matrices/m.yaml"),
                        evidence_root=Path("runs"), command=["t"])
    )  # fmt: skip
    (result,) = results
    provenance = result.provenance
    assert provenance.source == "reported" and provenance.target_host == "not-visible"
    assert provenance.model == "m" and provenance.vllm_version == "0.30.0"
    assert provenance.vllm_omni_version == UNKNOWN and provenance.checkpoint_sha256 == UNKNOWN
    assert provenance.serve_config_sha256 == UNKNOWN and provenance.serve_argv == ()


def test_a_gate_that_decides_no_row_runs_on_rows_that_do_not_list_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A comparison run on request: no row lists it, `gate run` still runs it on the rows asked.
    (project / "gates" / "compare.yaml").write_text(
        "id: compare\nkind: scripted\nversion: 1\ndecides_rows: false\n")  # fmt: skip
    _served(monkeypatch, "m")
    results = asyncio.run(
        run_single_gate("compare", URL, "task=t2i", matrix=Path("matrices/m.yaml"),
                        evidence_root=Path("runs"), command=["t"])
    )  # fmt: skip
    assert [r.row for r in results] == ["model=m;task=t2i;quantization=none;hardware=cpu"]
    assert [r.gate_id for r in results] == ["compare"]
