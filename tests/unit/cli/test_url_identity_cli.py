"""A deployment given by URL that names no model binds no row: ``gate run`` exits 3 with the
reason and records nothing (fake server, no sockets)."""

from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from omniqual.cli.main import app
from omniqual.engine.targets.served_identity import ServedIdentity, identify_deployment
from tests.fakes import FakeOmni
from tests.fakes.projects import make_project

runner = CliRunner()
URL = "http://127.0.0.1:9"


def _models_fail() -> httpx.MockTransport:
    fake = FakeOmni()

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            return httpx.Response(500, json={"error": {"message": "engine not ready"}})
        return await fake.handle_async(request)

    return httpx.MockTransport(handle)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.chdir(root)
    monkeypatch.setattr("omniqual.deploy.reaper.install_signal_handlers", lambda: None)

    async def identify(url: str) -> ServedIdentity:
        # The real question, asked of a fake whose GET /v1/models fails.
        return await identify_deployment(url, transport=_models_fail())

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    return root


@pytest.mark.parametrize("target", [URL, "live"], ids=["url", "url-recipe"])
def test_a_url_naming_no_model_exits_3_and_records_nothing(project: Path, target: str) -> None:
    result = runner.invoke(
        app, ["gate", "run", "good", "--target", target, "--matrix", "matrices/m.yaml",
              "--row", "task=t2i"],
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert f"{URL}: GET /v1/models failed" in result.stderr
    assert "cannot be identified" in result.stderr and "nothing was recorded" in result.stderr
    assert not any(project.rglob("journal.jsonl"))


def test_a_campaign_on_a_url_naming_no_model_exits_3(project: Path) -> None:
    result = runner.invoke(app, ["run", "c.yaml", "-o", "out"])
    assert result.exit_code == 3, result.output
    assert f"{URL}: GET /v1/models failed" in result.stderr
    journals = list(project.rglob("journal.jsonl"))
    assert not any('"kind":"result"' in j.read_text() for j in journals)
