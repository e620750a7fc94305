"""Case generation is pure and deterministic: boundaries and their rejected neighbours, with
every other field at its tiny probe value."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.checks.api_contract.cases import generate_cases, plan_cases
from omniqual.checks.api_contract.wire import build_request, chat_body, file_bytes, fixture_png
from omniqual.domain.contract import EndpointContract
from omniqual.specs.contracts import contract_path, load_contract

ROOT = Path(__file__).resolve().parents[4]
BUNDLED = [
    "sd3-tiny",
    "qwen-image-tiny",
    "qwen-image-edit-tiny",
    "wan-t2v-tiny",
    "stable-audio-tiny",
]

ENDPOINT = EndpointContract.model_validate(
    {
        "api_mode": "images-edits",
        "task": "i2i",
        "probe": {"prompt": "p", "size": "64x64", "steps": 2, "fmt": "png", "cfg": 1.0},
        "fields": [
            {"name": "prompt", "type": "str", "required": True},
            {"name": "size", "type": "size", "min": 16, "max": 1024, "multiple_of": 16},
            {"name": "steps", "type": "int", "min": 1, "max": 200},
            {
                "name": "frames",
                "type": "int",
                "min": 1,
                "max": 125,
                "multiple_of": 4,
                "offset": 1,
                "misaligned": "floor",
            },
            {"name": "cfg", "type": "float", "min": 0, "max": 20, "step": 0.5},
            {"name": "fmt", "type": "str", "enum": ["png", "jpeg"]},
        ],
        "inputs": [
            {"field": "image", "min_count": 1, "max_count": 2, "probe_count": 1, "max_bytes": 1000}
        ],
        "output": {"kind": "image", "size_field": "size"},
    }
)


def _by_id() -> dict[str, object]:
    return {c.id: c for c in generate_cases(ENDPOINT)}


def test_generation_is_deterministic() -> None:
    assert generate_cases(ENDPOINT) == generate_cases(ENDPOINT)


def test_numeric_boundaries_and_neighbours() -> None:
    cases = _by_id()
    values = {k: c.values for k, c in cases.items()}  # type: ignore[attr-defined]
    # Aligned, rejecting sizes: the neighbour is one alignment step out (only the range breaks).
    assert values["images-edits/size/min"]["size"] == "16x64"
    assert values["images-edits/size/below-min"]["size"] == "0x64"
    assert values["images-edits/size/max"]["size"] == "1024x64"
    assert values["images-edits/size/above-max"]["size"] == "1040x64"
    assert values["images-edits/size/misaligned"]["size"] == "72x64"
    # 4k+1 frames: legal extremes are aligned; a neighbour one step out cannot floor back in.
    assert values["images-edits/frames/min"]["frames"] == 1
    assert values["images-edits/frames/max"]["frames"] == 125
    assert values["images-edits/frames/above-max"]["frames"] == 129
    assert values["images-edits/frames/below-min"]["frames"] == 0
    assert values["images-edits/frames/misaligned"]["frames"] == 3
    assert values["images-edits/cfg/below-min"]["cfg"] == -0.5
    assert values["images-edits/cfg/above-max"]["cfg"] == 20.5
    # Every other field keeps its probe value.
    assert values["images-edits/cfg/above-max"]["size"] == "64x64"
    assert values["images-edits/cfg/above-max"]["steps"] == 2


def test_expectations_and_kinds() -> None:
    cases = _by_id()
    expect = {k: c.expect for k, c in cases.items()}  # type: ignore[attr-defined]
    assert expect["images-edits/frames/misaligned"] == "accepted"
    assert expect["images-edits/size/misaligned"] == "invalid"
    assert expect["images-edits/prompt/missing"] == "invalid"
    assert "prompt" not in cases["images-edits/prompt/missing"].values  # type: ignore[attr-defined]
    assert expect["images-edits/fmt/enum=jpeg"] == "accepted"
    assert "images-edits/fmt/enum=png" not in cases  # the probe covers it
    assert expect["images-edits/fmt/enum-unknown"] == "invalid"
    assert "images-edits/prompt/wrong-type" not in cases  # multipart: everything is text
    assert expect["images-edits/steps/wrong-type"] == "invalid"
    assert expect["images-edits/image/oversize"] == "payload"
    assert expect["images-edits/image/max-inputs"] == "accepted"
    assert len(cases["images-edits/image/too-many-inputs"].files) == 3  # type: ignore[attr-defined]
    assert cases["images-edits/image/missing-input"].files == ()  # type: ignore[attr-defined]


def test_plan_runs_rejections_first() -> None:
    plan = plan_cases((ENDPOINT,))
    assert all(c.expect != "accepted" for c in plan.rejected)
    assert all(c.expect == "accepted" for c in plan.accepted)
    assert "images-edits/steps/max" in {c.id for c in plan.accepted}
    assert plan.accepted[0].id == "images-edits/probe"


def test_required_text_gets_empty_and_whitespace_probes() -> None:
    cases = _by_id()
    empty, blank = cases["images-edits/prompt/empty"], cases["images-edits/prompt/whitespace"]
    assert empty.values["prompt"] == "" and empty.expect == "invalid"  # type: ignore[attr-defined]
    assert blank.values["prompt"] == "   " and blank.expect == "invalid"  # type: ignore[attr-defined]
    assert blank.sent == "prompt=<whitespace only>"  # type: ignore[attr-defined]
    assert "images-edits/fmt/empty" not in cases  # optional text may be empty


@pytest.mark.parametrize("model", BUNDLED)
def test_every_declared_limit_is_probed(model: str) -> None:
    """Qwen edit's 200-step maximum (and every other declared limit) is sent, on every endpoint
    the contract declares, so no skip can name an endpoint the row did not probe."""
    contract = load_contract(contract_path(ROOT / "gates" / "contracts", model))
    for endpoint in contract.endpoints:
        plan = plan_cases((endpoint,))
        sent = {c.id for c in (*plan.rejected, *plan.accepted)}
        for spec in endpoint.fields:
            for kind, bound in (("min", spec.min), ("max", spec.max)):
                if bound is not None:
                    assert f"{endpoint.api_mode}/{spec.name}/{kind}" in sent


def test_64_bit_seed_limits_stay_exact() -> None:
    seed = EndpointContract.model_validate(
        {
            "api_mode": "videos-sync",
            "task": "t2v",
            "probe": {"prompt": "p", "seed": 1},
            "fields": [
                {"name": "prompt", "type": "str", "required": True},
                {"name": "seed", "type": "int", "min": -(2**63), "max": 2**63 - 1},
            ],
            "output": {"kind": "video"},
        }
    )
    values = {c.id: c.values.get("seed") for c in generate_cases(seed)}
    assert values["videos-sync/seed/max"] == 2**63 - 1
    assert values["videos-sync/seed/above-max"] == 2**63
    assert values["videos-sync/seed/below-min"] == -(2**63) - 1


def test_sent_is_short_and_redacted() -> None:
    cases = _by_id()
    missing = cases["images-edits/prompt/missing"]
    assert missing.sent == "prompt omitted"  # type: ignore[attr-defined]
    oversize = cases["images-edits/image/oversize"]
    assert oversize.sent == "image of 1001 bytes (cap 1000)"  # type: ignore[attr-defined]


def test_wire_fixtures() -> None:
    cases = _by_id()
    oversize = cases["images-edits/image/oversize"].files[0]  # type: ignore[attr-defined]
    assert len(file_bytes(oversize)) == 1001 and file_bytes(oversize).startswith(fixture_png())
    mismatch = cases["images-edits/image/mime-mismatch"].files[0]  # type: ignore[attr-defined]
    assert file_bytes(mismatch).startswith(b"%PDF") and mismatch.media_type == "image/png"
    wire = build_request(cases["images-edits/size/misaligned"])  # type: ignore[arg-type]
    assert wire.data is not None and wire.data["size"] == "72x64" and len(wire.files) == 1
    body = chat_body({"prompt": "p", "size": "64x64"}, ())
    assert body["extra_body"] == {"size": "64x64"}
    assert body["messages"][0]["content"] == [{"type": "text", "text": "p"}]
