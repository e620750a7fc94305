"""The abort gate as shipped (gates/abort.yaml's params, unchanged) against the in-process fake.

The fake has no process of its own, so there is no server CPU time, and the shipped spec does
not take /metrics gauges as proof that cut work stopped (``gauges_prove_stop: false``: a real
vLLM-Omni's drop at the cut while its worker computes on). So a clean fake cannot pass under the
shipped settings: every cut that looks clean is ``invalid`` for that stated reason, and nothing
fails. The fake serves a request in 1.3 s, past the shipped ``min_service_s`` (1.2 s), so the
calibration settles at once, as it does on a real server; its temp dir is the one a launched
target's TMPDIR would be (the shipped ``watch_dirs`` is empty: the server's own)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from omniqual.checks.abort import AbortCheck
from omniqual.checks.abort.params import AbortParams
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.source import load_yaml
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_serial import SerialFakeOmni

SHIPPED = GateSpec.model_validate(
    load_yaml(Path(__file__).resolve().parents[3] / "gates" / "abort.yaml").data
)


def test_a_clean_fake_under_the_shipped_settings_is_invalid_for_want_of_cpu_time(
    tmp_path: Path,
) -> None:
    params = AbortParams.model_validate(SHIPPED.params)
    assert params.gauges_prove_stop is False and params.watch_dirs == ()
    server = SerialFakeOmni(FakeConfig(image_work_s=1.3, temp_dir=tmp_path))
    ctx, _ = context("abort", "images-generations", fake=server)
    ctx = replace(ctx, gate=SHIPPED, target=replace(ctx.target, temp_dirs=(tmp_path,)))
    outcome = asyncio.run(AbortCheck().run(ctx, params))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert {c.id: c.outcome for c in outcome.cases} == dict.fromkeys(
        ("disconnect-queued", "disconnect-early", "disconnect-middle", "disconnect-late",
         "disconnect-burst", "client-timeout"), GateOutcome.INVALID)  # fmt: skip
    assert outcome.reasons and all(
        "no sign of work after the cut on /metrics, but without the server's CPU time that "
        "proves nothing" in r
        for r in outcome.reasons
    ), outcome.reasons
