"""What a URL deployment reports about itself and which rows it can be (fake server, no sockets)."""

import asyncio
import hashlib
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from omniqual.client.errors import ClientError
from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import UNKNOWN, Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.targets.served_identity import (
    DeploymentUnidentified,
    ServedIdentity,
    bundled_checkpoint_name,
    expected_model,
    identify_deployment,
    judge_row,
)
from omniqual.engine.targets.served_instance import start_time_of
from tests.fakes import FakeConfig, FakeOmni
from tests.fakes.fake_openapi import openapi_document


def _with_version(
    fake: FakeOmni, body: dict[str, str] | None, **routes: httpx.Response
) -> httpx.MockTransport:
    """The fake server, plus vLLM's ``GET /version`` route when ``body`` is given, and the
    answers ``routes`` gives by path (``v1_models`` for ``/v1/models``)."""
    answers = {"/" + name.replace("_", "/"): reply for name, reply in routes.items()}

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version" and body is not None:
            return httpx.Response(200, json=body)
        if request.url.path in answers:
            return answers[request.url.path]
        return await fake.handle_async(request)

    return httpx.MockTransport(handle)


def test_a_deployment_reports_its_model_versions_and_endpoints() -> None:
    fake = FakeOmni(FakeConfig(model_name="org/sd3"))
    transport = _with_version(fake, {"version": "0.30.0"})
    identity = asyncio.run(identify_deployment("http://fake.test", transport=transport))
    assert identity.model_ids == ("org/sd3",) and identity.model_roots == ("/models/org/sd3",)
    assert identity.vllm_version == "0.30.0"
    # GET /version is vLLM's own release: vLLM-Omni's stays unknown unless the server says it.
    assert identity.vllm_omni_version == UNKNOWN and identity.vllm_omni_commit == UNKNOWN
    assert identity.endpoints["images-generations"] is True
    assert fake.state.posts_total == 0 and not fake.state.jobs  # nothing was created


def test_what_the_server_does_not_answer_stays_unknown() -> None:
    fake = FakeOmni()
    identity = asyncio.run(
        identify_deployment("http://fake.test", transport=_with_version(fake, None))
    )
    assert identity.vllm_version == UNKNOWN
    reported = identity.provenance(Provenance(omniqual_version="1"))
    assert reported.source == "reported" and reported.target_host == "not-visible"
    assert reported.model == FakeConfig().model_name and reported.omniqual_version == "1"
    assert reported.checkpoint_sha256 == UNKNOWN and reported.serve_config_sha256 == UNKNOWN


def test_a_build_reporting_vllm_omni_is_believed() -> None:
    body = {"version": "0.30.0", "vllm_omni_version": "0.30.1", "vllm_omni_commit": "abc1234"}
    identity = asyncio.run(
        identify_deployment("http://fake.test", transport=_with_version(FakeOmni(), body))
    )
    assert (identity.vllm_omni_version, identity.vllm_omni_commit) == ("0.30.1", "abc1234")


EMBEDDED = LaunchRecipe(id="sd3", description="d", kind="embedded", pipeline="sd3-tiny")
ROW = RowKey((("model", "sd3-tiny"), ("api_mode", "images-generations")))


def test_an_embedded_row_is_served_from_its_bundled_checkpoint_directory(tmp_path: Path) -> None:
    directory = bundled_checkpoint_name("sd3-tiny")
    assert directory.startswith("sd3-tiny-")
    expected = expected_model(EMBEDDED, ROW)
    assert expected.matches((str(tmp_path / "checkpoints" / directory),))
    wan = bundled_checkpoint_name("wan-t2v-tiny")
    assert not expected.matches((str(tmp_path / "checkpoints" / wan),))
    assert not expected.matches(("sd3-tiny-000000000000",))  # a bare name is not a path


def test_a_recipe_expected_to_be_refused_is_never_the_deployment_that_answered() -> None:
    refused = LaunchRecipe.model_validate(
        {**EMBEDDED.model_dump(), "expect": "rejects", "expected_error": "no"}
    )
    path = f"/x/{bundled_checkpoint_name('sd3-tiny')}"
    identity = ServedIdentity("u", (path,), (), {"images-generations": True}, "v", "v", "c")
    fits = judge_row(identity, ROW, "sd3", EMBEDDED, expected_model(EMBEDDED, ROW))
    assert fits.reason is None
    verdict = judge_row(identity, ROW, "sd3", refused, expected_model(refused, ROW))
    assert verdict.reason is not None and "refused" in verdict.reason


def _identify(transport: httpx.MockTransport, url: str = "http://fake.test") -> ServedIdentity:
    return asyncio.run(identify_deployment(url, transport=transport))


@pytest.mark.parametrize(
    "models",
    [httpx.Response(500, json={"error": "down"}), httpx.Response(200, json={"data": []}),
     httpx.Response(200, text="<html>")],
    ids=["error", "no-model", "not-json"],
)  # fmt: skip
def test_a_deployment_naming_no_model_is_not_identified(models: httpx.Response) -> None:
    fake = FakeOmni()
    with pytest.raises(DeploymentUnidentified, match=r"GET /v1/models .*nothing was recorded"):
        _identify(_with_version(fake, None, v1_models=models))
    assert issubclass(DeploymentUnidentified, ClientError)  # a target error: exit 3
    assert fake.state.posts_total == 0


def test_a_row_of_a_deployment_naming_no_model_is_not_that_deployment() -> None:
    anonymous = ServedIdentity("u", (), (), {"images-generations": True}, "v", "v", "c")
    verdict = judge_row(anonymous, ROW, "sd3", EMBEDDED, expected_model(EMBEDDED, ROW))
    assert verdict.reason == "the server named no model in GET /v1/models"
    with pytest.raises(DeploymentUnidentified):
        anonymous.provenance(Provenance())


METRICS = "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1767225600.5\n"
CARD = {"id": "org/sd3", "root": "/models/sd3", "max_model_len": 77, "created": 1}


def _identity_of(url: str, created: int = 1, metrics: str = METRICS) -> ServedIdentity:
    card = {**CARD, "created": created}
    transport = _with_version(
        FakeOmni(FakeConfig(model_name="org/sd3")), {"version": "0.30.0"},
        v1_models=httpx.Response(200, json={"object": "list", "data": [card]}),
        metrics=httpx.Response(200, text=metrics),
    )  # fmt: skip
    return _identify(transport, url)


def test_the_served_identity_records_what_tells_one_server_from_another() -> None:
    identity = _identity_of("http://fake.test/")
    served = identity.deployment()
    assert served.base_url == "http://fake.test"
    assert [(m.id, m.root, m.max_model_len) for m in served.models] == [
        ("org/sd3", "/models/sd3", 77)
    ]
    assert served.version == {"version": "0.30.0"}
    document = httpx.Response(200, json=openapi_document(FakeConfig(model_name="org/sd3")))
    assert served.openapi_sha256 == hashlib.sha256(document.content).hexdigest()
    assert served.started_at == datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)
    recorded = identity.provenance(Provenance())
    assert recorded.served == served and recorded.served_identity_sha256 == served.sha256()
    # The card's `created` is the time of the request, not of the deployment.
    assert _identity_of("http://fake.test/", created=2).deployment().sha256() == served.sha256()
    assert _identity_of("http://other.test").deployment().sha256() != served.sha256()
    restarted = METRICS.replace("1767225600.5", "1767229200")
    assert _identity_of("http://fake.test", metrics=restarted).deployment().sha256() != (
        served.sha256()
    )


def test_a_start_time_is_read_where_metrics_expose_it() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert start_time_of("process_start_time_seconds 1767225600\n") == at
    assert start_time_of('process_start_time_seconds{pid="1"} 1767225600 17\n') == at
    assert start_time_of("process_start_time_seconds_total 5\nother 1\n") is None
    assert start_time_of("process_start_time_seconds NaN-ish\n") is None
