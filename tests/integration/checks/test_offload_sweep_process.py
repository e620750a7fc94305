"""The engine's point launcher (``launched_point``) with real processes: a point that hangs at
startup (never opens its port) is given up at its readiness deadline, stopped and yielded as a
``timeout`` with its log kept; a point that refuses is yielded with its exit code and log. (A
point that serves is covered by the embedded sweep test.)"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import psutil
import pytest

from omniqual.checks.base import PointLaunch
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.engine.run.campaign import launched_point
from omniqual.engine.targets.targets import PreparedModel
from omniqual.evidence.store import RunWriter
from omniqual.specs.recipes import LoadedRecipe
from tests.fakes.evidence import FINGERPRINT

pytestmark = pytest.mark.integration


def recipe(name: str, code: str, timeout_s: float, *extra: str) -> LoadedRecipe:
    given = LaunchRecipe.model_validate({
        "id": name, "description": "a sweep point stand-in", "kind": "command",
        "command": [sys.executable, "-c", code, "{port}", *extra],
        "readiness": {"timeout_s": timeout_s, "interval_s": 0.05, "path": "/"},
        "stop": {"grace_s": 2},
    })  # fmt: skip
    return LoadedRecipe(given, Path(__file__), 1)


def run(tmp_path: Path, loaded: LoadedRecipe) -> tuple[PointLaunch, float, int | None, bool]:
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT)
    prepared = PreparedModel(None, None, Provenance())

    async def go() -> tuple[PointLaunch, float, int | None, bool]:
        started = time.monotonic()
        async with launched_point(loaded, prepared, writer) as point:
            pid = point.target.pid if point.target is not None else None
            alive_inside = pid is not None and psutil.pid_exists(pid)
        return point, time.monotonic() - started, pid, alive_inside

    with writer:
        return asyncio.run(go())


def test_a_point_that_hangs_at_startup_is_bounded_stopped_and_recorded(tmp_path: Path) -> None:
    hang = "import time, sys; print('loading weights', flush=True); time.sleep(600)"
    point, elapsed, _, _ = run(tmp_path, recipe("hangs", hang, timeout_s=3))
    assert point.target is None and point.make_client is None
    assert point.startup.reason == "timeout" and not point.startup.became_ready
    assert 3 <= point.startup.elapsed_s < 15 and elapsed < 30
    assert point.log_artifact is not None
    assert not [p for p in psutil.process_iter(["cmdline"])
                if "loading weights" in " ".join(p.info["cmdline"] or [])]  # fmt: skip


def test_a_refusing_point_is_yielded_with_its_exit_code(tmp_path: Path) -> None:
    refuse = "import sys; sys.exit('RuntimeError: pin_memory=True requires an accelerator')"
    config = tmp_path / "stages.yaml"  # the deploy config the point's argv names is kept
    config.write_text("stages: []\napi_key: sk-0123456789abcdef0123\n")
    point, _, _, _ = run(tmp_path, recipe("refuses", refuse, 30, "--deploy-config", str(config)))
    assert point.startup.reason == "exited" and point.startup.exit_code == 1
    assert any("pin_memory=True requires" in line for line in point.startup.log_tail)
    assert [(a.role, a.name) for a in point.configs] == [("deploy-config", "stages.yaml")]
