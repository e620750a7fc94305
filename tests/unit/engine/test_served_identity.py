"""What a URL deployment reports about itself and which rows it can be (fake server, no sockets)."""

import asyncio
from pathlib import Path

import httpx

from omniqual.domain.axes import RowKey
from omniqual.domain.provenance import UNKNOWN, Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.served_identity import (
    ServedIdentity,
    bundled_checkpoint_name,
    expected_model,
    identify_deployment,
    judge_row,
)
from tests.fakes import FakeConfig, FakeOmni


def _with_version(fake: FakeOmni, body: dict[str, str] | None) -> httpx.MockTransport:
    """The fake server, plus vLLM's ``GET /version`` route when ``body`` is given."""

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version" and body is not None:
            return httpx.Response(200, json=body)
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
