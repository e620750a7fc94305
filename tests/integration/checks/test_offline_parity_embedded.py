"""offline-parity for real (SKILL G0-08): vLLM-Omni 0.30 serving the bundled sd3-tiny on the CPU
platform, against vLLM-Omni's own offline engine (``Omni.generate``) built in a subprocess of the
target's Python on the same checkpoint with the recipe's flags and environment.

The shipped spec passes the served deployment on the images API and on chat completions (both
paths measured pixel-identical here on every case, on each endpoint; the offline engine runs
once, for both). The fault it exists for is a served path that loses a parameter: the same
server behind a proxy that drops ``guidance_scale`` from every request body (vLLM-Omni 0.30
then samples at its served default, 1.0, where the offline request states 7.0) fails, every
case below the bound.
The served deployment is the sd3-tiny recipe's session-shared server (the gate only sends
requests). Set OMNIQUAL_EMBEDDED_CACHE to reuse checkpoints.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

import yaml

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.parity.reference import ReferenceParityCheck, ReferenceParityParams
from omniqual.client import ClientTimeouts, OmniClient
from omniqual.deploy.embedded.catalog import BuiltCheckpoint
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from tests.integration.checks.test_reference_parity_embedded import _figures, _Sink
from tests.integration.embedded.embedded_server import EMBEDDED_MARKS
from tests.integration.embedded.shared_servers import SharedServer, SharedServers
from tests.integration.embedded.slowing_proxy import slowing_proxy

ROOT = Path(__file__).resolve().parents[3]

pytestmark = EMBEDDED_MARKS
SHARED_SERVERS = ["sd3-tiny"]
"""The session-shared server this module borrows."""


async def _through_proxy(
    ctx: CheckContext, params: ReferenceParityParams, url: str
) -> CheckOutcome:
    async with slowing_proxy(url, 0.0, drops=frozenset({"guidance_scale"})) as proxied:
        at = dataclasses.replace(
            ctx, make_client=lambda: OmniClient(proxied, timeouts=ClientTimeouts(total_s=180))
        )
        return await ReferenceParityCheck().run(at, params)


def _ctx(target: SharedServer, built: BuiltCheckpoint, api_mode: str) -> CheckContext:
    row = RowKey((("model", "sd3-tiny"), ("api_mode", api_mode), ("dtype", "bf16")))
    return CheckContext(
        gate=GateSpec(id="offline-parity", kind="reference_parity", version=1),
        row=row,
        target=TargetInfo(
            url=target.url, pid=target.pid, recipe=target.recipe,
            checkpoint_dir=Path(built.path),
        ),
        artifacts=_Sink(),
        project_root=ROOT,
        make_client=lambda: OmniClient(target.url, timeouts=ClientTimeouts(total_s=180)),
    )


def test_offline_parity_passes_the_served_sd3_and_fails_a_path_that_drops_guidance(
    checkpoints: Callable[[str], BuiltCheckpoint], shared_servers: SharedServers
) -> None:
    built: BuiltCheckpoint = checkpoints("sd3-tiny")
    spec = yaml.safe_load((ROOT / "gates/offline-parity.yaml").read_text(encoding="utf-8"))
    params = ReferenceParityParams.model_validate(spec["params"])
    with shared_servers.borrow("sd3-tiny") as target:
        ctx = _ctx(target, built, "images-generations")
        served = asyncio.run(ReferenceParityCheck().run(ctx, params))
        chat = asyncio.run(ReferenceParityCheck().run(_ctx(target, built, "chat-completions"),
                                                      params))  # fmt: skip
        dropped = asyncio.run(_through_proxy(ctx, params, target.url))

    for outcome in (served, chat):
        assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
        assert outcome.effective["reference_pipeline"] == "vllm_omni.Omni"
        exact = _figures(outcome.measurements, "/exact_pixels")
        assert len(outcome.cases) == 6 and len(exact) == 6
        print("\nsd3-tiny offline-parity:", outcome.cases[0].endpoint, outcome.outcome.value,
              {k.split("/")[-2]: v for k, v in exact.items()})  # fmt: skip

    assert dropped.outcome is GateOutcome.FAILED, dropped.reasons
    dropped_psnr = _figures(dropped.measurements, "/psnr")
    assert len(dropped_psnr) == 6 and max(dropped_psnr.values()) < 40.0, dropped_psnr
    assert all(c.outcome is GateOutcome.FAILED for c in dropped.cases)
    print("guidance_scale dropped on the served path:", dropped.outcome.value,
          {k.split("/")[-2]: round(v, 1) for k, v in dropped_psnr.items()})
