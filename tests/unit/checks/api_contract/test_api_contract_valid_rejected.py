"""A legal request wrongly rejected: the gate's accepted cases must see it. Each fake serves
everything as the clean fake does, except one legal request it answers with an error envelope:
the largest declared value of a field (400), or any request carrying a legal optional field
(422). The gate fails naming that case, its field, what was sent and the status observed; the
other cases keep passing, so the failure is this fault and nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from conftest import GateRun, run_gate

from omniqual.checks.api_contract.cases import generate_cases
from omniqual.domain.contract import EndpointContract
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import contract_path, load_contract
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_core import Outcome, Reply
from tests.fakes.fake_validation import Rejection

ROOT = Path(__file__).resolve().parents[4]
BUNDLED = ["sd3-tiny", "qwen-image-tiny", "qwen-image-edit-tiny", "wan-t2v-tiny",
           "stable-audio-tiny"]  # fmt: skip

Refusal = Callable[[dict[str, object]], Rejection | None]
"""What the fake refuses, read from a JSON body (None: served as usual)."""


class RefusesOneLegalRequest(FakeOmni):
    """The clean fake, except that a POST to ``path`` whose JSON body ``refusal`` picks is
    answered with that rejection (an error envelope, as the real server would render it)."""

    def __init__(self, config: FakeConfig, path: str, refusal: Refusal) -> None:
        super().__init__(config)
        self.path, self.refusal = path, refusal
        self.refused: list[dict[str, object]] = []

    def plan(self, request: httpx.Request) -> Outcome:
        if request.method == "POST" and request.url.path == self.path:
            body = json.loads(request.content or b"{}")
            rejection = self.refusal(body) if isinstance(body, dict) else None
            if rejection is not None:
                self.refused.append(body)
                return Reply(self.reject(rejection), f"POST {self.path}")
        return super().plan(request)


def _widest(body: dict[str, object]) -> Rejection | None:
    size = body.get("size")
    if isinstance(size, str) and size.startswith("512x"):
        return Rejection(400, "Invalid size width 512: the pipeline is capped at 448", "size")
    return None


def _longest(body: dict[str, object]) -> Rejection | None:
    if body.get("audio_length") == 10:
        return Rejection(400, "audio_length 10.0 s exceeds the 9.5 s the model can render",
                         "audio_length")  # fmt: skip
    return None


def _failed(run: GateRun) -> set[str]:
    return {c.id for c in run.outcome.cases if c.outcome is GateOutcome.FAILED and not c.deviation}


def _reasons(run: GateRun) -> str:
    return "\n".join(run.outcome.reasons)


@pytest.mark.parametrize(
    ("api_mode", "path", "refusal", "case", "expected"),
    [
        ("images-generations", "/v1/images/generations", _widest, "images-generations/size/max",
         "images-generations/size/max (/v1/images/generations size): size='512x64': legal value "
         "rejected: expected 2xx, observed HTTP 400 (Invalid size width 512: the pipeline is "
         "capped at 448)"),
        ("audio-generate", "/v1/audio/generate", _longest, "audio-generate/audio_length/max",
         "audio-generate/audio_length/max (/v1/audio/generate audio_length): audio_length=10: "
         "legal value rejected: expected 2xx, observed HTTP 400 (audio_length 10.0 s exceeds "
         "the 9.5 s the model can render)"),
    ],
)  # fmt: skip
def test_largest_declared_value_answered_400_fails_naming_case_and_status(
    fake_config: FakeConfig, api_mode: str, path: str, refusal: Refusal, case: str, expected: str
) -> None:
    fake = RefusesOneLegalRequest(fake_config, path, refusal)
    run = run_gate(fake, api_modes=[api_mode], temp_dirs=[str(fake_config.temp_dir)])
    assert fake.refused, "the fake never saw the request it refuses"
    assert run.outcome.outcome is GateOutcome.FAILED
    assert _failed(run) == {case}
    assert expected in run.outcome.reasons
    result = next(c for c in run.outcome.cases if c.id == case)
    assert (result.expected_status, result.observed_status) == ("2xx", "400")


def _optional_present(field: str) -> Refusal:
    """422 for any request that carries ``field`` with a legal value (a number for a number
    field, text for a text field); without it, or with a value of the wrong type, the request is
    judged as the clean fake judges it (so its rejected neighbours still get their 400)."""

    def refusal(body: dict[str, object]) -> Rejection | None:
        value = body.get(field)
        if field == "negative_prompt":
            legal = isinstance(value, str)
        else:  # guidance_scale: a number within 0..20 (a bool is no number here)
            legal = (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and (0 <= value <= 20)
            )
        if not legal:
            return None
        return Rejection(422, f"Unprocessable Entity: {field} is not supported by this pipeline",
                         field)  # fmt: skip

    return refusal


@pytest.mark.parametrize(
    ("field", "cases"),
    [
        # Bounded: the accepted min and max cases send it.
        ("guidance_scale", {"images-generations/guidance_scale/min",
                            "images-generations/guidance_scale/max"}),
        # Free text the probe leaves out: only a case that sends it present can see the 422.
        ("negative_prompt", {"images-generations/negative_prompt/present"}),
    ],
)  # fmt: skip
def test_legal_optional_field_answered_422_fails_naming_the_field(
    fake_config: FakeConfig, field: str, cases: set[str]
) -> None:
    fake = RefusesOneLegalRequest(fake_config, "/v1/images/generations", _optional_present(field))
    run = run_gate(fake, api_modes=["images-generations"], temp_dirs=[str(fake_config.temp_dir)])
    assert fake.refused, f"no case sent a legal {field}: the fault was never exercised"
    assert run.outcome.outcome is GateOutcome.FAILED, _reasons(run)
    assert _failed(run) == cases
    for case in cases:
        assert any(r.startswith(f"{case} (/v1/images/generations {field}): {field}=")
                   and "legal value rejected: expected 2xx, observed HTTP 422" in r
                   and f"{field} is not supported by this pipeline" in r
                   for r in run.outcome.reasons), _reasons(run)  # fmt: skip


@pytest.mark.parametrize("model", BUNDLED)
def test_every_declared_field_is_sent_legal_by_an_accepted_case(model: str) -> None:
    """A field the contract declares but no accepted case carries is untested: a server that
    refuses it would pass. The probe carries some; every other one gets a case of its own."""
    contract = load_contract(contract_path(ROOT / "gates" / "contracts", model))
    for endpoint in contract.endpoints:
        accepted = [c for c in generate_cases(endpoint) if c.expect == "accepted"]
        for spec in endpoint.fields:
            assert any(spec.name in c.values for c in accepted), (
                f"{model} {endpoint.api_mode}: no accepted case sends {spec.name}"
            )


FREE = EndpointContract.model_validate(
    {
        "api_mode": "images-generations",
        "task": "t2i",
        "probe": {"prompt": "p", "size": "64x64"},
        "fields": [
            {"name": "prompt", "type": "str", "required": True, "min_length": 3},
            {"name": "size", "type": "size", "min": 16, "max": 512, "multiple_of": 16},
            {"name": "negative_prompt", "type": "str"},
            {"name": "user", "type": "str", "default": "anonymous"},
            {"name": "generator_device", "type": "str", "example": "cpu"},
            {"name": "tag", "type": "str", "min_length": 4},
            {"name": "vae_use_tiling", "type": "bool"},
            {"name": "vae_use_slicing", "type": "bool", "default": True},
            {"name": "seed", "type": "int", "unbounded": "any integer"},
            {"name": "style", "type": "str", "enum": ["a", "b"]},
        ],
        "output": {"kind": "image", "size_field": "size"},
    }
)


def test_optional_fields_the_probe_leaves_out_are_sent_with_a_legal_value() -> None:
    cases = {c.id: c for c in generate_cases(FREE)}
    present = {k.split("/")[1]: c for k, c in cases.items() if k.endswith("/present")}
    # The contract's example or default where it gives one; else a value no limit forbids.
    values = {name: case.values[name] for name, case in present.items()}
    assert values == {"negative_prompt": "omniqual", "user": "anonymous", "vae_use_tiling": True,
                      "generator_device": "cpu", "vae_use_slicing": True,
                      "seed": 0}  # fmt: skip
    assert all(c.expect == "accepted" and c.field == n for n, c in present.items())
    assert present["user"].sent == "user='anonymous'"
    assert present["negative_prompt"].sent == "negative_prompt=<8 chars>"  # redacted like a prompt
    # The shortest legal text is an accepted boundary beside its too-short neighbour.
    tag = cases["images-generations/tag/min-length"]
    assert tag.values["tag"] == "xxxx" and tag.expect == "accepted"
    assert cases["images-generations/tag/too-short"].values["tag"] == "xxx"
    assert cases["images-generations/prompt/min-length"].values["prompt"] == "xxx"
    # Fields that other accepted cases already send need no case of their own.
    assert "images-generations/style/present" not in cases
    assert "images-generations/tag/present" not in cases
    assert "images-generations/size/present" not in cases
