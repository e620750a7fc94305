"""`--jobs` with a measuring gate whose kind shares its start-ups: the engine's point launches
(``serve_point``) run beside the other group's gate, the gate measures only once it has the host
back, and its result says so. Fake launches and scripted checks, no sockets; order comes from
events, never from the clock (a thread's wait is bounded only so a regression cannot hang)."""

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import pytest

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, TargetInfo
from omniqual.deploy.launcher import LaunchedTarget
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.engine.run import campaign, scheduler
from omniqual.engine.run.resources import Host
from omniqual.engine.targets.targets import ServedTarget
from tests.unit.engine.test_campaign_jobs import LOG, StepCheck, _prepared, _project, _run

T = TypeVar("T")
ROW_A = "model=m;task=t2i;quantization=none;hardware=cpu"
ROW_B = "model=m;task=t2v;quantization=none;hardware=cpu"


class Cue:
    """Who waits for whom: b's server starts once a's gate holds the host, and a's point
    launch (in a thread) returns once b's gate ran."""

    a_holds = asyncio.Event()
    b_ran = threading.Event()


class SharingCheck:
    """Measures, launches a point of its own, measures on it (as fault-injection does)."""

    kind: ClassVar[str] = "sharing"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"
    measures: ClassVar[bool] = True
    shares_start_ups: ClassVar[bool] = True

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert ctx.target.recipe is not None and ctx.serve_point is not None
        recipe = ctx.target.recipe
        LOG.append("start a:measure-before")
        Cue.a_holds.set()
        await asyncio.sleep(0)
        LOG.append("end a:measure-before")
        point = recipe.model_copy(update={"id": f"{recipe.id}-point"})
        async with ctx.serve_point(point) as launched:
            assert launched.target is not None
            LOG.append("start a:measure-on-point")
            for _ in range(3):
                await asyncio.sleep(0)
            LOG.append("end a:measure-on-point")
        return CheckOutcome(GateOutcome.PASSED)


class MarkCheck(StepCheck):
    kind: ClassVar[str] = "mark"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        Cue.b_ran.set()
        return await super().run(ctx, params)


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> dict[str, bool]:
    seen: dict[str, bool] = {}
    Cue.b_ran.clear()

    @asynccontextmanager
    async def served(loaded: Any, *_given: Any, **_options: Any) -> AsyncIterator[ServedTarget]:
        await Cue.a_holds.wait()
        info = TargetInfo(url=f"http://127.0.0.1:9/{loaded.recipe.id}", recipe=loaded.recipe,
                          label=f"{loaded.recipe.id} @ x")  # fmt: skip
        yield ServedTarget(info, Provenance(model="m", serve_argv=("serve", "m")))

    def launch(recipe: Any, **options: Any) -> LaunchedTarget:  # in a thread, as the real one
        seen["b ran during the start-up"] = Cue.b_ran.wait(timeout=60)
        return LaunchedTarget(
            name=options["name"], recipe_id=recipe.id, url=f"http://127.0.0.1:9/{recipe.id}",
            host="127.0.0.1", port=9, pid=1, pgid=1, log_path=options["log_path"],
            command=("serve", recipe.id), started_at=datetime.now(UTC), time_to_ready_s=0.5,
            startup_rss_bytes=0, grace_s=1.0,
        )  # fmt: skip

    async def answers_health(_url: str | None) -> bool:
        return True

    async def in_place(work: Callable[[], T], _label: str) -> T:
        return work()

    monkeypatch.setattr(campaign, "served", served)
    monkeypatch.setattr(campaign, "launch", launch)
    monkeypatch.setattr(campaign, "stop", lambda _target: None)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "off_loop", in_place)
    monkeypatch.setattr(campaign, "prepare_model", _prepared)
    monkeypatch.setattr(scheduler, "host_resources", lambda: Host(cores=8))
    return seen


def test_a_sharing_gates_point_starts_beside_the_other_group_and_measures_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launches: dict[str, bool]
) -> None:
    root = _project(tmp_path, monkeypatch, a_gates="sharing", b_gates="mark")
    monkeypatch.setitem(registry.BUILTIN, "sharing", f"{__name__}:SharingCheck")
    monkeypatch.setitem(registry.BUILTIN, "mark", f"{__name__}:MarkCheck")
    for gate in ("sharing", "mark"):
        (root / "gates" / f"{gate}.yaml").write_text(f"id: {gate}\nkind: {gate}\nversion: 1\n")

    Cue.a_holds = asyncio.Event()  # bound to the run's loop on first use
    outcome = _run(root, 2)
    assert launches["b ran during the start-up"]
    assert LOG == ["start a:measure-before", "end a:measure-before", "start b:mark",
                   "end b:mark", "start a:measure-on-point", "end a:measure-on-point"]  # fmt: skip
    sharing = next(r for r in outcome.results if r.gate_id == "sharing")
    mark = next(r for r in outcome.results if r.gate_id == "mark")
    start_up = f"a-point: start-up for sharing on {ROW_A}"
    assert sharing.outcome is GateOutcome.PASSED and mark.outcome is GateOutcome.PASSED
    assert sharing.effective["concurrent_with"] == [f"b: mark on {ROW_B}"]
    assert sharing.effective["concurrent_while_measuring"] == []
    assert sharing.effective["shared_start_ups"] == [start_up]
    assert mark.effective["concurrent_with"] == [start_up]

