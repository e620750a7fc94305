"""vLLM-Omni's version and commit, asked of the Python a launch command runs (not the harness's)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omniqual.deploy.target_software import find_interpreter, probe_target_software
from omniqual.domain.provenance import UNKNOWN


def make_target_env(root: Path, version: str, *, commit_line: str, direct_url: str | None) -> Path:
    """A separate venv holding a stand-in vllm-omni distribution and a ``vllm`` console script;
    returns the script."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=120)  # fmt: skip
    (site,) = root.glob("lib/python*/site-packages")
    package = site / "vllm_omni"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('the probe must never import me')\n")
    (package / "_version.py").write_text(f"__version__ = version = {version!r}\n{commit_line}\n")
    dist = site / f"vllm_omni-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm-omni\nVersion: {version}\n")
    if direct_url is not None:
        (dist / "direct_url.json").write_text(direct_url)
    script = root / "bin" / "vllm"
    script.write_text(f"#!{root / 'bin' / 'python'}\nimport sys\nsys.exit(0)\n")
    script.chmod(0o755)
    return script


def test_the_command_recipes_own_installation_is_reported(tmp_path: Path) -> None:
    script = make_target_env(
        tmp_path / "target", "9.9.9", commit_line="__commit_id__ = commit_id = 'g1a2b3c4d'",
        direct_url=None,
    )  # fmt: skip
    found = probe_target_software([str(script), "serve", "m", "--omni"], dict(os.environ))
    assert found.vllm_omni_version == "9.9.9"  # not the harness's own vllm-omni
    assert found.vllm_omni_commit == "1a2b3c4d"
    assert found.vllm_version == UNKNOWN
    assert found.interpreter == str(tmp_path / "target" / "bin" / "python")


def test_a_vcs_install_names_its_commit(tmp_path: Path) -> None:
    direct = {"url": "https://github.com/vllm-project/vllm-omni",
              "vcs_info": {"vcs": "git", "commit_id": "f" * 40}}  # fmt: skip
    script = make_target_env(
        tmp_path / "target", "0.31.0.dev3", commit_line="__commit_id__ = commit_id = None",
        direct_url=json.dumps(direct),
    )  # fmt: skip
    found = probe_target_software([str(script), "serve"], dict(os.environ))
    assert (found.vllm_omni_version, found.vllm_omni_commit) == ("0.31.0.dev3", "f" * 40)


def test_a_command_on_the_path_is_found_by_its_shebang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = make_target_env(tmp_path / "t", "1.0.0", commit_line="", direct_url=None)
    env = {**os.environ, "PATH": f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    assert find_interpreter("vllm", env) == tmp_path / "t" / "bin" / "python"
    found = probe_target_software(["vllm", "serve"], env)
    assert found.vllm_omni_version == "1.0.0" and found.vllm_omni_commit == UNKNOWN


def test_a_command_that_is_not_there_is_unknown_not_the_harness_version() -> None:
    found = probe_target_software(["/nonexistent/bin/vllm", "serve"], dict(os.environ))
    assert (found.vllm_omni_version, found.vllm_omni_commit) == (UNKNOWN, UNKNOWN)
