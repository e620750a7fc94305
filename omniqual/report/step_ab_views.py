"""The step-ab gate's result as table rows: one per arm (its repetitions' figures and mean) and
the comparison line (the change, its interval, the hypothesis's threshold and the
recommendation). A pure view of ``effective["step_ab"]``; it judges nothing."""

from collections.abc import Mapping

from omniqual.domain.result import GateResult

ARM_HEADER = ("arm", "recipe", "repetitions", "figure (s) per repetition", "mean (s)")


def _num(value: object, fmt: str) -> str:
    return format(value, fmt) if isinstance(value, int | float) else "-"


def step_ab_rows(result: GateResult) -> list[tuple[str, ...]]:
    """One row per arm, step first; [] for a result without a step-ab block."""
    block = result.effective.get("step_ab")
    if not isinstance(block, Mapping):
        return []
    arms, recipes = block.get("arms"), block.get("recipes")
    if not isinstance(arms, Mapping):
        return []
    rows: list[tuple[str, ...]] = []
    for arm in ("step", "request"):
        reps = arms.get(arm)
        values = [r.get("value") for r in reps if isinstance(r, Mapping)] if isinstance(
            reps, list) else []  # fmt: skip
        numbers = [v for v in values if isinstance(v, int | float)]
        mean = sum(numbers) / len(numbers) if numbers else None
        recipe = recipes.get(arm, "-") if isinstance(recipes, Mapping) else "-"
        shown = ", ".join(_num(v, ".3f") for v in values) or "-"
        rows.append((arm, str(recipe), str(len(values)), shown, _num(mean, ".3f")))
    return rows


def step_ab_summary(result: GateResult) -> str:
    """The comparison in one sentence, or "" when there is none."""
    block = result.effective.get("step_ab")
    if not isinstance(block, Mapping):
        return ""
    c = block.get("comparison")
    threshold = block.get("min_improvement")
    head = f"{block.get('hypothesis', '?')}: "
    if not isinstance(c, Mapping):
        reasons = block.get("reasons")
        why = "; ".join(map(str, reasons)) if isinstance(reasons, list) else ""
        return head + f"no comparison ({why})"
    limit = f"-{threshold:.0%}" if isinstance(threshold, int | float) else "?"
    text = (f"step mode {_num(c.get('change'), '+.1%')} against request mode, interval "
            f"[{_num(c.get('low'), '+.1%')}, {_num(c.get('high'), '+.1%')}], needed {limit} "
            f"or better: {c.get('decision', '?')}")  # fmt: skip
    recommendation = block.get("recommendation")
    return head + text + (f"; {recommendation}" if recommendation else "; inconclusive")
