"""One launch serves every gate and row of recipes sharing a normalized serve configuration;
checkpoint-only gates run beside the start-up and end before any served gate; the run's timing
is written (no sockets)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, TargetInfo
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.timing import TIMING_FILE, RunTiming
from omniqual.engine.run import campaign, timing
from omniqual.engine.run.events import EngineEvent, GateStarted, TargetStarting
from omniqual.engine.targets.targets import PreparedModel, ServedTarget
from omniqual.specs.campaign import load_campaign
from tests.fakes import checks
from tests.fakes.projects import make_project

ORDER: list[str] = []
"""What happened, in order: ``launch:<recipe>``, ``ready:<recipe>``, ``gate:<id>``."""


class OfflineCheck:
    """A checkpoint-only gate (like strict-load): no server, yields to the loop once."""

    kind: ClassVar[str] = "offline"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "checkpoint"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        ORDER.append(f"offline-start:{ctx.row}")
        await asyncio.sleep(0)
        ORDER.append(f"offline-end:{ctx.row}")
        return CheckOutcome(GateOutcome.PASSED, ())


RECIPE = (
    "id: {id}\ndescription: a launched deployment\nkind: command\nmodel: m\n"
    "command: [serve, '{{model}}', --port, '{{port}}'{extra}]\n"
    "row: {{model: m, quantization: none, hardware: cpu}}\n"
)


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twin_extra: str = "") -> Path:
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.setitem(registry.BUILTIN, "offline", f"{__name__}:OfflineCheck")
    (root / "gates" / "load.yaml").write_text("id: load\nkind: offline\nversion: 1\n")
    (root / "runners" / "live.yaml").write_text(RECIPE.format(id="live", extra=""))
    (root / "runners" / "twin.yaml").write_text(RECIPE.format(id="twin", extra=twin_extra))
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        "  - key: {task: t2i, quantization: none}\n    recipe: live\n    requires: [load, good]\n"
        "  - key: {task: t2v, quantization: none}\n    recipe: twin\n    requires: [good, bad]\n"
    )
    return root


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    started: list[str] = []
    ORDER.clear()

    @asynccontextmanager
    async def served(loaded: Any, prepared: Any, writer: Any, url: Any,
                     role: str = "", pid: Any = None,
                     agent: Any = None) -> AsyncIterator[ServedTarget]:  # fmt: skip
        started.append(loaded.recipe.id)
        handle = timing.launch_started(loaded.recipe.id, "target")
        ORDER.append(f"launch:{loaded.recipe.id}")
        await asyncio.sleep(0)  # the start-up takes a while: others may run meanwhile
        await asyncio.sleep(0)
        timing.launch_ended(handle, 1.5, ready=True)
        ORDER.append(f"ready:{loaded.recipe.id}")
        info = TargetInfo(url=f"http://127.0.0.1:9/{len(started)}", recipe=loaded.recipe,
                          label=f"{loaded.recipe.id} @ x")  # fmt: skip
        try:
            yield ServedTarget(info, Provenance(model="m", serve_argv=("serve", "m")))
        finally:
            timing.launch_stopped(handle)

    async def answers_health(_url: str | None) -> bool:
        return True

    def prepare_model(recipe: Any, base: Provenance, _directory: Any) -> PreparedModel:
        return PreparedModel(model="m", checkpoint_dir=None, provenance=base)

    monkeypatch.setattr(campaign, "served", served)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "prepare_model", prepare_model)
    return started


def _run(root: Path) -> tuple[campaign.CampaignOutcome, list[EngineEvent]]:
    events: list[EngineEvent] = []

    def observe(event: EngineEvent) -> None:
        events.append(event)
        if isinstance(event, GateStarted) and event.gate != "load":
            ORDER.append(f"gate:{event.gate}")

    outcome = asyncio.run(
        campaign.run_campaign(load_campaign(root / "c.yaml"), command=["t"], observe=observe)
    )
    return outcome, events


def test_one_launch_serves_every_gate_and_row_of_recipes_with_one_serve_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: list[str]
) -> None:
    outcome, events = _run(_project(tmp_path, monkeypatch))
    # live and twin normalize to the same serve configuration: one deployment, one launch.
    assert launches == ["live"]
    assert sum(isinstance(e, TargetStarting) for e in events) == 1
    served = sorted(checks.CALLS)
    assert served == [("bad", "model=m;task=t2v;quantization=none;hardware=cpu"),
                      ("good", "model=m;task=t2i;quantization=none;hardware=cpu"),
                      ("good", "model=m;task=t2v;quantization=none;hardware=cpu")]  # fmt: skip
    twin = [r for r in outcome.results if "t2v" in r.row]
    assert twin and all(r.target.startswith("twin @ ") and "live" in r.target for r in twin)
    # The failing gate on the twin's row stays failed: sharing a launch hides no finding.
    assert {r.gate_id: r.outcome for r in twin}["bad"] is GateOutcome.FAILED


def test_recipes_with_different_serve_configs_launch_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: list[str]
) -> None:
    _run(_project(tmp_path, monkeypatch, twin_extra=", --other-flag"))
    assert launches == ["live", "twin"]


def test_checkpoint_gates_run_beside_the_start_up_and_end_before_served_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: list[str]
) -> None:
    _run(_project(tmp_path, monkeypatch))
    row = "model=m;task=t2i;quantization=none;hardware=cpu"
    # The checkpoint gate started while the server was starting ...
    assert ORDER.index("launch:live") < ORDER.index(f"offline-start:{row}")
    assert ORDER.index(f"offline-start:{row}") < ORDER.index("ready:live")
    # ... and ended before the first gate that talks to the server began.
    first_served = min(i for i, mark in enumerate(ORDER) if mark.startswith("gate:"))
    assert ORDER.index(f"offline-end:{row}") < first_served
    assert ORDER.index("ready:live") < first_served


def test_the_run_records_its_timing_breakdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: list[str]
) -> None:
    outcome, _ = _run(_project(tmp_path, monkeypatch))
    recorded = RunTiming.model_validate_json((outcome.run_dir / TIMING_FILE).read_text())
    assert recorded.run_id == outcome.run_dir.name
    assert [(launch.recipe, launch.role, launch.startup_s) for launch in recorded.launches] == [
        ("live", "target", 1.5)
    ]
    assert recorded.launches[0].stopped_at is not None
    assert recorded.launches[0].reused == 2  # the twin's two gates ran on live's launch
    assert sorted(g.gate for g in recorded.gates) == ["bad", "good", "good", "load"]
    beside = [g for g in recorded.gates if g.gate == "load"]
    assert beside[0].overlapped_with == "start-up of live"
    assert set(recorded.seconds_by_gate()) == {"bad", "good", "load"}
    journal = (outcome.run_dir / "journal.jsonl").read_text()
    assert '"role":"run-timing"' in journal
