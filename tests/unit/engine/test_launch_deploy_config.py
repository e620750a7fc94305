"""A launch keeps the config files its serve argv names (``--deploy-config``…) as artifacts on
every gate result it served, so the report can show the deploy config, not only its name
(no sockets: the launcher is faked)."""

import asyncio
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omniqual.deploy.launcher import LaunchedTarget, placeholder_values
from omniqual.domain.provenance import Provenance
from omniqual.engine.run import campaign
from omniqual.engine.targets import targets
from omniqual.engine.targets.targets import PreparedModel, config_file_paths
from omniqual.evidence.artifacts import artifact_path
from omniqual.evidence.store import read_run
from omniqual.specs.campaign import load_campaign
from tests.fakes.projects import make_project

DEPLOY_YAML = "stages:\n  - stage_id: 0\n    max_num_seqs: 1\n"


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: str) -> Path:
    root = make_project(tmp_path, monkeypatch)
    (root / "runners" / "live.yaml").write_text(
        "id: live\ndescription: a launched deployment\nkind: command\nmodel: m\n"
        f"command: [serve, '{{model}}', --port, '{{port}}'{flags}]\n"
        "row: {model: m, quantization: none, hardware: cpu}\n"
    )
    return root


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The launcher, faked: it renders the argv as the real one does and starts nothing."""
    argvs: list[tuple[str, ...]] = []

    def launch(recipe: Any, **options: Any) -> LaunchedTarget:
        values = placeholder_values(recipe, "127.0.0.1", 9, options.get("model"),
                                    options.get("recipe_dir"))  # fmt: skip
        argv = tuple(recipe.render_argv(values))
        argvs.append(argv)
        return LaunchedTarget(
            name="n", recipe_id=recipe.id, url="http://127.0.0.1:9", host="127.0.0.1", port=9,
            pid=1, pgid=1, log_path=options["log_path"], command=argv,
            started_at=datetime.now(UTC), time_to_ready_s=0.5, startup_rss_bytes=0, grace_s=1.0,
        )  # fmt: skip

    async def answers_health(_url: str | None) -> bool:
        return True

    def prepare_model(recipe: Any, base: Provenance, _directory: Any) -> PreparedModel:
        return PreparedModel(model="m", checkpoint_dir=None, provenance=base)

    monkeypatch.setattr(targets, "launch", launch)
    monkeypatch.setattr(targets, "stop", lambda _target: None)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "prepare_model", prepare_model)
    return argvs


def test_a_launch_records_its_deploy_config_on_every_result_it_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched: list[tuple[str, ...]]
) -> None:
    strategy = tmp_path / "strategy.txt"
    strategy.write_text("cfg")
    # A deploy config travels beside its recipe (named from {recipe_dir}).
    flags = (", --deploy-config, '{recipe_dir}/deploy-configs/qwen-image.yaml', "
             f"'--strategy-config={strategy}'")
    root = _project(tmp_path, monkeypatch, flags)
    config = root / "runners" / "deploy-configs" / "qwen-image.yaml"
    config.parent.mkdir()
    config.write_text(DEPLOY_YAML)
    outcome = asyncio.run(campaign.run_campaign(load_campaign(root / "c.yaml"), command=["t"]))
    assert len(launched) == 1 and str(config) in launched[0]
    contents = read_run(outcome.run_dir)
    assert len(contents.results) == 3
    for result in contents.results:
        stored = {a.name: a for a in result.artifacts if a.role == "deploy-config"}
        assert set(stored) == {"qwen-image.yaml", "strategy.txt"}
        deploy = stored["qwen-image.yaml"]
        assert deploy.sha256 == hashlib.sha256(DEPLOY_YAML.encode()).hexdigest()
        assert deploy.media_type == "application/yaml" and deploy.size == len(DEPLOY_YAML)
        assert stored["strategy.txt"].media_type == "text/plain"
        path = artifact_path(outcome.run_dir, deploy.sha256)
        assert path.read_text() == DEPLOY_YAML


def test_a_config_file_that_cannot_be_read_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched: list[tuple[str, ...]]
) -> None:
    missing = tmp_path / "gone.yaml"  # named but unreadable: named in the report, not recorded
    root = _project(tmp_path, monkeypatch, f", --stage-configs-path, '{missing}'")
    outcome = asyncio.run(campaign.run_campaign(load_campaign(root / "c.yaml"), command=["t"]))
    results = read_run(outcome.run_dir).results
    assert results and not [a for r in results for a in r.artifacts if a.role == "deploy-config"]


def test_secrets_in_a_config_file_are_masked_before_it_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched: list[tuple[str, ...]]
) -> None:
    flags = ", --deploy-config, '{recipe_dir}/deploy-configs/d.yaml'"
    root = _project(tmp_path, monkeypatch, flags)
    config = root / "runners" / "deploy-configs" / "d.yaml"
    config.parent.mkdir()
    config.write_text(DEPLOY_YAML
                      + "connectors:\n  HF_TOKEN: hf_abcdefghijklmnopqrstuvwxyz0123\n")
    outcome = asyncio.run(campaign.run_campaign(load_campaign(root / "c.yaml"), command=["t"]))
    results = read_run(outcome.run_dir).results
    stored = {a.sha256 for r in results for a in r.artifacts if a.role == "deploy-config"}
    assert len(stored) == 1
    kept = artifact_path(outcome.run_dir, stored.pop()).read_text()
    assert kept.startswith(DEPLOY_YAML) and "HF_TOKEN: ***" in kept and "hf_abc" not in kept
    everything = b"".join(p.read_bytes() for p in outcome.run_dir.rglob("*") if p.is_file())
    assert b"hf_abcdefghij" not in everything  # nowhere in the run directory


def test_config_files_are_found_in_every_spelling() -> None:
    argv = ("vllm", "serve", "m", "--deploy-config", "a.yaml", "--stage_configs_path=b.yaml",
            "--strategy-config", "--port", "--max-num-seqs", "c.yaml")  # fmt: skip
    assert config_file_paths(argv) == ["a.yaml", "b.yaml"]
