"""``omniqual`` as its own process, with one extra check kind for the kill tests.

Usage: PYTHONPATH=REPO python omniqual_child.py ARGS...  (the arguments of ``omniqual``)

The ``blocking`` check writes the served target's pid and url to ``$OMNIQUAL_TEST_MARKER`` and
then waits while ``$OMNIQUAL_TEST_MARKER.block`` exists: the harness is then mid-gate with its
server up, ready to be killed. Without the block file it passes at once.
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import ClassVar, Literal

from omniqual.checks.base import CheckContext, CheckOutcome, CheckParams
from omniqual.domain.outcomes import GateOutcome


class BlockingCheck:
    kind: ClassVar[str] = "blocking"
    params_model: ClassVar[type[CheckParams]] = CheckParams
    needs: ClassVar[Literal["server", "checkpoint", "launches"]] = "server"

    async def run(self, ctx: CheckContext, params: CheckParams) -> CheckOutcome:
        marker = Path(os.environ["OMNIQUAL_TEST_MARKER"])
        marker.write_text(json.dumps({"pid": ctx.target.pid, "url": ctx.target.url}))
        while marker.with_suffix(".block").exists():
            await asyncio.sleep(0.05)
        artifact = ctx.artifacts.put_artifact(
            f"served by pid {ctx.target.pid}".encode(), media_type="text/plain", role="log",
            name="blocking log",
        )  # fmt: skip
        return CheckOutcome(GateOutcome.PASSED, artifacts=(artifact,))


if __name__ == "__main__":
    from omniqual.checks import registry
    from omniqual.cli.main import app

    registry.BUILTIN["blocking"] = "tests.integration.deploy.omniqual_child:BlockingCheck"
    app(sys.argv[1:], prog_name="omniqual")
