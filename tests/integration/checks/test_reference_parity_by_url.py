"""The documented path for a server given by URL, end to end through the CLI: an embedded
sd3-tiny server is started, `omniqual reference build` writes the reference directory from the
same checkpoint, and `omniqual gate run reference-parity --target URL` judges the server against
it. The official pipeline is deterministic on CPU: the gate passes with every case within the
spec's tolerance (about 45 dB PSNR here). The project files (gates, contracts, matrices,
runners) are copied into a temporary root so the reference lands where the gate looks for it.
The server is the sd3-tiny recipe's session-shared one: the gate only sends requests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from omniqual.deploy.embedded.catalog import BuiltCheckpoint
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS
from tests.integration.embedded.shared_servers import SharedServers

ROOT = Path(__file__).resolve().parents[3]
OMNIQUAL = [sys.executable, "-m", "omniqual"]
ROW = ("model=sd3-tiny,api_mode=images-generations,execution=serial/1,dtype=bf16,"
       "offload=resident,quantization=none,cache_policy=none,topology=1-device")  # fmt: skip

pytestmark = EMBEDDED_MARKS
SHARED_SERVERS = ["sd3-tiny"]
"""The session-shared server this module borrows."""


def _omniqual(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([*OMNIQUAL, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=900, check=False)  # fmt: skip


# Two CLI calls of up to 900 s each (reference build, gate run) beside a launch.
@pytest.mark.timeout(2100)
def test_reference_parity_by_url_against_a_built_reference_directory(
    tmp_path: Path, checkpoints: Callable[[str], BuiltCheckpoint], shared_servers: SharedServers
) -> None:
    built = checkpoints("sd3-tiny")
    project = tmp_path / "project"
    for part in ("gates", "matrices", "runners"):
        shutil.copytree(ROOT / part, project / part)
    references = project / ".omniqual" / "references" / "sd3-tiny"
    made = _omniqual(project, "reference", "build", str(built.path), "--model", "sd3-tiny",
                     "-o", str(references), "--root", str(project))  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    with shared_servers.borrow("sd3-tiny") as target:
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
