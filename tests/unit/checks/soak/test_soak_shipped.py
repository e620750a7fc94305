"""The soak gate as shipped (gates/soak.yaml: its shapes, saturation search, phases and validity,
unchanged) against the in-process serial fake: a clean fake passes.

The fake serves one request at a time in 30 ms whatever the shape, a knee of about 30 requests
a second, inside the shipped search's range (``max_rps`` 60; at 10 ms a request the fake is
faster than the search looks and the verdict is ``invalid``: saturation not reached). Its temp
dir is the one a launched target's TMPDIR would be (the shipped ``watch_dirs`` is empty: the
server's own). About 10 s: the shipped phases' request counts at the fake's rates."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from omniqual.checks.soak import SoakCheck
from omniqual.checks.soak.params import SoakParams
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.source import load_yaml
from tests.fakes.check_context import context
from tests.fakes.fake_config import FakeConfig
from tests.fakes.fake_serial import SerialFakeOmni

SHIPPED = GateSpec.model_validate(
    load_yaml(Path(__file__).resolve().parents[4] / "gates" / "soak.yaml").data
)


def test_a_clean_fake_passes_the_shipped_soak(tmp_path: Path) -> None:
    params = SoakParams.model_validate(SHIPPED.params)
    assert params.saturation.assume_rps is None and params.validity.max_p99_issue_lag_s == 0.05
    server = SerialFakeOmni(FakeConfig(image_work_s=0.03, temp_dir=tmp_path))
    ctx, harness = context("soak", "images-generations", fake=server)
    ctx = replace(ctx, gate=SHIPPED, target=replace(ctx.target, temp_dirs=(tmp_path,)))
    outcome = asyncio.run(SoakCheck().run(ctx, params))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert harness.progress[-4:] == ["soak: saturation search", "soak phase below",
                                     "soak phase near", "soak phase above"]  # fmt: skip
    measured = {m.name: m.value for m in outcome.measurements}
    summary = json.loads(harness.sink.blobs["soak-summary.json"])
    assert measured["saturation_rps"] == summary["saturation"]["saturation_rps"]
    assert server.state.aborted >= 1  # the shipped injections reached the server
