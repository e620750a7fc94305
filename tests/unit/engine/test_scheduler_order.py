"""The order launch groups start in when several run at once: measuring groups spread among
the groups that only start a server and compare outputs (pure: no launches)."""

from pathlib import Path

from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.gate import GateSpec
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.run.plan import PlannedGate
from omniqual.engine.run.scheduler import LaunchGroup, interleaved, measuring
from omniqual.specs.gates import LoadedGate
from omniqual.specs.recipes import LoadedRecipe

KINDS = {"soak": "soak", "parity": "candidate_parity", "contract": "api_contract",
         "refusal": "fails_fast", "sweep": "offload_sweep"}  # fmt: skip


def _group(name: str, *gates: str) -> LaunchGroup:
    recipe = LaunchRecipe(id=name, description="d", kind="url", url="http://h:1")
    row = RowKey((("model", name),))
    specs = [GateSpec(id=g, kind=KINDS[g], version=1) for g in gates]
    planned = [PlannedGate(LoadedGate(s, Path(s.id), "0", Selector.parse("")), row) for s in specs]
    return LaunchGroup([(LoadedRecipe(recipe, Path(name), 1), planned)], None)


def _names(groups: list[LaunchGroup]) -> list[str]:
    return [g.lead.recipe.id for g in groups]


def test_measuring_groups_are_spread_among_the_others_in_plan_order() -> None:
    tour = [
        _group("sd3", "contract", "soak"), _group("wan", "soak"), _group("audio", "contract"),
        _group("step", "refusal"), _group("batch", "parity"), _group("fp8", "parity"),
        _group("nopin", "parity"), _group("fp32", "parity"), _group("offload", "sweep"),
        _group("cache", "parity"),
    ]  # fmt: skip
    assert [measuring(g) for g in tour[:5]] == [True, True, False, True, False]
    assert _names(interleaved(tour)) == [
        "sd3", "audio", "batch", "wan", "fp8", "step", "nopin", "offload", "fp32", "cache",
    ]  # fmt: skip


def test_one_kind_only_keeps_plan_order() -> None:
    light = [_group(n, "parity") for n in ("a", "b", "c")]
    heavy = [_group(n, "soak") for n in ("x", "y")]
    assert _names(interleaved(light)) == ["a", "b", "c"]
    assert _names(interleaved(heavy)) == ["x", "y"]
    assert _names(interleaved([*light, *heavy])) == ["x", "a", "b", "y", "c"]
