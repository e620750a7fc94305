"""The main job's tour against the matrix it qualifies: the rows it says it qualifies in full get
every gate their matrix row requires, and which rows it qualifies in full or only samples comes
from its plan, never from a list kept by hand."""

from pathlib import Path

import pytest

from omniqual.domain.axes import RowKey
from omniqual.engine.matrix_service import ProjectMatrix, load_project_matrix
from omniqual.engine.run.campaign_scope import rows_reached
from omniqual.engine.run.plan import Plan, in_parts, make_plan, wanted_gates
from omniqual.specs.campaign import LoadedCampaign, load_campaign
from omniqual.specs.recipes import load_recipes
from tests.fakes.projects import make_project

ROOT = Path(__file__).resolve().parents[3]
TOUR = ROOT / "examples" / "embedded-cpu-tour.yaml"
SD3_BASELINE = RowKey.parse(
    "model=sd3-tiny;task=t2i;api_mode=images-generations;output_transport=b64-json;"
    "execution=serial/1;dtype=bf16;offload=resident;quantization=none;cache_policy=none;"
    "topology=1-device;adapter=none"
)
"""The row the tour (and the README) says it qualifies in full: the SD3 baseline."""
SD3_LORA = RowKey.parse(
    "model=sd3-tiny;api_mode=images-generations;execution=serial/1;adapter=request-lora"
)
"""Its per-request LoRA row, on the same server: the tour qualifies it in full too."""


def _tour() -> tuple[LoadedCampaign, ProjectMatrix, Plan]:
    loaded = load_campaign(TOUR)
    project = load_project_matrix(loaded.matrix_path)
    recipes = load_recipes(project.project.runners)
    plan = make_plan(project, recipes, loaded.selector, loaded.campaign.gates, loaded.parts)
    return loaded, project, plan


def _spec_of(project: ProjectMatrix, key: str) -> tuple[str, ...]:
    (row,) = [r for r in project.matrix.rows if str(r.key) == key]
    return row.spec.requires


def test_the_tour_runs_every_gate_the_sd3_baseline_row_requires() -> None:
    loaded, project, _ = _tour()
    (row,) = [r for r in project.matrix.rows if _same_row(r.key, SD3_BASELINE)]
    assert loaded.selector.matches(row.key)
    missing = [g for g in row.spec.requires if not in_parts(row.key, g, loaded.parts)]
    assert missing == [], f"the tour leaves out {missing} of the SD3 baseline row"


def test_every_row_the_tour_qualifies_in_full_gets_every_gate_it_requires() -> None:
    _, project, plan = _tour()
    reached = rows_reached(plan, project)
    full = [r for r in reached if r.full]
    # The matrix's own keys: they answer the axes a key's string form leaves on their default.
    keys = {str(r.key): r.key for r in project.matrix.rows}
    assert any(_same_row(keys[r.row], SD3_BASELINE) for r in full)
    assert any(_same_row(keys[r.row], SD3_LORA) for r in full)
    for row in full:
        requires = _spec_of(project, row.row)
        assert set(requires) <= set(row.ran), (row.row, set(requires) - set(row.ran))
        assert row.left_out == ()
    # A row it only samples runs some of its gates and names the rest.
    sampled = [r for r in reached if not r.full]
    assert sampled, "the tour samples the SD3 family's candidates and other modalities"
    for row in sampled:
        assert row.ran and row.left_out and not set(row.ran) & set(row.left_out)


def test_rows_reached_follows_the_plan_not_a_list() -> None:
    _, project, plan = _tour()
    by_row = {r.row: r for r in rows_reached(plan, project)}
    planned = {str(item.row) for work in plan.work for item in work.items}
    assert set(by_row) == planned
    for key, row in by_row.items():
        (spec,) = [r.spec for r in project.matrix.rows if str(r.key) == key]
        assert set(row.ran) | set(row.left_out) <= set(wanted_gates(spec))
        assert row.full == (not dict(plan.left_out).get(key))


def test_a_campaign_narrowed_by_gates_samples_the_rows_whose_other_gates_it_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, monkeypatch)
    (root / "only-good.yaml").write_text("name: g\nmatrix: matrices/m.yaml\ngates: [good]\n")
    loaded = load_campaign(root / "only-good.yaml")
    project = load_project_matrix(loaded.matrix_path)
    plan = make_plan(project, load_recipes(project.project.runners), loaded.selector,
                     loaded.campaign.gates, loaded.parts)  # fmt: skip
    t2v = "model=m;task=t2v;quantization=none;hardware=cpu"
    # The plan's own "left out" counts only what `include` parts skip: it cannot tell.
    assert dict(plan.left_out).get(t2v) is None
    by_row = {r.row: r for r in rows_reached(plan, project)}
    assert by_row["model=m;task=t2i;quantization=none;hardware=cpu"].full
    assert (by_row[t2v].full, by_row[t2v].ran, by_row[t2v].left_out) == (False, ("good",), ("bad",))


def _same_row(key: RowKey, wanted: RowKey) -> bool:
    """The matrix's row whose axes include every one ``wanted`` names (defaults fill the rest)."""
    return all(key.get(axis) == value for axis, value in wanted.as_dict().items())
