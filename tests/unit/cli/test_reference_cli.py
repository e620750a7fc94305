"""``omniqual reference build`` end to end through the real subprocess runner, with a stand-in
interpreter (no torch): it plays the reference child, writing one PNG per case and the result,
or crashing. The directory it builds must verify, and a crash must exit 3 with the tail."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from omniqual.checks.parity.reference_dir import load_reference_dir
from omniqual.cli.main import app

ROOT = Path(__file__).resolve().parents[3]
runner = CliRunner()

CHILD = """
import json, sys
from PIL import Image
job = json.load(open(sys.argv[1]))
outputs = []
for case in job["cases"]:
    name = case["id"].replace("/", "_") + "-0.png"
    Image.new("RGB", (case["width"], case["height"]), (case["seed"] % 256, 0, 0)).save(
        job["out_dir"] + "/" + name)
    outputs.append({"id": case["id"], "files": [name], "media_type": "image/png"})
json.dump({"pipeline_class": job["pipeline_class"], "scheduler": "S", "dtype": job["dtype"],
           "device": job["device"], "generator": "g", "versions": {"diffusers": "stand-in"},
           "threads": 1, "load_s": 0.0, "outputs": outputs}, open(sys.argv[2], "w"))
"""


def _interpreter(tmp_path: Path, body: str) -> Path:
    child = tmp_path / "child.py"
    child.write_text(CHILD, encoding="utf-8")
    script = tmp_path / "python"
    # Called as `python -m omniqual.deploy.reference_pipeline JOB RESULT`: $3 and $4.
    script.write_text(body.format(python=sys.executable, child=child), encoding="utf-8")
    script.chmod(0o755)
    return script


def test_reference_build_writes_a_verified_directory(tmp_path: Path) -> None:
    python = _interpreter(tmp_path, '#!/bin/sh\nexec {python} {child} "$3" "$4"\n')
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    out = tmp_path / "refs"
    result = runner.invoke(app, ["reference", "build", str(checkpoint), "-o", str(out),
                                 "--model", "sd3-tiny", "--python", str(python),
                                 "--root", str(ROOT)])  # fmt: skip
    assert result.exit_code == 0, result.output
    loaded = load_reference_dir(out)
    assert loaded.manifest.pipeline_class == "StableDiffusion3Pipeline"
    assert loaded.manifest.dtype == "bfloat16"
    assert len(loaded.references.media) == 12  # images + chat endpoints, 3 prompts x 2 seeds


def test_reference_build_of_a_crashing_reference_exits_3(tmp_path: Path) -> None:
    python = _interpreter(tmp_path, "#!/bin/sh\necho 'ImportError: no module named diffusers'\n"
                                    "exit 1\n")  # fmt: skip
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    result = runner.invoke(app, ["reference", "build", str(checkpoint), "-o", str(tmp_path / "o"),
                                 "--model", "sd3-tiny", "--python", str(python),
                                 "--root", str(ROOT)])  # fmt: skip
    assert result.exit_code == 3
    assert "reference cannot run" in result.output and "no module named diffusers" in result.output
    assert not (tmp_path / "o" / "reference-manifest.json").exists()


def test_reference_build_of_a_path_needs_a_model(tmp_path: Path) -> None:
    result = runner.invoke(app, ["reference", "build", str(tmp_path), "-o", str(tmp_path / "o"),
                                 "--root", str(ROOT)])  # fmt: skip
    assert result.exit_code == 2
    assert "needs --model" in result.output
