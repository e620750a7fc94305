"""Provenance is measured from the target: the launched command's own installation and serve
configuration, or what a URL deployment reports; never the harness's version or a local
checkpoint another server did not load."""

import asyncio
from pathlib import Path

import pytest

from omniqual.deploy.serve_config import serve_config_sha256
from omniqual.domain.provenance import UNKNOWN, Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.run.campaign import run_campaign
from omniqual.engine.targets.served_identity import ServedIdentity
from omniqual.engine.targets.targets import TargetMismatch, launched_provenance, prepare_model
from omniqual.evidence.store import read_run
from omniqual.specs.campaign import load_campaign
from tests.fakes import checks
from tests.fakes.projects import make_project
from tests.unit.deploy.test_target_software import make_target_env


def _checkpoint(root: Path) -> Path:
    (root / "transformer").mkdir(parents=True)
    (root / "model_index.json").write_text('{"_class_name": "QwenImagePipeline"}')
    (root / "transformer" / "config.json").write_text("{}")
    return root


def _recipe(script: Path, model: Path, **flags: object) -> LaunchRecipe:
    return LaunchRecipe.model_validate({
        "id": "gpu", "description": "d", "kind": "command", "model": str(model),
        "command": [str(script), "serve", "{model}", "--omni", "--port", "{port}"],
        "flags": flags, "row": {"model": "m"},
    })  # fmt: skip


def test_a_command_recipe_records_its_own_installation_and_configuration(
    tmp_path: Path,
) -> None:
    commit_line = "__commit_id__ = 'gdeadbeef'"
    script = make_target_env(tmp_path / "venv", "7.0.0", commit_line=commit_line, direct_url=None)
    model = _checkpoint(tmp_path / "ckpt" / "Qwen-Image")
    base = Provenance(omniqual_version="0.1.0")
    prepared = prepare_model(_recipe(script, model, **{"max-num-seqs": 2}), base)
    p = prepared.provenance
    assert (p.vllm_omni_version, p.vllm_omni_commit) == ("7.0.0", "deadbeef")
    assert p.source == "launched" and p.target_host == "harness-host"
    assert p.model == str(model) and prepared.checkpoint_dir == model
    assert p.checkpoint_sha256 is not None and len(p.checkpoint_sha256) == 64
    written_differently = [str(script), "serve", str(model), "--omni", "--max_num_seqs=2"]
    assert p.serve_config_sha256 == serve_config_sha256(written_differently)
    # A changed file in the checkpoint is another checkpoint.
    (model / "transformer" / "config.json").write_text('{"layers": 2}')
    again = prepare_model(_recipe(script, model, **{"max-num-seqs": 2}), base).provenance
    assert again.checkpoint_sha256 != p.checkpoint_sha256
    # A changed flag is another configuration.
    other = prepare_model(_recipe(script, model, **{"max-num-seqs": 4}), base).provenance
    assert other.serve_config_sha256 != p.serve_config_sha256


def test_a_hub_model_has_no_local_checkpoint_hash(tmp_path: Path) -> None:
    script = make_target_env(tmp_path / "venv", "7.0.0", commit_line="", direct_url=None)
    recipe = _recipe(script, Path("Qwen")).model_copy(update={"model": "Qwen/Qwen-Image"})
    prepared = prepare_model(recipe, Provenance())
    assert prepared.provenance.checkpoint_sha256 == UNKNOWN and prepared.checkpoint_dir is None
    assert prepared.provenance.vllm_omni_commit == UNKNOWN


def test_the_serve_argv_is_recorded_exactly_as_launched(tmp_path: Path) -> None:
    script = make_target_env(tmp_path / "venv", "7.0.0", commit_line="", direct_url=None)
    prepared = prepare_model(_recipe(script, _checkpoint(tmp_path / "c")), Provenance())
    argv = (str(script), "serve", str(tmp_path / "c"), "--omni", "--port", "41234",
            "--api-key", "s3cret")  # fmt: skip
    recorded = launched_provenance(prepared, argv).serve_argv
    assert recorded[:6] == argv[:6] and "s3cret" not in recorded


def test_a_campaign_url_override_records_the_server_not_the_local_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, monkeypatch)
    script = make_target_env(tmp_path / "venv", "7.0.0", commit_line="", direct_url=None)
    model = _checkpoint(tmp_path / "ckpt" / "Qwen-Image")
    (project / "runners" / "live.yaml").write_text(
        "id: live\ndescription: a local launch, overridden by the campaign\nkind: command\n"
        f"model: {model}\ncommand: ['{script}', serve, '{{model}}', --omni]\n"
        "row: {model: m, quantization: none, hardware: cpu}\n"
    )
    (project / "c.yaml").write_text(
        "name: c\nmatrix: matrices/m.yaml\nevidence: runs\ntargets: {live: 'http://127.0.0.1:9'}\n"
    )
    outcome = asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    assert outcome.results
    for result in outcome.results:
        p = result.provenance
        assert p.source == "reported" and p.target_host == "not-visible"
        assert p.model == "m"  # what the server said it serves, not the local path
        assert p.checkpoint_sha256 == UNKNOWN and p.serve_config_sha256 == UNKNOWN
        assert p.vllm_omni_version == UNKNOWN  # not the local installation's 7.0.0
    environment = read_run(outcome.run_dir).starts[0].environment
    assert environment.describes == "harness-host"
    assert environment.target_hosts == {"live": "not-visible"}


def test_a_campaign_url_serving_another_model_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, monkeypatch)

    async def identify(url: str) -> ServedIdentity:
        return ServedIdentity(url, ("org/wan",), (), {}, UNKNOWN, UNKNOWN, UNKNOWN)

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    with pytest.raises(TargetMismatch, match="serves org/wan, which is not recipe 'live'"):
        asyncio.run(run_campaign(load_campaign(project / "c.yaml"), command=["t"]))
    assert checks.CALLS == []
