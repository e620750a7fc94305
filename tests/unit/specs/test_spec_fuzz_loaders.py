"""Spec fuzz, one test per loader: every mutated shipped spec (and free-form YAML) loads or gives a
located SpecError (the oracle and inputs are in ``test_spec_fuzz.py``)."""

import math
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from omniqual.domain.axes import AxisCatalog
from omniqual.domain.contract import ModelContract
from omniqual.domain.feature_tables import FeatureTableMap
from omniqual.domain.load_mapping import LoadMappingSpec
from omniqual.domain.matrix import LoadedMatrix
from omniqual.engine.run.gate_runner import check_params
from omniqual.specs.campaign import LoadedCampaign, load_campaign
from omniqual.specs.contracts import load_contract
from omniqual.specs.feature_tables import FEATURES_FILE, load_feature_tables
from omniqual.specs.gates import load_gates
from omniqual.specs.matrix import load_catalog, load_matrix
from omniqual.specs.perf_baseline import PerfBaseline, load_baseline
from omniqual.specs.recipes import RecipeBook, load_recipes
from omniqual.specs.source import SpecError, load_spec
from tests.unit.specs.test_spec_fuzz import REPO, free_form, fuzz, load_or_error, mutated, shipped

AXES = REPO / "matrices" / "axes.yaml"


@cache
def catalog() -> AxisCatalog:
    return load_catalog(AXES)


@cache
def gate_ids() -> dict[str, object]:
    return dict(load_gates(REPO / "gates", catalog()))


def load_gate_file(path: Path) -> object:
    """A gate spec as a run reads it: the spec, then its params against its check kind."""
    gates = load_gates(path.parent, catalog(), project_root=REPO)
    return [check_params(gate) for gate in gates.values()]


def load_matrix_file(path: Path) -> LoadedMatrix:
    return load_matrix(path, gate_ids())


def load_mapping_file(path: Path) -> LoadMappingSpec:
    return load_spec(path, LoadMappingSpec)[0]


def load_recipe_file(path: Path) -> RecipeBook:
    return load_recipes(path.parent)


def _project(tmp_path: Path) -> Path:
    """A scratch project beside the fuzzed file: the axes, and the campaigns' siblings."""
    if not (tmp_path / "matrices" / "axes.yaml").is_file():
        (tmp_path / "matrices").mkdir()
        shutil.copy(AXES, tmp_path / "matrices" / "axes.yaml")
        shutil.copytree(REPO / "examples", tmp_path / "examples")
    return tmp_path


LOADERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    # name: (where the fuzzed file goes in the scratch project, its loader)
    "gates": ("gates/gate.yaml", load_gate_file),
    "contracts": ("contracts/{source}", load_contract),
    "load_mappings": ("load-mappings/mapping.yaml", load_mapping_file),
    "perf_baselines": ("perf-baselines/{source}", load_baseline),
    "campaigns": ("examples/{source}", load_campaign),
    "matrices": ("matrices/embedded-cpu.yaml", load_matrix_file),
    "axes": ("axes/axes.yaml", load_catalog),
    "feature_tables": (f"matrices/{FEATURES_FILE}", load_feature_tables),
    "recipes": ("runners/recipe.yaml", load_recipe_file),
}


def run(tmp_path: Path, name: str, source: Path, content: bytes) -> object:
    where, load = LOADERS[name]
    path = _project(tmp_path) / where.format(source=source.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return load_or_error(lambda: load(path))


@fuzz("gates")
@given(case=mutated(shipped("gates/*.yaml")))
def test_gate_specs(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    loaded = run(tmp_path, "gates", *case)
    assert isinstance(loaded, (list, SpecError))


@fuzz("contracts")
@given(case=mutated(shipped("gates/contracts/*.yaml")))
def test_contracts(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    loaded = run(tmp_path, "contracts", *case)
    if isinstance(loaded, ModelContract):
        for endpoint in loaded.endpoints:
            for field in endpoint.fields:
                floats = [v for v in (field.min, field.max) if isinstance(v, float)]
                assert all(math.isfinite(v) for v in floats), field
    else:
        assert isinstance(loaded, SpecError)


@fuzz("load_mappings")
@given(case=mutated(shipped("gates/load-mappings/*.yaml")))
def test_load_mappings(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "load_mappings", *case), (LoadMappingSpec, SpecError))


@fuzz("perf_baselines")
@given(case=mutated(shipped("gates/perf-baselines/*.yaml")))
def test_perf_baselines(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    loaded = run(tmp_path, "perf_baselines", *case)
    if isinstance(loaded, PerfBaseline):
        # A baseline judges runs by comparison: a NaN or infinite number would judge nothing.
        evidence = loaded.evidence
        numbers = [loaded.threshold, evidence.mean, evidence.stdev, *evidence.repetitions]
        numbers += [launch.mean for launch in evidence.launches]
        assert all(math.isfinite(x) for x in numbers), numbers
    else:
        assert isinstance(loaded, SpecError)


@fuzz("campaigns")
@given(case=mutated(shipped("examples/embedded-cpu*.yaml")))
def test_campaigns(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "campaigns", *case), (LoadedCampaign, SpecError))


@fuzz("matrices")
@given(case=mutated(shipped("matrices/embedded-cpu.yaml")))
def test_matrices(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "matrices", *case), (LoadedMatrix, SpecError))


@fuzz("axes")
@given(case=mutated(shipped("matrices/axes.yaml")))
def test_axes_catalog(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "axes", *case), (AxisCatalog, SpecError))


@fuzz("feature_tables")
@given(case=mutated(shipped(f"matrices/{FEATURES_FILE}")))
def test_feature_tables(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "feature_tables", *case), (FeatureTableMap, SpecError))


@fuzz("recipes")
@given(case=mutated(shipped("runners/*/*.yaml")))
def test_launch_recipes(tmp_path: Path, case: tuple[Path, bytes]) -> None:
    assert isinstance(run(tmp_path, "recipes", *case), (RecipeBook, SpecError))


KEYS = ("id", "kind", "version", "params", "model", "endpoints", "rows", "products", "axes",
        "name", "matrix", "pipeline_classes", "components", "evidence", "sections", "columns",
        "description", "defaults", "key", "requires", "schema_version")  # fmt: skip


@fuzz("free_form")
@given(name=st.sampled_from(sorted(LOADERS)), content=free_form(KEYS))
def test_free_form_yaml(tmp_path: Path, name: str, content: bytes) -> None:
    source = shipped("gates/contracts/sd3-tiny.yaml")[0]
    if name in ("perf_baselines", "campaigns"):
        source = Path(f"{name}.yaml")
    run(tmp_path, name, source, content)
