"""The perf-ab gate launches the row's recipe and its reference side by side each round, gives
both the same fixed work in alternation and judges the paired rounds' ratios: a candidate 30 %
slower than its reference fails, an A/A run passes, rounds whose ratios scatter too widely are
inconclusive, and an arm that does not serve or a failed request is invalid. On fake servers and
a virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from omniqual.checks.base import CheckContext, CheckOutcome, PointLaunch, TargetInfo
from omniqual.checks.perf_ab import PerfAbCheck, PerfAbParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.check_context import row
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_omni import FakeOmni
from tests.fakes.memory_sink import MemorySink
from tests.unit.loadgen.conftest import _run_virtual

RECIPE = LaunchRecipe(id="fake-sd3", description="a launch recipe", kind="embedded",
                      pipeline="sd3-tiny")  # fmt: skip
PARAMS = PerfAbParams(requests=4, launches=3, max_launches=4, threshold=0.15)
Work = Callable[[str, int], float]
"""Seconds of simulated compute per image, by arm ("candidate"/"reference") and round."""


@dataclass
class FakeLauncher:
    work: Work
    launched: list[str] = field(default_factory=list)
    down: str | None = None
    """An arm whose launches do not serve."""

    @asynccontextmanager
    async def serve(self, recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        arm = recipe.id.rsplit("--", 1)[1]
        self.launched.append(recipe.id)
        rounds = sum(x.endswith(f"--{arm}") for x in self.launched)
        serves = arm != self.down
        startup = StartupOutcome(recipe_id=recipe.id, expected=recipe.expect,
                                 became_ready=serves, reason="ready" if serves else "exited",
                                 exit_code=None if serves else 1, elapsed_s=10.0, log_path=None,
                                 log_tail=(), command=("vllm", "serve"),
                                 expected_error_matched=None)  # fmt: skip
        if not serves:
            yield PointLaunch(startup, None, None)
            return
        fake = FakeOmni(FakeConfig(image_work_s=self.work(arm, rounds)))
        url = f"http://{recipe.id}.invalid"

        def client() -> OmniClient:
            return OmniClient(url, transport=fake.transport(), timeouts=ClientTimeouts())

        yield PointLaunch(startup, TargetInfo(url=url, recipe=recipe), None, make_client=client)


def run(tmp_path: Path, work: Work, params: PerfAbParams = PARAMS,
        **launcher: str) -> tuple[CheckOutcome, FakeLauncher]:  # fmt: skip
    fake = FakeLauncher(work, **launcher)  # type: ignore[arg-type]
    ctx = CheckContext(
        gate=GateSpec(id="perf-ab", kind="perf_ab", version=1, budget_s=300), row=row(
            "images-generations"), target=TargetInfo(url=None, recipe=RECIPE),
        artifacts=MemorySink(), project_root=tmp_path,
        make_client=lambda: None,  # type: ignore[arg-type,return-value]
        serve_point=fake.serve,
    )  # fmt: skip
    return _run_virtual(PerfAbCheck().run(ctx, params)), fake


def block(outcome: CheckOutcome) -> dict[str, object]:
    found = outcome.effective["perf_ab"]
    assert isinstance(found, dict)
    return found


def test_a_candidate_30_percent_slower_than_its_reference_fails(tmp_path: Path) -> None:
    outcome, fake = run(tmp_path, lambda arm, _: 0.13 if arm == "candidate" else 0.10)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert outcome.reasons[0].startswith("latency_mean regressed: the candidate +30")
    # Three rounds of both arms, launched together, the candidate's from the row's recipe.
    assert fake.launched == ["fake-sd3--candidate", "fake-sd3--reference"] * 3
    comparison = block(outcome)["comparison"]
    assert isinstance(comparison, dict) and comparison["low"] > 0.15


def test_an_aa_run_passes_whatever_the_host_does_to_a_round(tmp_path: Path) -> None:
    # Each round runs 20 % slower or faster than the last (the host), both arms alike.
    outcome, _ = run(tmp_path, lambda _, n: 0.10 * 1.2 ** (n % 3))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert block(outcome)["rounds"] == 3


def test_rounds_whose_ratios_scatter_widely_are_inconclusive(tmp_path: Path) -> None:
    ratios = {1: 1.0, 2: 1.3, 3: 1.05, 4: 1.25}
    outcome, fake = run(tmp_path, lambda arm, n: 0.1 * (ratios[n] if arm == "candidate" else 1))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert outcome.reasons[0].startswith("inconclusive after 4 rounds")
    assert len(fake.launched) == 8  # undecided after three: one more round, to max_launches


def test_an_arm_that_does_not_serve_is_invalid_not_a_verdict(tmp_path: Path) -> None:
    outcome, _ = run(tmp_path, lambda *_: 0.1, down="reference")
    assert outcome.outcome is GateOutcome.INVALID
    assert "the reference arm (fake-sd3--reference) did not serve in round 1" in outcome.reasons[0]


def test_a_failed_request_is_invalid_not_a_verdict(tmp_path: Path) -> None:
    # The candidate's requests outlast their timeout.
    params = PARAMS.model_copy(update={"request_timeout_s": 5.0})
    outcome, _ = run(tmp_path, lambda arm, _: 50.0 if arm == "candidate" else 0.1, params)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("no comparison: candidate arm, round 1")


def test_an_unknown_reference_recipe_is_named(tmp_path: Path) -> None:
    (tmp_path / "runners").mkdir()
    params = PARAMS.model_copy(update={"reference_recipe": "no-such-recipe"})
    outcome, fake = run(tmp_path, lambda *_: 0.1, params)
    assert outcome.outcome is GateOutcome.INVALID
    assert outcome.reasons[0].startswith("reference_recipe 'no-such-recipe'")
    assert fake.launched == []


def _runners(tmp_path: Path, *recipes: str) -> None:
    (tmp_path / "runners").mkdir()
    for text in recipes:
        name = text.split("\n", 1)[0].removeprefix("id: ")
        (tmp_path / "runners" / f"{name}.yaml").write_text(text)


def test_a_named_reference_of_the_same_model_is_the_reference_arm(tmp_path: Path) -> None:
    _runners(tmp_path, "id: release\ndescription: the release measured from\nkind: embedded\n"
                       "pipeline: sd3-tiny\n")  # fmt: skip
    params = PARAMS.model_copy(update={"reference_recipe": "release"})
    outcome, fake = run(tmp_path, lambda arm, _: 0.13 if arm == "candidate" else 0.10, params)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert fake.launched[:2] == ["fake-sd3--candidate", "release--reference"]
    assert block(outcome)["recipes"] == {"candidate": "fake-sd3--candidate",
                                         "reference": "release--reference"}


def test_a_reference_of_another_model_is_refused_before_anything_launches(
        tmp_path: Path) -> None:  # fmt: skip
    _runners(tmp_path, "id: other\ndescription: another model\nkind: embedded\n"
                       "pipeline: wan-t2v-tiny\n")  # fmt: skip
    params = PARAMS.model_copy(update={"reference_recipe": "other"})
    outcome, fake = run(tmp_path, lambda *_: 0.1, params)
    assert outcome.outcome is GateOutcome.INVALID
    assert "must serve the same model" in outcome.reasons[0]
    assert fake.launched == []
