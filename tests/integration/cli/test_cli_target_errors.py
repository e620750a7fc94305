"""A user's mistakes and a broken target give one clear message and the documented exit code."""

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
OMNIQUAL = [sys.executable, "-m", "omniqual"]
ROW = "model=sd3-tiny,api_mode=images-generations,execution=serial/1,quantization=none"

pytestmark = pytest.mark.integration


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def omniqual(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*OMNIQUAL, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_refused_connection_is_one_line_and_exit_3(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    done = omniqual("gate", "run", "api-contract", "--target", url, "--row", ROW,
                    "--evidence", str(tmp_path))  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert f"cannot reach {url}/health: connection refused" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_gate_spec_names_file_and_line(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    for part in ("matrices", "gates", "runners"):
        (project / part).mkdir(parents=True)
    (project / "matrices" / "axes.yaml").write_text((ROOT / "matrices" / "axes.yaml").read_text())
    (project / "gates" / "bad.yaml").write_text("id: bad\nkind: api_contract\nversion: zero\n")
    done = omniqual("gate", "list", cwd=project)
    assert done.returncode == 2
    assert "bad.yaml:3: version:" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_recipe_is_a_usage_error(tmp_path: Path) -> None:
    done = omniqual("gate", "run", "api-contract", "--target", "no-such-recipe", "--row", ROW,
                    "--evidence", str(tmp_path))  # fmt: skip
    assert done.returncode == 2
    assert "no-such-recipe" in done.stderr
    assert "Traceback" not in done.stderr
