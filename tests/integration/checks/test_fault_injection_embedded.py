"""Gate ``fault-injection`` for real, through the engine, as the shipped spec and matrix give it:
the injector loaded into a launch of the row's recipe (vLLM-Omni 0.30 on the CPU platform), every
case fired inside the server. The embedded baseline rows declare ``restart_policy: exits``: this
target runs the diffusion pipeline in the API server's own process, so a worker that exits or
is killed ends the server (its whole tree, nothing orphaned), while every other fault ends its
request with one terminal error, leaves the peers answered with their solo same-seed outputs,
and the server recovers with the same output bytes. The four cancel points (a request held
queued behind a held peer, after encoding, before decoding, in output encoding, and cancelled
there) each reach their hook on both rows and leave nothing behind. The verdict pinned is the
one the shipped spec gives: passed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from omniqual.domain.outcomes import GateOutcome
from omniqual.engine.single_gate import run_single_gate
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS

ROOT = Path(__file__).resolve().parents[3]
pytestmark = EMBEDDED_MARKS

FATAL = {"worker-exit", "worker-sigkill"}
CANCEL_POINTS = {"cancel-before-admission", "cancel-after-encode", "cancel-before-decode",
                 "cancel-during-output"}  # fmt: skip


@pytest.mark.parametrize(
    ("recipe", "row"),
    [("sd3-tiny", "model=sd3-tiny,api_mode=images-generations,execution=serial/1"),
     ("wan-t2v-tiny", "model=wan-t2v-tiny,api_mode=videos-async,quantization=none")],
)  # fmt: skip
def test_every_case_on_the_embedded_target(
    recipe: str, row: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    (result,) = asyncio.run(
        run_single_gate(
            "fault-injection", recipe, row, matrix=ROOT / "matrices" / "embedded-cpu.yaml",
            evidence_root=tmp_path,
            command=("omniqual", "gate", "run", "fault-injection", "--target", recipe),
        )
    )  # fmt: skip
    for case in result.cases:
        print(f"  {case.id}: {case.outcome.value} | {case.observed_status} | {case.note}")
    print(result.outcome.value, result.reasons)
    assert result.outcome is GateOutcome.PASSED, result.reasons
    ids = {case.id for case in result.cases}
    assert ids >= FATAL | CANCEL_POINTS and len(ids) >= 14
    assert all(case.outcome is GateOutcome.PASSED for case in result.cases)
    for case in result.cases:  # every peer that answered gave its solo same-seed output
        if case.id not in FATAL:
            assert "answered their solo output (exact rule)" in case.note, (case.id, case.note)
    records = [a for a in result.artifacts if "record" in a.role or "record" in a.name]
    assert records, "the injector's own record of what it fired is stored"
