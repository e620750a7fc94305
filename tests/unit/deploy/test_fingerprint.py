"""The environment fingerprint: complete on this host, tolerant of missing NVML and git."""

import hashlib
import importlib.metadata
import json
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from omniqual.deploy import fingerprint
from omniqual.deploy.fingerprint import collect_fingerprint, git_state, nvml_gpus
from tests.requirements import require_or_skip


def test_fingerprint_describes_this_host() -> None:
    found = collect_fingerprint(packages=("pydantic", "no-such-distribution-xyz"))
    assert found.hostname_hash == hashlib.sha256(socket.gethostname().encode()).hexdigest()
    assert socket.gethostname() not in found.model_dump_json()
    assert found.os == platform.system() and found.machine == platform.machine()
    assert found.cpu_count >= 1 and found.memory_total_bytes > 0 and found.cpu_model
    assert found.python.endswith(platform.python_version())
    assert found.packages == {"pydantic": importlib.metadata.version("pydantic")}
    assert found.omniqual_version


def test_collecting_imports_none_of_the_heavy_packages() -> None:
    probe = (
        "import json, sys\n"
        "from omniqual.deploy.fingerprint import collect_fingerprint\n"
        "fp = collect_fingerprint()\n"
        "heavy = ['torch', 'vllm', 'vllm_omni', 'diffusers', 'transformers', 'httpx']\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


class FakeNvml:
    def __init__(self, *, fail_init: bool = False, fail_query: bool = False) -> None:
        self.fail_init = fail_init
        self.fail_query = fail_query
        self.shut_down = False

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"550.54.15"

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if self.fail_query and index == 1:
            raise RuntimeError("GPU is lost")
        return index

    def nvmlDeviceGetName(self, handle: int) -> str | bytes:
        return b"NVIDIA A100-SXM4-80GB" if handle == 0 else "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(total=80 * 2**30, used=0, free=80 * 2**30)


def test_gpus_come_from_nvml_when_it_works(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    gpus = nvml_gpus()
    assert [(g.index, g.name, g.driver) for g in gpus] == [
        (0, "NVIDIA A100-SXM4-80GB", "550.54.15"),
        (1, "NVIDIA H100 80GB HBM3", "550.54.15"),
    ]
    assert gpus[0].memory_total_bytes == 80 * 2**30
    assert fake.shut_down


@pytest.mark.parametrize("fake", [FakeNvml(fail_init=True), FakeNvml(fail_query=True), None])
def test_missing_or_failing_nvml_means_no_gpus(
    monkeypatch: pytest.MonkeyPatch, fake: FakeNvml | None
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake)  # None makes the import fail
    assert nvml_gpus() == ()
    assert collect_fingerprint(packages=()).gpus == ()


def test_cpu_model_is_never_empty() -> None:
    assert fingerprint.cpu_model().strip()


@pytest.fixture
def git_installed() -> None:
    if shutil.which("git") is None:
        require_or_skip("git", "install it from the system's packages (apt-get install git)")


needs_git = pytest.mark.usefixtures("git_installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=30,
    )


@needs_git
def test_git_state_of_a_checkout(tmp_path: Path) -> None:
    package = tmp_path / "omniqual"
    package.mkdir()
    (package / "__init__.py").write_text("")
    assert git_state(package) == (None, None)  # no repository at all
    git(tmp_path, "init", "-q")
    assert git_state(package) == (None, None)  # a repository without commits
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    commit, dirty = git_state(package)
    assert commit is not None and len(commit) == 40 and dirty is False
    (package / "__init__.py").write_text("x = 1\n")
    assert git_state(package) == (commit, True)


@needs_git
def test_an_installed_copy_inside_another_repository_reports_no_commit(tmp_path: Path) -> None:
    package = tmp_path / "venv" / "site-packages" / "omniqual"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "project")
    assert git_state(package) == (None, None)


def test_the_fingerprint_says_which_host_it_describes() -> None:
    found = collect_fingerprint(
        packages=(), target_hosts={"sd3-tiny": "harness-host", "http://gpu:8000": "not-visible"}
    )
    assert found.describes == "harness-host"
    assert found.target_hosts == {"sd3-tiny": "harness-host", "http://gpu:8000": "not-visible"}
