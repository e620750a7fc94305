"""What a campaign tells its observer about progress: the plan after resume-skips, and each
launch's measured time to ready (no sockets: the launcher is faked)."""

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omniqual.deploy.launcher import LaunchedTarget
from omniqual.domain.provenance import Provenance
from omniqual.engine.run import campaign
from omniqual.engine.run.events import EngineEvent, PlannedItem, PlanReady, TargetReady
from omniqual.engine.targets import targets
from omniqual.engine.targets.targets import PreparedModel
from omniqual.specs.campaign import load_campaign
from tests.fakes.projects import make_project

T2I = "model=m;task=t2i;quantization=none;hardware=cpu"
T2V = "model=m;task=t2v;quantization=none;hardware=cpu"
PLANNED = (
    PlannedItem("good", "scripted", T2I, "live"),
    PlannedItem("good", "scripted", T2V, "live"),
    PlannedItem("bad", "scripted", T2V, "live"),
)


def run(root: Path, resume: Path | None = None) -> tuple[list[EngineEvent], Path]:
    events: list[EngineEvent] = []
    outcome = asyncio.run(campaign.run_campaign(
        load_campaign(root / "c.yaml"), command=["t"], resume=resume, observe=events.append,
    ))  # fmt: skip
    return events, outcome.run_dir


def test_a_url_campaign_plans_its_gates_and_no_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events, _ = run(make_project(tmp_path, monkeypatch))
    assert events[0] == PlanReady(PLANNED, launches=0, skipped_as_done=0)
    (ready,) = [e for e in events if isinstance(e, TargetReady)]
    assert ready.seconds is None  # nothing was started


def test_a_resumed_campaign_plans_only_what_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, monkeypatch)
    _, run_dir = run(root)
    events, _ = run(root, resume=run_dir)
    assert events[0] == PlanReady((), launches=0, skipped_as_done=3)


def test_a_launch_reports_its_measured_time_to_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path, monkeypatch)
    (root / "runners" / "live.yaml").write_text(
        "id: live\ndescription: a launched deployment\nkind: command\nmodel: m\n"
        "command: [serve, '{model}', --port, '{port}']\n"
        "row: {model: m, quantization: none, hardware: cpu}\n"
    )

    def launch(recipe: Any, **options: Any) -> LaunchedTarget:
        """The launcher, faked: started nothing, ready after 41.5 s by its own measure."""
        return LaunchedTarget(
            name="n", recipe_id=recipe.id, url="http://127.0.0.1:9", host="127.0.0.1", port=9,
            pid=1, pgid=1, log_path=options["log_path"], command=("serve",),
            started_at=datetime.now(UTC), time_to_ready_s=41.5, startup_rss_bytes=0, grace_s=1.0,
        )  # fmt: skip

    async def answers_health(_url: str | None) -> bool:
        return True

    def prepare_model(recipe: Any, base: Provenance, _directory: Any) -> PreparedModel:
        return PreparedModel(model="m", checkpoint_dir=None, provenance=base)

    monkeypatch.setattr(targets, "launch", launch)
    monkeypatch.setattr(targets, "stop", lambda _target: None)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "prepare_model", prepare_model)
    events, _ = run(root)
    assert events[0] == PlanReady(PLANNED, launches=1, skipped_as_done=0)
    assert [e for e in events if isinstance(e, TargetReady)] == [
        TargetReady("live", "http://127.0.0.1:9", 41.5)
    ]
