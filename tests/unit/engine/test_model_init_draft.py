"""``model init`` drafting against the fake server (no sockets): what the schema gives is drafted
with its source, what it cannot give is a TODO, and nothing is overwritten silently."""

import asyncio
import sys
import types
from pathlib import Path

import httpx
import pytest
import yaml

from omniqual.client.client import OpenApiDocument
from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.model_init.contract_draft import draft_endpoint
from omniqual.engine.model_init.draft import (
    DraftExists,
    InitRequest,
    init_model,
    revision_pins,
)
from omniqual.engine.model_init.official import (
    OfficialSignature,
    OfficialUnavailable,
    read_official,
)
from omniqual.engine.model_init.openapi import SchemaMissing, endpoint_schema
from omniqual.engine.targets.served_identity import ServedIdentity
from omniqual.specs.project import ProjectPaths
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_openapi import openapi_document

AXES = Path(__file__).resolve().parents[3] / "matrices" / "axes.yaml"
URL = "http://fake.test"
FULL_DOD = ("api-contract", "strict-load", "reference-parity", "isolation", "abort",
            "fault-injection", "perf", "soak")  # fmt: skip


def with_version(fake: FakeOmni, body: dict[str, str] | None) -> httpx.MockTransport:
    """The fake, plus vLLM's ``GET /version`` when ``body`` is given."""

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version" and body is not None:
            return httpx.Response(200, json=body)
        return await fake.handle_async(request)

    return httpx.MockTransport(handle)


def project(tmp_path: Path) -> ProjectPaths:
    root = tmp_path / "proj"
    (root / "matrices").mkdir(parents=True)
    (root / "gates").mkdir()
    (root / "runners").mkdir()
    (root / "matrices" / "axes.yaml").write_text(AXES.read_text())
    for gate in (*FULL_DOD, "parity", "fails-fast"):
        (root / "gates" / f"{gate}.yaml").write_text(f"id: {gate}\nkind: x\nversion: 1\n")
    return ProjectPaths(root)


def draft(tmp_path: Path, **request: object) -> tuple[ProjectPaths, dict[str, object]]:
    paths = project(tmp_path)
    fake = FakeOmni(FakeConfig(model_name="org/sd3-new"))
    transport = with_version(fake, {"version": "0.30.0"})
    init = InitRequest(name="sd3-new", url=URL, **request)  # type: ignore[arg-type]
    asyncio.run(init_model(init, paths, transport=transport))
    contract = yaml.safe_load((paths.gates / "contracts" / "sd3-new.yaml").read_text())
    assert fake.state.posts_total == 0  # drafting asks; it never generates
    return paths, contract


def fields_of(contract: dict[str, object]) -> dict[str, dict[str, object]]:
    endpoint = contract["endpoints"][0]  # type: ignore[index]
    return {f["name"]: f for f in endpoint["fields"]}


def test_the_schema_is_read_with_refs_optionals_and_exact_64_bit_limits() -> None:
    schema = endpoint_schema(
        OpenApiDocument.model_validate(openapi_document(FakeConfig(max_n=7))),
        "/v1/images/generations",
    )
    prompt, n, seed = schema.field("prompt"), schema.field("n"), schema.field("seed")
    assert prompt is not None and prompt.required and prompt.json_type == "string"
    assert n is not None and (n.minimum, n.maximum, n.default) == (1, 7, 1)
    assert seed is not None and (seed.minimum, seed.maximum) == (-(2**63), 2**63 - 1)
    response_format = schema.field("response_format")
    assert response_format is not None and response_format.enum == ("b64_json", "url", "file")
    steps = schema.field("num_inference_steps")
    assert steps is not None and steps.json_type == "integer" and steps.maximum == 200
    with pytest.raises(SchemaMissing, match="/v1/videos"):
        document = OpenApiDocument.model_validate(openapi_document(FakeConfig()))
        endpoint_schema(document, "/v1/videos")


def test_every_drafted_limit_names_its_source_and_the_rest_is_todo(tmp_path: Path) -> None:
    _, contract = draft(tmp_path)
    fields = fields_of(contract)
    assert fields["n"]["min"] == 1 and fields["n"]["max"] == 10
    assert "schema ImageGenerationRequest.n" in str(fields["n"]["source"])
    for field in fields.values():  # every numeric field: bounded, or TODO, and sourced
        assert field["source"], field
        if field["type"] in ("int", "float"):
            assert "min" in field and "max" in field, field
    size = fields["size"]
    for key in ("min", "max", "multiple_of", "misaligned", "source", "default"):
        assert str(size[key]).startswith("TODO"), key
    # The schema's enum is taken as it is (url included); --probe is what finds it refused.
    assert fields["response_format"]["enum"] == ["b64_json", "url", "file"]
    prose = fields["output_format"]
    assert prose["enum"] == ["png", "jpeg", "webp"] and prose["default"] == "png"
    assert "prose" in str(prose["source"])
    assert "extra_params" not in fields and "model" not in fields
    assert str(contract["checkpoint"]).startswith("TODO")
    assert contract["target_release"] == "0.30.0"
    probe = contract["endpoints"][0]["probe"]  # type: ignore[index]
    assert probe["prompt"] and probe["n"] == 1 and probe["num_inference_steps"] == 2
    assert str(probe["size"]).startswith("TODO")


def test_the_recipe_and_matrix_bind_the_served_id_and_pin_the_reported_release(
    tmp_path: Path,
) -> None:
    paths, _ = draft(tmp_path, task="t2i")
    recipe = yaml.safe_load((paths.runners / "sd3-new.yaml").read_text())
    assert recipe["kind"] == "url" and recipe["url"] == URL
    assert recipe["model"] == "org/sd3-new" and recipe["row"]["model"] == "sd3-new"
    assert str(recipe["row"]["hardware"]).startswith("TODO")
    matrix_text = (paths.matrices / "sd3-new.yaml").read_text()
    matrix = yaml.safe_load(matrix_text)
    # /version reports vLLM's release: URL results record it as vllm_version, so it is pinned.
    assert matrix["target"] == {"vllm_version": "0.30.0"}
    row = matrix["rows"][0]
    # The full Definition of Done: the task's gates and what a recommended deployment passes.
    assert row["recipe"] == "sd3-new" and row["requires"] == list(FULL_DOD)
    assert row["key"] == {"task": "t2i", "api_mode": "images-generations",
                          "output_transport": "b64-json"}  # fmt: skip
    assert {k: v for k, v in matrix["defaults"].items() if k in recipe["row"]} == recipe["row"]


def test_a_reported_vllm_omni_version_is_pinned() -> None:
    reported = ServedIdentity(URL, ("m",), (), {}, "0.30.0", "0.30.1", UNKNOWN)
    assert revision_pins(reported) == {"vllm_omni_version": "0.30.1", "vllm_version": "0.30.0"}
    silent = ServedIdentity(URL, ("m",), (), {}, UNKNOWN, UNKNOWN, UNKNOWN)
    assert revision_pins(silent) == {}


def test_existing_drafts_are_never_overwritten_without_force(tmp_path: Path) -> None:
    paths, _ = draft(tmp_path)
    contract = paths.gates / "contracts" / "sd3-new.yaml"
    contract.write_text(contract.read_text() + "# my edits\n")
    fake = FakeOmni(FakeConfig(model_name="org/sd3-new"))
    again = InitRequest(name="sd3-new", url=URL)
    with pytest.raises(DraftExists, match="--force"):
        asyncio.run(init_model(again, paths, transport=with_version(fake, None)))
    assert contract.read_text().endswith("# my edits\n")
    forced = InitRequest(name="sd3-new", url=URL, force=True)
    asyncio.run(init_model(forced, paths, transport=with_version(fake, None)))
    assert not contract.read_text().endswith("# my edits\n")


def test_official_defaults_come_from_the_pipeline_signature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class TinyPipeline:
        def __call__(
            self,
            prompt: str | None = None,
            height: int | None = None,
            width: int | None = None,
            num_inference_steps: int = 28,
            guidance_scale: float = 7.0,
            num_images_per_prompt: int = 1,
        ) -> None:
            """A pipeline's signature: only the defaults matter."""  # fmt: skip

    module = types.ModuleType("diffusers")
    module.TinyPipeline = TinyPipeline  # type: ignore[attr-defined]
    module.__version__ = "9.9.9"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "diffusers", module)
    official = read_official("TinyPipeline")
    assert isinstance(official, OfficialSignature) and official.package == "diffusers==9.9.9"
    assert official.default("n") == (True, 1) and official.size_default() is None
    _, contract = draft(tmp_path, official="TinyPipeline")
    fields = fields_of(contract)
    assert fields["num_inference_steps"]["default"] == 28
    assert "official default 28" in str(fields["num_inference_steps"]["source"])
    assert fields["guidance_scale"]["default"] == 7.0
    assert "true_cfg_scale" not in fields  # not a parameter of this pipeline
    assert contract["official"] == "diffusers==9.9.9 TinyPipeline"
    assert isinstance(read_official("NoSuchPipeline"), OfficialUnavailable)


def test_without_diffusers_the_official_defaults_stay_todo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "diffusers", None)  # import fails
    unavailable = read_official("StableDiffusion3Pipeline")
    assert isinstance(unavailable, OfficialUnavailable) and "not importable" in unavailable.reason
    _, contract = draft(tmp_path, official="StableDiffusion3Pipeline")
    fields = fields_of(contract)
    assert str(fields["num_inference_steps"]["default"]).startswith("TODO")
    assert str(contract["official"]).startswith("TODO")


def test_uploads_of_a_multipart_schema_are_inputs_and_form_fields_have_no_bounds() -> None:
    """vLLM-Omni's multipart bodies (OpenAPI 3.1): files carry a content media type, alone, in a
    list, or as one option of an anyOf; form numbers state no bounds, so they stay TODO."""
    upload = {"type": "string", "contentMediaType": "application/octet-stream"}
    body = {
        "title": "Body_edit_images_v1_images_edits_post",
        "required": ["prompt"],
        "properties": {
            "prompt": {"type": "string"},
            "image": {"anyOf": [{"type": "array", "items": upload}, {"type": "null"}]},
            "mask_image": {"anyOf": [{"type": "string"}, upload, {"type": "null"}]},
            "n": {"type": "integer", "default": 1},
        },
    }
    ref = {"$ref": "#/components/schemas/Body_edit_images_v1_images_edits_post"}
    post = {"requestBody": {"content": {"multipart/form-data": {"schema": ref}}}}
    document = OpenApiDocument.model_validate(
        {"paths": {"/v1/images/edits": {"post": post}},
         "components": {"schemas": {"Body_edit_images_v1_images_edits_post": body}}}
    )  # fmt: skip
    schema = endpoint_schema(document, "/v1/images/edits")
    kinds = {f.name: f.json_type for f in schema.fields}
    assert kinds == {"prompt": "string", "image": "file", "mask_image": "file", "n": "integer"}
    drafted = draft_endpoint(schema, None)
    assert [f.name for f in drafted.files] == ["image", "mask_image"]
    (n,) = [f for f in drafted.fields if f["name"] == "n"]
    assert str(n["min"]).startswith("TODO") and str(n["max"]).startswith("TODO")
    assert drafted.probe == {"prompt": "a red cube on a wooden table", "n": 1}
