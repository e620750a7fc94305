"""fails-fast with real processes through the real launcher: a tiny command that exits with a
message naming its restriction passes (twice, into one reused log); one that serves instead
(python -m http.server on an ephemeral port) fails as a silent fallback; one that exits with an
unrelated message fails."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, CheckOutcome, LaunchAttempt, TargetInfo
from omniqual.checks.fails_fast import FailsFastCheck, FailsFastParams
from omniqual.deploy.launcher import probe_startup
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.recipe import LaunchRecipe
from tests.fakes.memory_sink import MemorySink

pytestmark = pytest.mark.integration

PARAMS = FailsFastParams(deadline_s=20, actionable_patterns=(r"(?i)\b(requires?|not supported)\b",))
EXPECTED = r"--tiny-feature requires an accelerator"


def recipe(code: str, **fields: object) -> LaunchRecipe:
    data: dict[str, object] = {
        "id": "tiny-refuser", "description": "a process that refuses a flag", "kind": "command",
        "command": [sys.executable, "-c", code, "{port}"], "expect": "rejects",
        "expected_error": EXPECTED, "readiness": {"timeout_s": 60, "interval_s": 0.05},
        "stop": {"grace_s": 2},
    }  # fmt: skip
    data.update(fields)
    return LaunchRecipe.model_validate(data)


def run(tmp_path: Path, given: LaunchRecipe) -> tuple[CheckOutcome, MemorySink, list[float]]:
    sink = MemorySink()
    limits: list[float] = []

    async def attempt(bounded: LaunchRecipe) -> LaunchAttempt:
        limits.append(bounded.readiness.timeout_s)
        startup = await asyncio.to_thread(
            probe_startup, bounded, log_path=tmp_path / "server.log", state_dir=tmp_path / "st"
        )
        log = sink.put_artifact(tmp_path / "server.log", media_type="text/plain",
                                role="server-log", name="server.log")  # fmt: skip
        return LaunchAttempt(startup, log)

    ctx = CheckContext(
        gate=GateSpec(id="fails-fast", kind="fails_fast", version=1),
        row=RowKey((("model", "tiny"),)), target=TargetInfo(url=None, recipe=given),
        artifacts=sink, project_root=tmp_path,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
        launch_expecting_failure=attempt,
    )  # fmt: skip
    return asyncio.run(FailsFastCheck().run(ctx, PARAMS)), sink, limits


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMNIQUAL_HOME", str(tmp_path / "home"))


def test_process_exiting_with_the_restriction_passes(tmp_path: Path) -> None:
    code = (
        "import sys; print('INFO loading', flush=True);"
        " sys.exit('ValueError: --tiny-feature requires an accelerator; drop the flag')"
    )
    outcome, sink, limits = run(tmp_path, recipe(code))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["reason"] == "exited" and outcome.effective["exit_code"] == 1
    assert 0 < outcome.measurements[0].value < PARAMS.deadline_s
    assert {a.role for a in outcome.artifacts} == {"fail-fast-evidence", "server-log"}
    assert b"requires an accelerator" in sink.blobs["server.log"]
    # Two attempts, both refused the same way, each bounded near the deadline.
    assert limits == [30.0, 30.0]
    assert outcome.effective["refusals"] == 2


def test_process_exiting_with_an_unrelated_message_fails(tmp_path: Path) -> None:
    outcome, _, _ = run(tmp_path, recipe("import sys; sys.exit('Segmentation fault')"))
    assert outcome.outcome is GateOutcome.FAILED
    assert any("does not match expected_error" in r and "Segmentation fault" in r
               for r in outcome.reasons)  # fmt: skip


def test_process_that_serves_fails_as_a_silent_fallback(tmp_path: Path) -> None:
    serve = recipe("", command=[sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
                                "--directory", str(tmp_path), "{port}"],
                   readiness={"path": "/", "timeout_s": 30, "interval_s": 0.05})  # fmt: skip
    outcome, _, _ = run(tmp_path, serve)
    assert outcome.outcome is GateOutcome.FAILED
    assert "became ready after" in outcome.reasons[0] and "not enforced" in outcome.reasons[0]
