"""The field-effect gate on a fake that honours every field (field_fake.py), broken in one place
per test: a field it silently ignores fails naming that field (G0-23); a served default other
than the official one fails naming that field, found by stating one default at a time (G0-03); a
seed that does not reproduce makes the gate invalid, saying so; the faithful fake passes, with
every compared pair recorded as a measurement and the compared outputs stored by sha256."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import httpx

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.field_effect import FieldEffectCheck, FieldEffectParams
from omniqual.client import OmniClient
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.check_context import Harness, row
from tests.fakes.fake_core import Outcome, Reply
from tests.unit.checks.field_effect.field_fake import CONTRACTS, FieldFake

TESTED = ("size", "n", "num_inference_steps", "guidance_scale", "seed", "negative_prompt")
"""The fields of the test contract that must change the output (the others say `effect: none`)."""


def _run(fake: FieldFake, **params: object) -> tuple[CheckOutcome, Harness]:
    harness = Harness()
    ctx = CheckContext(
        gate=GateSpec(id="field-effect", kind="field_effect", version=1),
        row=row("images-generations"),
        target=TargetInfo(url="http://fake.invalid", label="fake"),
        artifacts=harness.sink,
        project_root=Path("."),
        make_client=lambda: OmniClient("http://fake.invalid", transport=fake.transport()),
        progress=harness.on_progress,
    )
    parsed = FieldEffectParams.model_validate({"contracts_dir": str(CONTRACTS), **params})
    return asyncio.run(FieldEffectCheck().run(ctx, parsed)), harness


def _named(outcome: CheckOutcome, prefix: str) -> list[str]:
    return [r for r in outcome.reasons if r.startswith(prefix)]


def _case_outcomes(outcome: CheckOutcome) -> Mapping[str, GateOutcome]:
    return {case.id: case.outcome for case in outcome.cases}


def test_a_field_the_server_silently_ignores_fails_naming_it() -> None:
    outcome, _ = _run(FieldFake(ignores={"guidance_scale"}))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (ignored,) = _named(outcome, "ignored_field")
    assert "images-generations guidance_scale" in ignored
    assert "4.0" in ignored  # the two values sent are named
    cases = _case_outcomes(outcome)
    assert cases["images-generations/effect/guidance_scale"] is GateOutcome.FAILED
    for field in set(TESTED) - {"guidance_scale"}:
        assert cases[f"images-generations/effect/{field}"] is GateOutcome.PASSED, field
    assert not _named(outcome, "default_differs"), outcome.reasons


def test_a_served_default_other_than_the_official_one_fails_naming_the_field() -> None:
    """Steps, which the probe states at 2, is judged alone: the others pass beside it."""
    outcome, _ = _run(FieldFake(defaults={"num_inference_steps": 8}))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (differs,) = _named(outcome, "default_differs")
    assert "images-generations num_inference_steps" in differs and "4" in differs
    cases = _case_outcomes(outcome)
    assert cases["images-generations/defaults"] is GateOutcome.PASSED
    assert cases["images-generations/default/num_inference_steps"] is GateOutcome.FAILED
    for field in ("size", "n", "guidance_scale", "response_format"):
        assert cases[f"images-generations/default/{field}"] is GateOutcome.PASSED, field
    assert not _named(outcome, "ignored_field"), outcome.reasons


def test_a_joint_default_that_differs_is_found_by_stating_each_alone() -> None:
    """n and response_format, which the probe leaves at their defaults, are stated together;
    their joint request differs, and the bisection names n alone."""
    outcome, _ = _run(FieldFake(defaults={"n": 2}))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (differs,) = _named(outcome, "default_differs")
    assert "images-generations n:" in differs
    cases = _case_outcomes(outcome)
    assert cases["images-generations/defaults"] is GateOutcome.FAILED
    assert cases["images-generations/default/n"] is GateOutcome.FAILED
    for field in ("size", "num_inference_steps", "guidance_scale", "response_format"):
        assert cases[f"images-generations/default/{field}"] is GateOutcome.PASSED, field


def test_no_request_leaves_out_both_the_size_and_the_steps() -> None:
    """Each steered default is left out alone, every other field at the probe's value: no
    request runs at the official size and the official steps together (on the bundled SD3,
    1024x1024 at 28 steps where the size alone runs at the probe's 2)."""
    fake = FieldFake()
    outcome, _ = _run(fake)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert all("size" in body or "num_inference_steps" in body for body in fake.bodies)
    left_out = [body for body in fake.bodies if "size" not in body]
    assert left_out and all(body["num_inference_steps"] == 2 for body in left_out)


def test_a_server_whose_same_seed_answers_differ_is_invalid_for_that_reason() -> None:
    outcome, _ = _run(FieldFake(reproducible=False))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    (reason,) = _named(outcome, "not_reproducible")
    assert "images-generations" in reason and "same seed" in reason
    # Nothing is judged on a baseline that does not reproduce: no field is called ignored.
    assert not _named(outcome, "ignored_field") and not _named(outcome, "default_differs")


def test_a_faithful_server_passes_and_records_every_pair() -> None:
    fake = FieldFake()
    outcome, harness = _run(fake)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    cases = _case_outcomes(outcome)
    for field in TESTED:
        assert cases[f"images-generations/effect/{field}"] is GateOutcome.PASSED, field
    # Exempt fields are not sent, and say why.
    exempt = {c.id: c for c in outcome.cases if c.outcome is GateOutcome.SKIPPED}
    assert exempt["images-generations/effect/user"].note == "an end-user id for the logs only"
    assert not any("user" in body for body in fake.bodies)
    # Fields without an official default are skipped by the defaults check and recorded.
    assert cases["images-generations/default/seed"] is GateOutcome.SKIPPED
    assert cases["images-generations/defaults"] is GateOutcome.PASSED
    # Every pair's metric is a measurement with its unit; each pair names what it compared.
    units = {m.name: m.unit for m in outcome.measurements}
    assert units["images-generations baseline: identical"] == "bool"
    assert units["images-generations guidance_scale=4.0 vs 9.0: psnr"] == "dB"
    stored = {a.sha256 for a in harness.sink.artifacts}
    block = outcome.effective["field_effect"]
    assert isinstance(block, list)
    pairs = [pair for endpoint in block for pair in endpoint["pairs"]]  # type: ignore[index]
    # The baseline, each field's effect, each default the probe steers (size, steps, guidance)
    # left out vs stated alone, and the others' joint pair.
    assert len(pairs) == 1 + len(TESTED) + 3 + 1
    for pair in pairs:
        for side in ("a", "b"):
            assert pair[side]["sha256"] and set(pair[side]["sha256"]) <= stored, pair


def test_a_reproducible_jitter_is_the_spread_not_an_effect() -> None:
    """Same-seed answers a level or two apart: a field's effect lies far beyond that spread and
    an equal default within it, so the faithful server still passes, and one that ignores a
    field still fails."""
    outcome, _ = _run(FieldFake(jitter=1))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    outcome, _ = _run(FieldFake(jitter=1, ignores={"negative_prompt"}))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (ignored,) = _named(outcome, "ignored_field")
    assert "negative_prompt" in ignored and "within" in ignored


def test_a_refused_legal_value_is_undecided_not_passed() -> None:
    class RefusesLargeN(FieldFake):
        def plan(self, request: httpx.Request) -> Outcome:
            if request.method == "POST" and b'"n":2' in request.content:
                return Reply(self.error(400, "n above 1 is not served", "n"), "POST")
            return super().plan(request)

    outcome, _ = _run(RefusesLargeN())
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any("images-generations n" in r and "HTTP 400" in r for r in outcome.reasons)


DECLARED_STEPS = """
deviations:
  - release: "0.30.*"
    cases: [images-generations/default/num_inference_steps]
    observed_status: 200
    observed_defect: default_differs
    reason: serves 8 steps where the official default is 4
"""


def _declaring(tmp: Path) -> str:
    """The test contract with the served steps default declared as a deviation of 0.30."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "fake.yaml").write_text((CONTRACTS / "fake.yaml").read_text() + DECLARED_STEPS)
    return str(tmp)


def test_a_declared_served_default_is_the_rows_limitation_not_a_failure(tmp_path: Path) -> None:
    outcome, _ = _run(FieldFake(defaults={"num_inference_steps": 8}),
                      contracts_dir=_declaring(tmp_path), release="0.30.0")  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.limitations == ("declared deviation: images-generations/default/"
                                   "num_inference_steps: serves 8 steps where the official "
                                   "default is 4",)  # fmt: skip
    (case,) = [c for c in outcome.cases if c.id.endswith("/default/num_inference_steps")]
    assert case.deviation and case.outcome is GateOutcome.FAILED


def test_a_declaration_of_another_release_does_not_excuse_the_default(tmp_path: Path) -> None:
    outcome, _ = _run(FieldFake(defaults={"num_inference_steps": 8}),
                      contracts_dir=_declaring(tmp_path), release="0.31.0")  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert _named(outcome, "default_differs") and not outcome.limitations


def test_a_declared_default_that_is_official_again_fails_as_stale(tmp_path: Path) -> None:
    outcome, _ = _run(FieldFake(), contracts_dir=_declaring(tmp_path), release="0.30.0")
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (stale,) = _named(outcome, "stale deviation")
    assert "num_inference_steps" in stale and "remove the declaration" in stale


def _requests(outcome: CheckOutcome) -> float:
    (sent,) = [m.value for m in outcome.measurements if m.name == "requests"]
    return sent


DECLARED_N = DECLARED_STEPS.replace("num_inference_steps", "n").replace("8 steps", "2 images")


def test_a_declared_default_is_stated_alone_not_through_the_bisection(tmp_path: Path) -> None:
    """A declared n default stays out of the joint request: response_format passes alone there,
    and only n is stated alone (with the repeat its noise needs), not every joint field."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "fake.yaml").write_text((CONTRACTS / "fake.yaml").read_text() + DECLARED_N)
    fake = FieldFake(defaults={"n": 2})
    declared, _ = _run(fake, contracts_dir=str(tmp_path), release="0.30.0")
    undeclared, _ = _run(FieldFake(defaults={"n": 2}))
    assert declared.outcome is GateOutcome.PASSED, declared.reasons
    cases = _case_outcomes(declared)
    assert cases["images-generations/defaults"] is GateOutcome.PASSED
    (joint,) = [c for c in declared.cases if c.id == "images-generations/defaults"]
    assert "but those declared to differ (n)" in joint.sent
    stated = [b for b in fake.bodies if b.get("response_format") == "b64_json" and "n" not in b]
    assert stated, "the joint request states the other defaults, not the declared one"
    joint_fields = 2  # n, response_format
    assert _requests(undeclared) - _requests(declared) == joint_fields - 1


def test_an_undeclared_default_still_fails_beside_a_declared_one(tmp_path: Path) -> None:
    fake = FieldFake(defaults={"num_inference_steps": 8, "guidance_scale": 3.0})
    outcome, _ = _run(fake, contracts_dir=_declaring(tmp_path), release="0.30.0")
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (differs,) = _named(outcome, "default_differs")
    assert "guidance_scale" in differs
    cases = _case_outcomes(outcome)
    assert cases["images-generations/default/guidance_scale"] is GateOutcome.FAILED
    assert cases["images-generations/default/num_inference_steps"] is GateOutcome.FAILED
    assert cases["images-generations/default/size"] is GateOutcome.PASSED
    assert outcome.limitations  # the declared steps default is still found, as declared
