"""The perf gate measures fresh server launches when it launches the server itself: each launch
gets its warm-up and repetitions, the run is judged as one session, on the mean of the launch
means against the baseline's sessions (more launches narrow the run's own term, never the
host's share the baseline's sessions spread by), more
launches follow while undecided up to ``max_launches`` and the budget, and a deployment given by
URL is one launch, said in the result. On a fake launcher and a virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from omniqual.checks.base import CheckContext, CheckOutcome, PointLaunch, TargetInfo
from omniqual.checks.perf import PerfCheck, PerfParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.provenance import Provenance
from omniqual.domain.recipe import LaunchRecipe
from omniqual.loadgen.host_speed import CpuTimes
from tests.fakes.check_context import row
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.memory_sink import MemorySink
from tests.unit.checks.perf.test_perf_gate import CKPT, HW, PARAMS, SERVE, TEST_CPU, write_baseline
from tests.unit.loadgen.conftest import _run_virtual

RECIPE = LaunchRecipe(id="fake-sd3", description="a launch recipe", kind="embedded",
                      pipeline="sd3-tiny")  # fmt: skip
SPREAD_6PCT = (0.100, 0.108, 0.092, 0.104, 0.096)  # launch means 6.3 % apart (n = 5)


@dataclass
class FakeLauncher:
    """Each launch a new fake server, serving at the next of ``work_s`` (the last repeats)."""

    work_s: Sequence[float]
    launched: list[str] = field(default_factory=list)
    serves: bool = True
    pid: int | None = None
    """A pid puts each launch on this host (its host readings are taken)."""

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        work = self.work_s[min(len(self.launched), len(self.work_s) - 1)]
        self.launched.append(recipe.id)
        fake = FakeOmni(FakeConfig(image_work_s=work))
        startup = StartupOutcome(recipe_id=recipe.id, expected=recipe.expect,
                                 became_ready=self.serves,
                                 reason="ready" if self.serves else "exited",
                                 exit_code=None if self.serves else 1, elapsed_s=12.0,
                                 log_path=None, log_tail=(), command=("vllm", "serve"),
                                 expected_error_matched=None)  # fmt: skip
        if not self.serves:
            yield PointLaunch(startup, None, None)
            return
        url = f"http://{recipe.id}.invalid"

        def client() -> OmniClient:
            return OmniClient(url, transport=fake.transport(), timeouts=ClientTimeouts())

        yield PointLaunch(startup, TargetInfo(url=url, recipe=recipe, pid=self.pid), None,
                          make_client=client)  # fmt: skip


def launched_run(
    tmp_path: Path, work_s: Sequence[float], params: PerfParams, *,
    launch_means: Sequence[float] = SPREAD_6PCT, serves: bool = True,
    budget_s: float | None = None, host: tuple[float, float] | None = None,
    recipe: LaunchRecipe = RECIPE,
) -> tuple[CheckOutcome, FakeLauncher]:  # fmt: skip
    """``host``: the server on this host, (the baseline's reference workload, this run's)."""
    launcher = FakeLauncher(work_s, serves=serves, pid=4242 if host else None)
    key = RowKey((*row("images-generations").items, ("hardware", HW)))
    write_baseline(tmp_path, key, launch_means=launch_means, params=params,
                   values=launch_means, host_probe_s=host[0] if host else None)  # fmt: skip
    ctx = CheckContext(
        gate=GateSpec(id="perf", kind="perf", version=1, budget_s=budget_s), row=key,
        target=TargetInfo(url=None, recipe=recipe), artifacts=MemorySink(),
        project_root=tmp_path, make_client=lambda: None,  # type: ignore[arg-type,return-value]
        serve_point=launcher.serve,
        provenance=Provenance(serve_config_sha256=SERVE, checkpoint_sha256=CKPT),
    )  # fmt: skip
    check = PerfCheck(cpu_class=lambda: TEST_CPU, fingerprint=lambda: {"host": "test"},
                      host_probe=lambda: host[1] if host else 0.0,
                      cpu_times=lambda: CpuTimes(100.0, 0.0), settle_s=0.0)  # fmt: skip
    return _run_virtual(check.run(ctx, params)), launcher


def perf(outcome: CheckOutcome) -> dict[str, Any]:
    block = outcome.effective["perf"]
    assert isinstance(block, dict)
    return block


THREE = PARAMS.model_copy(update={"launches": 3, "max_launches": 3})


def test_launches_of_one_run_never_narrow_what_the_baseline_sessions_spread_by(
        tmp_path: Path) -> None:  # fmt: skip
    # 25 % slower, against sessions 6.3 % apart. Launches of one run share their host's state:
    # three of them steady at +25 % are one session, read ±19 % like one launch, never the
    # ±13 % that three independent launches would claim (and fail it on).
    slower = 0.100 * 1.25
    one, _ = launched_run(tmp_path / "one", [slower], PARAMS)
    assert one.outcome is GateOutcome.INVALID, one.reasons
    three, launcher = launched_run(tmp_path / "three", [slower], THREE)
    assert three.outcome is GateOutcome.INVALID, three.reasons
    assert launcher.launched == ["fake-sd3-perf1", "fake-sd3-perf2", "fake-sd3-perf3"]
    block = perf(three)
    assert [launch["mean"] for launch in block["launches"]] == [slower] * 3
    assert block["launches_measured"] == 3
    assert block["comparison"]["low"] < 0.10 < block["comparison"]["low"] + 0.2
    assert abs(block["comparison"]["low"] - perf(one)["comparison"]["low"]) < 0.01


def test_launches_are_judged_on_the_mean_of_their_means(tmp_path: Path) -> None:
    # Against sessions 0.8 % apart, the mean of the three launches sits at the baseline's
    # (the last alone would read +2 %); their 2 % scatter is the run's own term.
    tight = (0.100, 0.101, 0.099, 0.1005, 0.0995)
    outcome, _ = launched_run(tmp_path, [0.098, 0.100, 0.102], THREE, launch_means=tight)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert perf(outcome)["comparison"]["change"] == pytest.approx(0.0, abs=1e-9)


def test_more_launches_while_undecided_up_to_max_launches(tmp_path: Path) -> None:
    # +8 % on launches 6.3 % apart stays across a 10 % threshold at any count: launched to the
    # ceiling, then inconclusive.
    params = PARAMS.model_copy(update={"launches": 3, "max_launches": 5})
    outcome, launcher = launched_run(tmp_path, [0.108], params)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert len(launcher.launched) == 5
    assert outcome.reasons[0].startswith("inconclusive after 5 launches")


def test_a_launch_that_does_not_serve_is_invalid(tmp_path: Path) -> None:
    outcome, _ = launched_run(tmp_path, [0.1], THREE, serves=False)
    assert outcome.outcome is GateOutcome.INVALID
    assert "launch 1 did not serve" in outcome.reasons[0]


def test_launches_that_cannot_fit_the_budget_are_a_host_too_slow(tmp_path: Path) -> None:
    # One repetition of 4 requests takes 4 s: 3 launches of 1 + 3 repetitions need 48 s.
    outcome, launcher = launched_run(tmp_path, [1.0], THREE, budget_s=30.0)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("host too slow for this workload")
    assert "3 launches" in outcome.reasons[0]
    assert len(launcher.launched) == 1


def test_a_deployment_given_by_url_is_one_launch_and_says_so(tmp_path: Path) -> None:
    from tests.unit.checks.perf.test_perf_gate import run

    outcome, _ = run(tmp_path, [0.1, 0.103, 0.101, 0.105], baseline={}, params=THREE)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    block = perf(outcome)
    assert block["launches_measured"] == 1
    assert "one launch: a deployment given by URL" in block["launch_note"]


def test_launches_on_a_slower_host_still_fail_a_server_twice_as_slow(tmp_path: Path) -> None:
    # The host reads 25 % slower than the baseline's in every launch: the interval allows the
    # host anything from none to all of the change, and +100 % is beyond it either way.
    outcome, _ = launched_run(tmp_path / "slow", [0.200], THREE, host=(0.010, 0.0125))
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    block = perf(outcome)
    assert [launch["host_probe_s"] for launch in block["launches"]] == [0.0125] * 3
    assert block["comparison"]["host_high"] == pytest.approx(1.25)
    assert block["host"]["ratio"] == pytest.approx(1.25) and block["host"]["differs"]
    # An unchanged server on it: the host may explain a +25 %, so no verdict either way.
    same, _ = launched_run(tmp_path / "same", [0.125], THREE, host=(0.010, 0.0125))
    assert same.outcome is GateOutcome.INVALID, same.reasons
    assert same.reasons[0].startswith("inconclusive after 3 launches")
