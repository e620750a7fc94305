"""The documented path for a server given by URL, end to end through the CLI: an embedded
sd3-tiny server is started, `omniqual reference build` writes the reference directory from the
same checkpoint, and `omniqual gate run reference-parity --target URL` judges the server against
it. The official pipeline is deterministic on CPU: the gate passes with every case within the
spec's tolerance (about 45 dB PSNR here). The project files (gates, contracts, matrices,
runners) are copied into a temporary root so the reference lands where the gate looks for it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from omniqual.deploy.embedded.catalog import build_checkpoint
from omniqual.deploy.launcher import launched
from omniqual.specs.recipes import find_recipe
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
OMNIQUAL = [sys.executable, "-m", "omniqual"]
ROW = ("model=sd3-tiny,api_mode=images-generations,execution=serial/1,dtype=bf16,"
       "offload=resident,quantization=none,cache_policy=none")  # fmt: skip

pytestmark = EMBEDDED_MARKS


def _omniqual(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*OMNIQUAL, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=900, check=False)  # fmt: skip


def test_reference_parity_by_url_against_a_built_reference_directory(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = os.environ.get("OMNIQUAL_EMBEDDED_CACHE")
    built = build_checkpoint("sd3-tiny", Path(cache) if cache else tmp_path_factory.mktemp("ck"))
    project = tmp_path / "project"
    for part in ("gates", "matrices", "runners"):
        shutil.copytree(ROOT / part, project / part)
    references = project / ".omniqual" / "references" / "sd3-tiny"
    made = _omniqual(project, "reference", "build", str(built.path), "--model", "sd3-tiny",
                     "-o", str(references), "--root", str(project))  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    recipe = find_recipe("sd3-tiny", ROOT / "runners").recipe
    with launched(recipe, model=str(built.path), log_path=tmp_path / "server.log",
                  state_dir=tmp_path / "state") as target:  # fmt: skip
        ran = _omniqual(project, "gate", "run", "reference-parity", "--target", target.url,
                        "--row", ROW, "--evidence", str(tmp_path / "runs"), "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    [result] = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    assert result["outcome"] == "passed", result["reasons"]
    spec = yaml.safe_load((ROOT / "gates" / "reference-parity.yaml").read_text())
    floor = spec["params"]["tolerances"]["image"]["image"]["min_psnr_db"]
    psnr = {m["name"]: m["value"] for m in result["measurements"] if m["name"].endswith("/psnr")}
    assert psnr and all(value >= floor for value in psnr.values()), psnr
    print(f"\nreference-parity by URL: passed, PSNR {sorted(round(v, 1) for v in psnr.values())}")
