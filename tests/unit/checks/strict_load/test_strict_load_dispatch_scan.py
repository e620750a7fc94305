"""G2-04 through the strict-load gate: a model's own code that calls ``forward_cuda()`` (or
another platform's forward) on a layer fails naming file:line; a CustomOp implementing one
platform through another on ``self`` or ``super()`` does not. Toy sources, no torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omniqual.checks.strict_load.dispatch_scan import scan_text
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import toy_checkpoint as toy
from tests.unit.checks.strict_load.test_strict_load_source_scan import (
    CLEAN_TRANSFORMER,
    case,
    run,
    with_sources,
    write_sources,
)

DIRECT = CLEAN_TRANSFORMER + """

class ToyBlock(torch.nn.Module):
    def forward(self, x):
        x = self.norm.forward_cuda(x)
        return self.proj(x)
"""

OWN_DISPATCH = """\
import torch


class ToyNorm(CustomOp):
    def forward_native(self, x):
        return x

    def forward_cuda(self, x):
        return self.forward_native(x)


class ToyFusedNorm(ToyNorm):
    def forward_cuda(self, x):
        if x.ndim == 2:
            return super().forward_cuda(x)
        return x


class ToyBlock(torch.nn.Module):
    def forward(self, x):
        # self.norm.forward_cuda(x) would pin CUDA; this comment and the string are no call
        note = "layer.forward_cuda(x)"
        return self.norm(x)
"""


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    return toy.build(tmp_path)


def test_a_direct_forward_cuda_call_fails_naming_file_and_line(
    tmp_path: Path, checkpoint: Path
) -> None:
    with_sources(checkpoint, write_sources(tmp_path, DIRECT))
    outcome, sink = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if "forward_cuda" in r]
    line = DIRECT.splitlines().index("        x = self.norm.forward_cuda(x)") + 1
    assert reason.startswith(f"vllm_omni/models/toy/transformer.py:{line}:")
    assert "CustomOp dispatch" in reason
    assert case(outcome, "custom-op-dispatch")[0] is GateOutcome.FAILED
    scan = json.loads(sink.blobs["custom-op-dispatch.json"])
    assert [f["line"] for f in scan["findings"]] == [line]


def test_a_custom_ops_own_dispatch_and_module_calls_pass(
    tmp_path: Path, checkpoint: Path
) -> None:
    with_sources(checkpoint, write_sources(tmp_path, OWN_DISPATCH))
    outcome, _ = run(tmp_path, checkpoint)
    assert case(outcome, "custom-op-dispatch")[0] is GateOutcome.PASSED, outcome.reasons


def test_another_platforms_forward_called_from_outside_its_op_is_found() -> None:
    text = "def run(layer, x):\n    return layer.forward_hip(x)\n"
    (found,) = scan_text(text, "m.py")
    assert found.line == 2 and "forward_hip" in found.code


def test_without_source_files_the_dispatch_scan_is_absent_and_says_why(
    tmp_path: Path, checkpoint: Path
) -> None:
    outcome, _ = run(tmp_path, checkpoint)
    state, note = case(outcome, "custom-op-dispatch")
    assert state is GateOutcome.SKIPPED and "names no source files" in note
