"""Every result is held to what its servers' logs say they resolved: a gate that passed on a
server whose log resolved another attention backend than the row declares is `invalid`, naming
the role, the backend and the server (a failure stays a failure, the fallback named beside it);
that holds for the target and for every server the gate launched itself, except a launch whose
recipe declares another value (another row's server). Where the logs agree, or there are none,
the verdict stands and what each log showed is recorded with the result."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import ClassVar, Literal

import pytest
from pydantic import Field

from omniqual.checks import registry
from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams, PointLaunch, TargetInfo
from omniqual.deploy.launcher import StartupOutcome
from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.gate import GateSpec
from omniqual.domain.log_proof import LogProof
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import Expectation, LaunchRecipe
from omniqual.domain.result import GateResult
from omniqual.engine.run.gate_runner import GateJob, run_gate
from omniqual.evidence.store import RunWriter
from omniqual.specs.gates import LoadedGate
from tests.fakes.evidence import FINGERPRINT, LAUNCHED

PATTERN = "Resolved diffusion attention backend '(?P<name>[^']+)' for role='(?P<part>[^']+)'"
SDPA = LogProof("attention_backend", "sdpa", PATTERN, ("SDPA", "CPU_SDPA"))
ROW = RowKey((("model", "m"), ("attention_backend", "sdpa")))


def _line(backend: str, role: str) -> str:
    return (f"INFO [selector.py:93] Resolved diffusion attention backend '{backend}' for "
            f"role='{role}' via platform default\n")  # fmt: skip


class PointingParams(CheckParams):
    points: dict[str, str] = Field(default_factory=dict)
    """Recipe id -> its declared attention backend ('' declares none): launched in turn."""


class PointingCheck:
    """Launches each point it is given and passes (a gate that measures its own launches)."""

    kind: ClassVar[str] = "pointing"
    params_model: ClassVar[type[CheckParams]] = PointingParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "launches"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        assert isinstance(params, PointingParams) and ctx.serve_point is not None
        for recipe_id, backend in params.points.items():
            row = {"attention_backend": backend} if backend else {}
            recipe = LaunchRecipe(id=recipe_id, description="a point", kind="url",
                                  url="http://point.invalid", row=row)  # fmt: skip
            async with ctx.serve_point(recipe):
                pass
        return CheckOutcome(GateOutcome.PASSED)


def _serve_points(logs: dict[str, str], tmp_path: Path):  # type: ignore[no-untyped-def]
    @asynccontextmanager
    async def serve(recipe: LaunchRecipe) -> AsyncIterator[PointLaunch]:
        log_path = tmp_path / f"{recipe.id}.log"
        log_path.write_text(logs[recipe.id])
        startup = StartupOutcome(recipe.id, Expectation.SERVES, True, "ready", None, 0.1,
                                 log_path, (), (), None)  # fmt: skip
        yield PointLaunch(startup, None, None)

    return serve


def _run(tmp_path: Path, log: str | None, outcome: str = "passed", *,
         points: dict[str, tuple[str, str]] | None = None) -> GateResult:  # fmt: skip
    log_path = None
    if log is not None:
        log_path = tmp_path / "server.log"
        log_path.write_text(log)
    if points is None:
        spec = GateSpec(id="g", kind="scripted", version=1, params={"outcome": outcome})
    else:
        spec = GateSpec(id="g", kind="pointing", version=1,
                        params={"points": {k: v[0] for k, v in points.items()}})  # fmt: skip
    gate = LoadedGate(spec, tmp_path / "g.yaml", "0" * 64, Selector.parse(""))
    target = TargetInfo(url="http://fake.invalid", log_path=log_path, label="t")
    writer = RunWriter.create(tmp_path / "runs", command=("t",), environment=FINGERPRINT)
    job = GateJob(gate, ROW, target, LAUNCHED, log_proofs=(SDPA,))
    serve = _serve_points({k: v[1] for k, v in (points or {}).items()}, tmp_path)
    return asyncio.run(run_gate(job, writer, project_root=tmp_path, command=("t",),
                                serve_point=serve))  # fmt: skip


@pytest.fixture(autouse=True)
def _kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.BUILTIN, "scripted", "tests.fakes.checks:ScriptedCheck")
    monkeypatch.setitem(registry.BUILTIN, "pointing",
                        "tests.unit.engine.test_gate_runner_log_proof:PointingCheck")  # fmt: skip


def _resolved(result: GateResult) -> object:
    served = result.effective["served_as"]
    assert isinstance(served, dict)
    backend = served["attention_backend"]
    assert isinstance(backend, dict) and backend["declared"] == "sdpa"
    return backend["resolved"]


def test_a_pass_on_a_server_that_resolved_another_backend_is_invalid(tmp_path: Path) -> None:
    result = _run(tmp_path, _line("CPU_SDPA", "self") + _line("SAGE_ATTN", "cross"))
    assert result.outcome is GateOutcome.INVALID
    reason = result.reasons[0]
    assert reason.startswith("attention_backend_not_served:") and "SAGE_ATTN for 'cross'" in reason
    assert reason.endswith("(server t)")
    assert result.reasons[1] == "the check itself said passed"
    assert _resolved(result) == {"t": {"self": "CPU_SDPA", "cross": "SAGE_ATTN"}}


def test_a_failure_there_stays_a_failure_with_the_fallback_named(tmp_path: Path) -> None:
    """The row's own recipe launched that server: a silent fallback never hides a failure."""
    log = _line("CPU_SDPA", "self") + _line("SAGE_ATTN", "cross")
    result = _run(tmp_path, log, "failed")
    assert result.outcome is GateOutcome.FAILED
    (reason,) = result.reasons  # the scripted failure gives none of its own
    assert reason.startswith("attention_backend_not_served:") and "SAGE_ATTN" in reason


def test_a_log_that_agrees_leaves_the_verdict_and_records_the_backend(tmp_path: Path) -> None:
    result = _run(tmp_path, "boot\n" + _line("CPU_SDPA", "self"))
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert _resolved(result) == {"t": {"self": "CPU_SDPA"}}


def test_without_a_captured_log_nothing_is_proven_and_it_says_so(tmp_path: Path) -> None:
    result = _run(tmp_path, None)
    assert result.outcome is GateOutcome.PASSED
    assert _resolved(result) == "not checked: no server log"


def test_a_verdict_that_decided_nothing_is_left_as_it_is(tmp_path: Path) -> None:
    result = _run(tmp_path, _line("FLASH_ATTN", "self"), "invalid")
    assert result.outcome is GateOutcome.INVALID and result.reasons == ()
    assert _resolved(result) == {"t": {"self": "FLASH_ATTN"}}  # still recorded


def test_a_server_the_gate_launched_itself_is_held_to_the_row_too(tmp_path: Path) -> None:
    points = {"m-point-1": ("sdpa", _line("CPU_SDPA", "self")),
              "m-point-2": ("", _line("FLASH_ATTN", "self"))}  # fmt: skip
    result = _run(tmp_path, None, points=points)
    assert result.outcome is GateOutcome.INVALID
    assert "FLASH_ATTN for 'self'" in result.reasons[0]
    assert result.reasons[0].endswith("(server m-point-2)")
    assert _resolved(result) == {"m-point-1": {"self": "CPU_SDPA"},
                                 "m-point-2": {"self": "FLASH_ATTN"}}  # fmt: skip


def test_a_launch_of_a_recipe_declaring_another_backend_is_another_rows_server(
    tmp_path: Path,
) -> None:
    points = {"m-point": ("sdpa", _line("CPU_SDPA", "self")),
              "flash-reference": ("flash-attn", _line("FLASH_ATTN", "self"))}  # fmt: skip
    result = _run(tmp_path, None, points=points)
    assert result.outcome is GateOutcome.PASSED, result.reasons
    assert _resolved(result) == {"m-point": {"self": "CPU_SDPA"}}
