"""G0-22 and G0-24 at the deployment: every field the gate's requests carry is a property of the
endpoint's public request schema (``GET /openapi.json``), never a name the API does not have; a
generic envelope (chat's ``extra_body``) is sent only where the schema takes it, and a field it
carries that the schema also has at top level is noted. An endpoint without a schema is recorded
as not checked, never passed."""

from __future__ import annotations

from typing import Any

from conftest import CONTRACTS, run_gate
from served_fake import ServedFake

from omniqual.checks.api_contract.public_fields import PUBLIC_FIELDS_CASE, check_public_fields
from omniqual.domain.contract import EndpointContract
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import load_contract
from tests.fakes import FakeConfig
from tests.fakes.fake_openapi import openapi_document


def _endpoint(mode: str) -> EndpointContract:
    found = load_contract(CONTRACTS / "fake-omni.yaml").endpoint(mode)
    assert found is not None
    return found


def _document(**schemas: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    components: dict[str, Any] = {}
    for name, (path, content, schema) in schemas.items():
        components[name] = schema
        body = {"content": {content: {"schema": {"$ref": f"#/components/schemas/{name}"}}}}
        paths[path] = {"post": {"requestBody": body}}
    return {"paths": paths, "components": {"schemas": components}}


def test_the_fakes_public_schema_has_every_field_the_contract_sends() -> None:
    checked = check_public_fields(openapi_document(FakeConfig()),
                                  (_endpoint("images-generations"),))  # fmt: skip
    assert checked.result.outcome is GateOutcome.PASSED, checked.failures


def test_a_field_the_schema_does_not_have_fails_naming_it() -> None:
    doc = openapi_document(FakeConfig())
    properties = doc["components"]["schemas"]["ImageGenerationRequest"]["properties"]
    del properties["num_inference_steps"]
    checked = check_public_fields(doc, (_endpoint("images-generations"),))
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("num_inference_steps" in f and "/v1/images/generations" in f
               for f in checked.failures), checked.failures  # fmt: skip


def test_a_multipart_endpoint_is_held_to_its_form_schema() -> None:
    endpoint = _endpoint("images-edits")
    form = {"type": "object", "properties": {n: {"type": "string"} for n in
            ("model", "prompt", "size", "num_inference_steps", "seed")}}  # fmt: skip
    doc = _document(Form=("/v1/images/edits", "multipart/form-data", form))
    checked = check_public_fields(doc, (endpoint,))
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("'image'" in f for f in checked.failures), checked.failures
    form["properties"]["image"] = {"type": "array"}
    assert check_public_fields(doc, (endpoint,)).result.outcome is GateOutcome.PASSED


def test_an_envelope_the_schema_does_not_take_fails() -> None:
    endpoint = _endpoint("chat-completions")
    closed = {"type": "object", "properties": {"model": {}, "messages": {}, "seed": {}},
              "additionalProperties": False}  # fmt: skip
    doc = _document(Chat=("/v1/chat/completions", "application/json", closed))
    checked = check_public_fields(doc, (endpoint,))
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("extra_body" in f and "G0-24" in f for f in checked.failures)
    closed["additionalProperties"] = True
    passed = check_public_fields(doc, (endpoint,))
    assert passed.result.outcome is GateOutcome.PASSED, passed.failures
    # seed is a declared top-level field, yet the request carries it in the envelope: noted.
    assert "seed" in passed.result.note and "top-level" in passed.result.note


def test_an_endpoint_without_a_schema_is_not_checked() -> None:
    checked = check_public_fields({"paths": {}}, (_endpoint("images-generations"),))
    assert checked.result.outcome is GateOutcome.SKIPPED and not checked.failures
    assert check_public_fields(None, (_endpoint("images-generations"),)).result.outcome is (
        GateOutcome.SKIPPED
    )


def test_the_gate_records_the_check(fake_config: FakeConfig) -> None:
    run = run_gate(ServedFake(fake_config), api_modes=["images-generations"],
                   temp_dirs=[str(fake_config.temp_dir)])  # fmt: skip
    cases = {c.id: c for c in run.outcome.cases}
    assert cases[PUBLIC_FIELDS_CASE].outcome is GateOutcome.PASSED


MODES = ("images-generations", "images-edits", "videos-async", "videos-sync", "audio-generate",
         "chat-completions")  # fmt: skip
TASKS = ("t2i", "i2i", "ti2i", "t2v", "i2v", "ti2v", "v2v", "t2a")


def _curl_fields(curl: str) -> set[str]:
    """The top-level field names a rendered curl sends (JSON body keys or form part names)."""
    import itertools
    import json
    import shlex

    words = shlex.split(curl.split("\n#", 1)[0].replace("\\\n", " "))
    names: set[str] = set()
    for flag, value in itertools.pairwise(words):
        if flag == "-d":
            names |= set(json.loads(value))
        elif flag == "-F":
            names.add(value.split("=", 1)[0])
    return names


def test_the_published_fields_are_those_the_report_curl_sends() -> None:
    from omniqual.checks.api_contract.public_fields import published_fields
    from omniqual.report.curl import task_curl

    for mode in MODES:
        for task in TASKS:
            curl = task_curl(mode, task, "org/model", "http://127.0.0.1:8000")
            assert curl is not None
            assert _curl_fields(curl) == set(published_fields(mode, task)), (mode, task)


def test_a_published_curl_field_the_schema_lacks_fails_naming_it() -> None:
    doc = openapi_document(FakeConfig())
    del doc["components"]["schemas"]["ImageGenerationRequest"]["properties"]["model"]
    checked = check_public_fields(doc, (_endpoint("images-generations"),))
    assert checked.result.outcome is GateOutcome.FAILED
    assert any("'model'" in f and "curl" in f for f in checked.failures), checked.failures
