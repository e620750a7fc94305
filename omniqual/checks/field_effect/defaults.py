"""SKILL G0-03: served defaults equal the official ones, judged in the groups of
:func:`~omniqual.checks.field_effect.values.defaults_plan`.

A field the probe steers away from its default (size, steps) is judged alone: the probe without
it against the probe stating it at its official default. Where they differ beyond the baseline's
spread, the request without it is sent again (a difference that request's own noise explains is
no finding: invalid); one still beyond fails naming the field.

The other defaulted fields are judged together: the probe without them against the same request
stating each at its default; equal within the baseline's spread passes every such field at once.
Where they differ, the request without them is first sent again, then each field is stated alone
against it (the bisection): each that changes the output has a served default other than the
official one and fails naming it. Fields without a declared default are recorded, not checked.

A default the served release declares to differ (a deviation naming its case) is left out of the
joint request and stated alone from the start: stated together it would make the joint request
differ and send every other field through the bisection."""

from omniqual.checks.api_contract.cases import render_value
from omniqual.checks.api_contract.judge import covering
from omniqual.checks.field_effect.answers import Answer, Pair
from omniqual.checks.field_effect.judge import Spread, beyond, widened
from omniqual.checks.field_effect.session import EndpointRun
from omniqual.checks.field_effect.values import DefaultsGroup, defaults_plan
from omniqual.domain.contract import Deviation, FieldContract
from omniqual.domain.outcomes import GateOutcome

NO_DEFAULT = "no-default"
EXPECTED = "equal within the baseline's spread"
ALONE = "stated alone, every other field at the probe's value"


async def judge_defaults(run: EndpointRun, spread: Spread) -> None:
    plan = defaults_plan(run.endpoint)
    run.record.defaults_unknown = plan.unknown
    for name in plan.unknown:
        run.findings.case(
            f"{run.api_mode}/default/{name}",
            run.api_mode,
            name,
            "not stated",
            "an official default to compare",
            NO_DEFAULT,
            GateOutcome.SKIPPED,
            "no official default in the contract: not checked",
        )
    for group in plan.groups:
        if group.steered:
            await _judge_alone(run, group, spread)
        else:
            await _judge_joint(run, group, spread)


def _shown(spec: FieldContract) -> str:
    return f"{spec.name}={render_value(spec.name, spec.default)}"


def _case_id(run: EndpointRun, spec: FieldContract) -> str:
    return f"{run.api_mode}/default/{spec.name}"


async def _judge_alone(run: EndpointRun, group: DefaultsGroup, spread: Spread) -> None:
    """One steered field: left out against stated at its default, the rest at the probe."""
    (spec,) = group.fields
    shown, case_id = _shown(spec), _case_id(run, spec)
    omitted = await run.ask(group.omitted, f"{spec.name} omitted")
    stated = await run.ask(group.stated, shown)
    pair = run.compare(f"{spec.name} omitted vs {shown}", omitted, stated)
    if _undecided(run, pair, case_id, f"{spec.name} omitted vs {shown}"):
        return
    if not beyond(pair, spread, run.thresholds.margin_db):
        _equal(run, spec, pair, ALONE)
        return
    noise = await _noise(run, group, spread, omitted, f"{case_id}/repeat", spec.name)
    if noise is not None:
        _judge_field(run, spec, pair, noise)


async def _judge_joint(run: EndpointRun, group: DefaultsGroup, spread: Spread) -> None:
    api_mode = run.api_mode
    declared = tuple(spec for spec in group.fields
                     if _declared(run, _case_id(run, spec)) is not None)  # fmt: skip
    joint = tuple(spec for spec in group.fields if spec not in declared)
    omitted = await run.ask(group.omitted, "defaults omitted")
    if not joint:
        await bisect_defaults(run, group, declared, omitted, spread, joint_differs=False)
        return
    stated_values = {**group.omitted, **{spec.name: spec.default for spec in joint}}
    stated = await run.ask(stated_values, "defaults stated")
    together = run.compare("defaults omitted vs stated", omitted, stated)
    case_id, sent = f"{api_mode}/defaults", _joint_sent(declared)
    if _undecided(run, together, case_id, sent):
        return
    if not beyond(together, spread, run.thresholds.margin_db):
        run.record.add(together, "equal")
        run.findings.case(
            case_id, api_mode, None, sent, EXPECTED, together.describe(), GateOutcome.PASSED
        )
        for spec in joint:
            note = "stated with every other default"
            run.findings.case(_case_id(run, spec), api_mode, spec.name, _shown(spec), EXPECTED,
                              "equal", GateOutcome.PASSED, note)  # fmt: skip
        if declared:
            await bisect_defaults(run, group, declared, omitted, spread, joint_differs=False)
        return
    run.record.add(together, "differ")
    run.findings.case(
        case_id, api_mode, None, sent, EXPECTED, together.describe(), GateOutcome.FAILED
    )
    await bisect_defaults(run, group, group.fields, omitted, spread, joint_differs=True)


def _joint_sent(declared: tuple[FieldContract, ...]) -> str:
    if not declared:
        return "every official default: omitted vs stated"
    names = ", ".join(spec.name for spec in declared)
    return f"every official default but those declared to differ ({names}): omitted vs stated"


async def bisect_defaults(
    run: EndpointRun,
    group: DefaultsGroup,
    fields: tuple[FieldContract, ...],
    omitted: Answer,
    spread: Spread,
    *,
    joint_differs: bool,
) -> None:
    """State each of ``fields`` alone against the omitted request; name each that differs.
    ``joint_differs``: the joint request differed, so some field must (else a joint failure)."""
    noise = await _noise(run, group, spread, omitted, f"{run.api_mode}/defaults/repeat", "defaults")
    if noise is None:
        return
    differing = undecided = False
    for spec in fields:
        shown = _shown(spec)
        answer = await run.ask({**group.omitted, spec.name: spec.default}, shown)
        pair = run.compare(f"{spec.name} omitted vs {shown}", omitted, answer)
        if _undecided(run, pair, _case_id(run, spec), f"{spec.name} omitted vs {shown}"):
            undecided = True
            continue
        differing = _judge_field(run, spec, pair, noise) or differing
    if joint_differs and not differing and not undecided:
        names = ", ".join(spec.name for spec in fields)
        run.findings.failures.append(
            f"default_differs: {run.api_mode}: every official default stated together changes "
            f"the output, yet no one of them alone does (jointly: {names})"
        )


async def _noise(
    run: EndpointRun, group: DefaultsGroup, spread: Spread, omitted: Answer, case_id: str, what: str
) -> Spread | None:
    """The baseline's spread widened by the omitted request sent again, or None (recorded)."""
    again = await run.ask(group.omitted, f"{what} omitted again")
    repeat = run.compare(f"{what} omitted, twice", omitted, again)
    if _undecided(run, repeat, case_id, f"{what} omitted, twice"):
        return None
    noise = widened(spread, repeat, run.thresholds.reproducible_db)
    if isinstance(noise, str):
        run.record.add(repeat, "not reproducible")
        run.findings.invalid.append(
            f"not_reproducible: {run.api_mode} (the request of official defaults): {noise}"
        )
        return None
    run.record.add(repeat, "reproducible")
    return noise


def _equal(run: EndpointRun, spec: FieldContract, pair: Pair, note: str = "") -> None:
    run.record.add(pair, "equal")
    case_id = _case_id(run, spec)
    run.findings.case(case_id, run.api_mode, spec.name, _shown(spec), EXPECTED, pair.describe(),
                      GateOutcome.PASSED, note)  # fmt: skip
    _stale(run, case_id)


def _judge_field(run: EndpointRun, spec: FieldContract, pair: Pair, noise: Spread) -> bool:
    """One field stated against the request without it, held to ``noise``; True: it differs."""
    if not beyond(pair, noise, run.thresholds.margin_db):
        _equal(run, spec, pair)
        return False
    run.record.add(pair, "differ")
    shown, case_id = _shown(spec), _case_id(run, spec)
    declared = _declared(run, case_id)
    if declared is not None:
        note = f"declared deviation of {run.release}: {declared.reason}"
        run.findings.limitations.append(f"declared deviation: {case_id}: {declared.reason}")
        run.findings.case(case_id, run.api_mode, spec.name, shown, EXPECTED, pair.describe(),
                          GateOutcome.FAILED, note, deviation=True)  # fmt: skip
        return True
    run.findings.failures.append(
        f"default_differs: {run.api_mode} {spec.name}: left out vs stated at the official "
        f"default {render_value(spec.name, spec.default)} (same seed) gave {pair.describe()}, "
        f"beyond the server's own spread ({noise.describe()}): the served default is not the "
        "official one"
    )
    run.findings.case(case_id, run.api_mode, spec.name, shown, EXPECTED, pair.describe(),
                      GateOutcome.FAILED, "the served default is not the official one")  # fmt: skip
    return True


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
