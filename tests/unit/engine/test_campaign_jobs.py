"""`--jobs`: launch groups run at once on disjoint devices, a measuring gate never runs beside
another group's gate, a failed group stops only itself, and the evidence says what ran beside
what. Fake launches and scripted checks; order comes from an event log, never from the clock."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import pytest

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, TargetInfo
from omniqual.deploy.launcher import LaunchedTarget, LaunchError
from omniqual.domain.axes import RowKey
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.engine.run import campaign, host_share, scheduler
from omniqual.engine.run.resources import Host
from omniqual.engine.targets import references, targets
from omniqual.engine.targets.targets import ServedTarget
from omniqual.evidence.store import read_run
from omniqual.specs.campaign import load_campaign
from tests.fakes.projects import make_project

T = TypeVar("T")
LOG: list[str] = []
"""``start <recipe>:<gate>`` / ``end <recipe>:<gate>``, in the order they happened."""


class StepCheck:
    """A gate that takes a few turns of the event loop (others may run meanwhile)."""

    kind: ClassVar[str] = "step"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert ctx.target.recipe is not None
        who = f"{ctx.target.recipe.id}:{ctx.gate.id}"
        LOG.append(f"start {who}")
        for _ in range(6):
            await asyncio.sleep(0)
        LOG.append(f"end {who}")
        return CheckOutcome(GateOutcome.PASSED)


class BaselineCheck(StepCheck):
    """A gate that compares against row a's deployment (as parity does)."""

    kind: ClassVar[str] = "baseline"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert ctx.target.recipe is not None and ctx.serve_reference is not None
        async with ctx.serve_reference(RowKey.parse(ROW_A)):
            return await super().run(ctx, params)


class TimedCheck(StepCheck):
    """A gate that measures time (as soak or fails-fast do)."""

    kind: ClassVar[str] = "timed"
    measures: ClassVar[bool] = True


RECIPE = (
    "id: {id}\ndescription: a launched deployment\nkind: command\nmodel: m\n"
    "command: [serve, '{{model}}', --port, '{{port}}', --name, {id}]\n"
    "row: {{model: m, quantization: none, hardware: cpu}}\n{extra}"
)


WORK = "work1, work2, work3"
ROW_A = "model=m;task=t2i;quantization=none;hardware=cpu"


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str = "",
             a_gates: str = WORK, b_gates: str = WORK) -> Path:  # fmt: skip
    root = make_project(tmp_path, monkeypatch)
    monkeypatch.setitem(registry.BUILTIN, "step", f"{__name__}:StepCheck")
    monkeypatch.setitem(registry.BUILTIN, "timed", f"{__name__}:TimedCheck")
    monkeypatch.setitem(registry.BUILTIN, "baseline", f"{__name__}:BaselineCheck")
    (root / "gates" / "baseline.yaml").write_text("id: baseline\nkind: baseline\nversion: 1\n")
    for gate in ("work1", "work2", "work3"):
        (root / "gates" / f"{gate}.yaml").write_text(f"id: {gate}\nkind: step\nversion: 1\n")
    (root / "gates" / "timed.yaml").write_text("id: timed\nkind: timed\nversion: 1\n")
    (root / "runners" / "live.yaml").unlink()
    for recipe in ("a", "b"):  # their argv differ: two serve configurations, two launches
        (root / "runners" / f"{recipe}.yaml").write_text(RECIPE.format(id=recipe, extra=extra))
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        f"  - key: {{task: t2i, quantization: none}}\n    recipe: a\n    requires: [{a_gates}]\n"
        f"  - key: {{task: t2v, quantization: none}}\n    recipe: b\n    requires: [{b_gates}]\n"
    )
    LOG.clear()
    return root


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Launches that take a few loop turns, record the environment a launch would get, and
    fail for the recipes listed in ``fakes["fail"]``; preparation runs in place."""
    seen: dict[str, Any] = {"envs": {}, "fail": set(), "references": []}

    @asynccontextmanager
    async def reference(loaded: Any, prepared: Any, writer: Any, url: Any, role: str = "",
                        tag: str = "") -> AsyncIterator[ServedTarget]:  # fmt: skip
        seen["references"].append(f"{loaded.recipe.id} as {role}")
        for _ in range(3):
            await asyncio.sleep(0)
        info = TargetInfo(url=f"http://127.0.0.1:9/ref-{loaded.recipe.id}", recipe=loaded.recipe)
        yield ServedTarget(info, Provenance(model="m", serve_argv=("serve", "m")))

    seen["reference"] = reference

    @asynccontextmanager
    async def served(loaded: Any, prepared: Any, writer: Any, url: Any,
                     role: str = "", pid: Any = None,
                     agent: Any = None) -> AsyncIterator[ServedTarget]:  # fmt: skip
        recipe = loaded.recipe
        seen["envs"][recipe.id] = host_share.launch_env()
        for _ in range(3):
            await asyncio.sleep(0)
        if recipe.id in seen["fail"]:
            raise LaunchError(f"{recipe.id}: server exited with code 1 during startup",
                              reason="exited", recipe_id=recipe.id)  # fmt: skip
        info = TargetInfo(url=f"http://127.0.0.1:9/{recipe.id}", recipe=recipe,
                          label=f"{recipe.id} @ x")  # fmt: skip
        yield ServedTarget(info, Provenance(model="m", serve_argv=("serve", "m")))

    async def answers_health(_url: str | None) -> bool:
        return True

    async def in_place(work: Callable[[], T], _label: str) -> T:
        return work()

    monkeypatch.setattr(campaign, "served", served)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "off_loop", in_place)
    monkeypatch.setattr(campaign, "prepare_model", _prepared)
    return seen


def _prepared(recipe: Any, base: Provenance, _directory: Any) -> targets.PreparedModel:
    return targets.PreparedModel(model="m", checkpoint_dir=None, provenance=base)


def _host(monkeypatch: pytest.MonkeyPatch, host: Host) -> None:
    monkeypatch.setattr(scheduler, "host_resources", lambda: host)


def _run(root: Path, jobs: int | Literal["auto"]) -> campaign.CampaignOutcome:
    loaded = load_campaign(root / "c.yaml")
    return asyncio.run(campaign.run_campaign(loaded, command=["t"], jobs=jobs))


def _by(results: tuple[GateResult, ...], recipe: str) -> list[GateResult]:
    return [r for r in results if r.target.startswith(f"{recipe} @")]


def test_jobs_1_runs_the_groups_one_after_another_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=64))
    outcome = _run(_project(tmp_path, monkeypatch), 1)
    gates = ("work1", "work2", "work3")
    sequential = [f"{edge} {r}:{g}" for r in "ab" for g in gates for edge in ("start", "end")]
    assert sequential == LOG
    assert fakes["envs"] == {"a": {}, "b": {}}
    assert all("concurrent_with" not in r.effective for r in outcome.results)


def test_auto_on_a_two_core_host_is_jobs_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=2))
    outcome = _run(_project(tmp_path, monkeypatch), "auto")
    assert LOG.index("end b:work3") > LOG.index("start b:work1") > LOG.index("end a:work3")
    assert all("concurrent_with" not in r.effective for r in outcome.results)


def test_groups_run_at_once_and_their_results_say_beside_what(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=4))  # two groups of 2 cores each: auto picks 2
    outcome = _run(_project(tmp_path, monkeypatch), "auto")
    assert LOG.index("start b:work1") < LOG.index("end a:work1")  # they overlapped
    row_b = "model=m;task=t2v;quantization=none;hardware=cpu"
    first_a = next(r for r in _by(outcome.results, "a") if r.gate_id == "work1")
    assert f"b: work1 on {row_b}" in first_a.effective["concurrent_with"]  # type: ignore[operator]
    assert all(r.outcome is GateOutcome.PASSED for r in outcome.results)
    assert "cuda_visible_devices" not in first_a.effective  # a CPU host hands out no devices


def test_a_number_asked_for_on_a_two_core_host_shares_its_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    """auto keeps a 2-core host to one group; --jobs 2 asks for two, and gets them: start-ups
    and gates that measure nothing overlap, and the results say beside what."""
    _host(monkeypatch, Host(cores=2))
    outcome = _run(_project(tmp_path, monkeypatch), 2)
    assert LOG.index("start b:work1") < LOG.index("end a:work1")  # they overlapped
    assert any(r.effective.get("concurrent_with") for r in outcome.results)
    assert all(r.outcome is GateOutcome.PASSED for r in outcome.results)


def test_groups_on_a_host_without_gpus_share_one_reference_launch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    """Two groups comparing against the same baseline at once launch it once (each launch of
    a tiny server costs half a minute on a small host)."""
    root = _project(tmp_path, monkeypatch, a_gates="baseline, work1", b_gates="baseline, work1")
    monkeypatch.setattr(references, "served", fakes["reference"])
    monkeypatch.setattr(references, "prepare_model", _prepared)
    _host(monkeypatch, Host(cores=2))
    outcome = _run(root, 2)
    assert all(r.outcome is GateOutcome.PASSED for r in outcome.results)
    assert fakes["references"] == ["a as reference", "a as reference-again"]


def test_groups_get_disjoint_devices_passed_to_their_launches_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, monkeypatch, extra="devices: 2\n")
    _host(monkeypatch, Host(cores=8, devices=("0", "1", "2", "3"), pci_order=True))
    envs: dict[str, Any] = {}

    def launch(recipe: Any, **options: Any) -> LaunchedTarget:  # the real served() calls this
        envs[recipe.id] = options["extra_env"]
        return LaunchedTarget(
            name=options["name"], recipe_id=recipe.id, url=f"http://127.0.0.1:9/{recipe.id}",
            host="127.0.0.1", port=9, pid=1, pgid=1, log_path=options["log_path"],
            command=("serve", recipe.id), started_at=datetime.now(UTC), time_to_ready_s=0.5,
            startup_rss_bytes=0, grace_s=1.0,
        )  # fmt: skip

    async def answers_health(_url: str | None) -> bool:
        return True

    monkeypatch.setattr(targets, "launch", launch)
    monkeypatch.setattr(targets, "stop", lambda _target: None)
    monkeypatch.setattr(campaign, "answers_health", answers_health)
    monkeypatch.setattr(campaign, "prepare_model", _prepared)
    outcome = _run(root, "auto")  # 4 devices, 2 per group: 2 at once
    given = {recipe: env["CUDA_VISIBLE_DEVICES"] for recipe, env in envs.items()}
    assert sorted(given.values()) == ["0,1", "2,3"]
    assert all(env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" for env in envs.values())
    for recipe in ("a", "b"):
        results = _by(outcome.results, recipe)
        assert len(results) == 3
        assert {r.effective["cuda_visible_devices"] for r in results} == {given[recipe]}


def test_a_measuring_gate_never_runs_beside_another_groups_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=8))
    root = _project(tmp_path, monkeypatch, a_gates="work1, timed, work2",
                    b_gates="work1, work2, work3, timed")  # fmt: skip
    outcome = _run(root, 2)
    running: set[str] = set()
    for entry in LOG:
        edge, who = entry.split(" ")
        if edge == "start":
            # Whatever starts, a measuring gate never has company, and never joins some.
            assert not any(w.endswith(":timed") for w in running), (entry, running)
            assert not (who.endswith(":timed") and running), (entry, running)
            running.add(who)
        else:
            running.remove(who)
    assert LOG.index("start b:work1") < LOG.index("end a:work1")  # the rest did overlap
    timed = [r for r in outcome.results if r.gate_id == "timed"]
    assert len(timed) == 2 and all(r.effective["concurrent_with"] == [] for r in timed)


def test_a_failed_group_does_not_stop_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=8))
    root = _project(tmp_path, monkeypatch)
    fakes["fail"].add("a")
    with pytest.raises(LaunchError, match="a: server exited"):  # reported as it is alone
        _run(root, 2)
    (run_dir,) = (root / "runs").iterdir()
    contents = read_run(run_dir)
    assert sorted(r.gate_id for r in contents.results) == ["work1", "work2", "work3"]
    assert all(r.target.startswith("b @") and r.outcome is GateOutcome.PASSED
               for r in contents.results)  # fmt: skip
    assert contents.finished is not None and contents.finished.status == "interrupted"


def test_every_failed_group_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: dict[str, Any]
) -> None:
    _host(monkeypatch, Host(cores=8))
    root = _project(tmp_path, monkeypatch)
    fakes["fail"].update({"a", "b"})
    with pytest.raises(LaunchError) as raised:
        _run(root, 2)
    said = "\n".join([str(raised.value), *raised.value.__notes__])
    assert "a: server exited" in said and "launch group b also failed" in said
