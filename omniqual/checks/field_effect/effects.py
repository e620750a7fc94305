"""SKILL G0-23: a model-specific field is never assumed to work. Each field that should change
the output is sent at a second legal value (same seed, everything else the probe's) and its
answer is held against the baseline's first answer: outputs that differ beyond the server's own
spread show the field acts; outputs within it fail the gate naming the field, which the server
silently ignores. A refused or failed request decides nothing about the field (invalid)."""

from omniqual.checks.api_contract.cases import render_value
from omniqual.checks.field_effect.answers import Answer
from omniqual.checks.field_effect.judge import Spread, beyond
from omniqual.checks.field_effect.session import EndpointRun
from omniqual.checks.field_effect.values import FieldChange, effect_plan
from omniqual.domain.outcomes import GateOutcome


def _shown(change: FieldChange, before: bool) -> str:
    value = change.before if before else change.after
    if before and value is None:
        return "omitted"
    return render_value(change.field, value)


async def judge_effects(run: EndpointRun, baseline: Answer, spread: Spread) -> None:
    plan = effect_plan(run.endpoint)
    findings, api_mode = run.findings, run.api_mode
    for exempt in plan.exempt:
        run.record.exempt[exempt.field] = exempt.reason
        findings.case(
            f"{api_mode}/effect/{exempt.field}",
            api_mode,
            exempt.field,
            "not sent",
            "exempt (effect: none)",
            "not sent",
            GateOutcome.SKIPPED,
            exempt.reason,
        )
    for change in plan.changes:
        label = f"{change.field}={_shown(change, True)} vs {_shown(change, False)}"
        answer = await run.ask(change.values, f"{change.field}={_shown(change, False)}")
        pair = run.compare(label, baseline, answer)
        case_id = f"{api_mode}/effect/{change.field}"
        expected = "outputs differ beyond the baseline's spread"
        if pair.problem is not None:
            run.record.add(pair, "undecided")
            findings.invalid.append(
                f"undecided_field: {api_mode} {change.field}: {label} "
                f"(same seed) could not be compared: {pair.problem}"
            )
            findings.case(
                case_id,
                api_mode,
                change.field,
                label,
                expected,
                pair.describe(),
                GateOutcome.INVALID,
            )
            continue
        if beyond(pair, spread, run.thresholds.margin_db):
            run.record.add(pair, "acts")
            findings.case(
                case_id,
                api_mode,
                change.field,
                label,
                expected,
                pair.describe(),
                GateOutcome.PASSED,
            )
            continue
        run.record.add(pair, "ignored")
        findings.failures.append(
            f"ignored_field: {api_mode} {change.field}: {label} (same seed) gave "
            f"{pair.describe()}, within the baseline's own spread ({spread.describe()}): the "
            "server silently ignores the field"
        )
        findings.case(
            case_id,
            api_mode,
            change.field,
            label,
            expected,
            pair.describe(),
            GateOutcome.FAILED,
            "the field changes nothing",
        )
