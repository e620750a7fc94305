"""SKILL G0-03: served defaults equal the official ones. The probe with every field that has an
official default left out is held against the same request stating each at that default (the
contract's ``default:``): equal within the baseline's spread passes every such field at once.
Where they differ, the default request is first sent again (a difference that request's own
noise explains is no finding: invalid), then each field is stated alone against the omitted
request (the bisection): each that changes the output has a served default other than the
official one and fails naming it. Fields without a declared default are recorded, not checked.

A default the served release declares to differ (a deviation naming its case) is left out of the
joint request and stated alone from the start: stated together it would make the joint request
differ and send every other field through the bisection, at the official shape each time (on
SD3 ten requests of 1024x1024 and 28 steps where four decide the same)."""

from omniqual.checks.api_contract.cases import render_value
from omniqual.checks.api_contract.judge import covering
from omniqual.checks.field_effect.answers import Answer, Pair
from omniqual.checks.field_effect.judge import Spread, beyond, widened
from omniqual.checks.field_effect.session import EndpointRun
from omniqual.checks.field_effect.values import DefaultsPlan, defaults_plan
from omniqual.domain.contract import Deviation, FieldContract
from omniqual.domain.outcomes import GateOutcome

NO_DEFAULT = "no-default"
EXPECTED = "equal within the baseline's spread"


async def judge_defaults(run: EndpointRun, spread: Spread) -> None:
    plan = defaults_plan(run.endpoint)
    findings, api_mode = run.findings, run.api_mode
    run.record.defaults_unknown = plan.unknown
    for name in plan.unknown:
        findings.case(
            f"{api_mode}/default/{name}",
            api_mode,
            name,
            "not stated",
            "an official default to compare",
            NO_DEFAULT,
            GateOutcome.SKIPPED,
            "no official default in the contract: not checked",
        )
    if not plan.defaulted:
        return
    declared = tuple(spec for spec in plan.defaulted
                     if _declared(run, f"{api_mode}/default/{spec.name}") is not None)  # fmt: skip
    joint = tuple(spec for spec in plan.defaulted if spec not in declared)
    omitted = await run.ask(plan.omitted, "defaults omitted")
    if not joint:
        await bisect_defaults(run, plan, declared, omitted, spread, joint_differs=False)
        return
    stated_values = {**plan.omitted, **{spec.name: spec.default for spec in joint}}
    stated = await run.ask(stated_values, "defaults stated")
    together = run.compare("defaults omitted vs stated", omitted, stated)
    case_id, sent = f"{api_mode}/defaults", _joint_sent(declared)
    if _undecided(run, together, case_id, sent):
        return
    if not beyond(together, spread, run.thresholds.margin_db):
        run.record.add(together, "equal")
        findings.case(
            case_id, api_mode, None, sent, EXPECTED, together.describe(), GateOutcome.PASSED
        )
        for spec in joint:
            findings.case(
                f"{api_mode}/default/{spec.name}",
                api_mode,
                spec.name,
                f"{spec.name}={render_value(spec.name, spec.default)}",
                EXPECTED,
                "equal",
                GateOutcome.PASSED,
                "stated with every other default",
            )
        if declared:
            await bisect_defaults(run, plan, declared, omitted, spread, joint_differs=False)
        return
    run.record.add(together, "differ")
    findings.case(case_id, api_mode, None, sent, EXPECTED, together.describe(), GateOutcome.FAILED)
    await bisect_defaults(run, plan, plan.defaulted, omitted, spread, joint_differs=True)


def _joint_sent(declared: tuple[FieldContract, ...]) -> str:
    if not declared:
        return "every official default: omitted vs stated"
    names = ", ".join(spec.name for spec in declared)
    return f"every official default but those declared to differ ({names}): omitted vs stated"


async def bisect_defaults(
    run: EndpointRun,
    plan: DefaultsPlan,
    fields: tuple[FieldContract, ...],
    omitted: Answer,
    spread: Spread,
    *,
    joint_differs: bool,
) -> None:
    """State each of ``fields`` alone against the omitted request; name each that differs.
    ``joint_differs``: the joint request differed, so some field must (else a joint failure)."""
    findings, api_mode = run.findings, run.api_mode
    again = await run.ask(plan.omitted, "defaults omitted again")
    repeat = run.compare("defaults omitted, twice", omitted, again)
    if _undecided(run, repeat, f"{api_mode}/defaults/repeat", "the default request, twice"):
        return
    noise = widened(spread, repeat, run.thresholds.reproducible_db)
    if isinstance(noise, str):
        run.record.add(repeat, "not reproducible")
        findings.invalid.append(
            f"not_reproducible: {api_mode} (the request of official defaults): {noise}"
        )
        return
    run.record.add(repeat, "reproducible")
    differing: list[str] = []
    undecided = False
    for spec in fields:
        shown = f"{spec.name}={render_value(spec.name, spec.default)}"
        answer = await run.ask({**plan.omitted, spec.name: spec.default}, shown)
        pair = run.compare(f"{spec.name} omitted vs {shown}", omitted, answer)
        case_id = f"{api_mode}/default/{spec.name}"
        if _undecided(run, pair, case_id, f"{spec.name} omitted vs {shown}"):
            undecided = True
            continue
        if not beyond(pair, noise, run.thresholds.margin_db):
            run.record.add(pair, "equal")
            findings.case(
                case_id, api_mode, spec.name, shown, EXPECTED, pair.describe(), GateOutcome.PASSED
            )
            _stale(run, case_id)
            continue
        differing.append(spec.name)
        run.record.add(pair, "differ")
        declared = _declared(run, case_id)
        if declared is not None:
            note = f"declared deviation of {run.release}: {declared.reason}"
            findings.limitations.append(f"declared deviation: {case_id}: {declared.reason}")
            findings.case(case_id, api_mode, spec.name, shown, EXPECTED, pair.describe(),
                          GateOutcome.FAILED, note, deviation=True)  # fmt: skip
            continue
        findings.failures.append(
            f"default_differs: {api_mode} {spec.name}: left out vs stated at the official "
            f"default {render_value(spec.name, spec.default)} (same seed) gave "
            f"{pair.describe()}, beyond the server's own spread ({noise.describe()}): the "
            "served default is not the official one"
        )
        findings.case(
            case_id,
            api_mode,
            spec.name,
            shown,
            EXPECTED,
            pair.describe(),
            GateOutcome.FAILED,
            "the served default is not the official one",
        )
    if joint_differs and not differing and not undecided:
        names = ", ".join(spec.name for spec in fields)
        findings.failures.append(
            f"default_differs: {api_mode}: every official default stated together changes the "
            f"output, yet no one of them alone does (jointly: {names})"
        )


DEFECT = "default_differs"
"""What a declaration of a served default that is not the official one names
(``observed_status: 200``, ``observed_defect: default_differs``)."""


def _declared(run: EndpointRun, case_id: str) -> Deviation | None:
    """The served release's declaration of this differing default, if it made one."""
    return next((d for d in covering(run.deviations, run.release, case_id)
                 if d.observes(200, "", DEFECT)), None)  # fmt: skip


def _stale(run: EndpointRun, case_id: str) -> None:
    """A default declared to differ that is the official one again fails: the declaration would
    otherwise keep the row limited for a defect that is gone."""
    if _declared(run, case_id) is not None:
        run.findings.failures.append(
            f"stale deviation: upstream fixed it? {case_id}: the served default is the official "
            f"one again where {run.release} was declared to differ; remove the declaration"
        )


def _undecided(run: EndpointRun, pair: Pair, case_id: str, sent: str) -> bool:
    if pair.problem is None:
        return False
    run.record.add(pair, "undecided")
    run.findings.invalid.append(f"undecided_default: {run.api_mode}: {sent}: {pair.problem}")
    run.findings.case(
        case_id, run.api_mode, None, sent, EXPECTED, pair.describe(), GateOutcome.INVALID
    )
    return True
