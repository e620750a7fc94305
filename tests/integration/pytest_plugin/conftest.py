"""The pytest plugin's tests: pytester runs pytest sessions in a throw-away project, against
the fake vLLM-Omni server running as its own process. (pytester is enabled in the test module:
``pytest_plugins`` in a conftest below the rootdir is an error when the whole suite runs.)"""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(base URL, the server's temp dir) of a fake served by a child process."""
    temp_dir = tmp_path / "server-tmp"
    temp_dir.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.integration.pytest_plugin.fake_omni_process", str(temp_dir)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url, temp_dir
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
