"""The :class:`~omniqual.engine.run.events.PlanReady` event of a run: the gates it will run once a
resumed run's recorded ones are set aside, and how many target launches those gates need. It
follows the campaign's own rule: a launch group starts a server when a gate of it talks to one
and its lead recipe is neither a URL recipe nor overridden by a URL."""

from collections.abc import Mapping, Sequence

from omniqual.checks.registry import measures, resolve, shares_start_ups
from omniqual.domain.recipe import RecipeKind
from omniqual.engine.run.events import PlannedItem, PlanReady
from omniqual.engine.run.plan import DoneKey, PlannedGate, is_done
from omniqual.specs.recipes import LoadedRecipe


def plan_ready(
    work: Sequence[tuple[LoadedRecipe, Sequence[PlannedGate]]],
    groups: Sequence[Sequence[int]],
    done: set[DoneKey],
    urls: Mapping[str, str] | None = None,
    lanes: int = 1,
) -> PlanReady:
    """``groups`` are positions of ``work`` that share one launch (``plan.launch_groups``)."""
    items: list[PlannedItem] = []
    launches = skipped = 0
    for group in groups:
        todo: list[tuple[LoadedRecipe, PlannedGate]] = []
        for position in group:
            recipe, planned = work[position]
            for item in planned:
                if is_done(item, done):
                    skipped += 1
                else:
                    todo.append((recipe, item))
        if not todo:
            continue
        for recipe, item in todo:
            kind = item.gate.spec.kind
            check = resolve(kind)
            items.append(PlannedItem(item.gate.spec.id, kind, str(item.row), recipe.recipe.id,
                                     measures(check), shares_start_ups(check)))  # fmt: skip
        lead = todo[0][0].recipe
        launched = lead.id not in (urls or {}) and lead.kind is not RecipeKind.URL
        if launched and any(resolve(i.gate.spec.kind).needs == "server" for _, i in todo):
            launches += 1
    return PlanReady(tuple(items), launches, skipped, lanes)
