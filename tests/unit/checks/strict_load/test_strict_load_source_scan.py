"""SL-06 through the strict-load gate: a quantizable parameter written with ``.data.copy_`` on a
``load_weights`` path of the model's own source files fails naming file:line; the same pattern
elsewhere (``__init__``, a buffer, a comment or string) does not; without source files to read
the case is absent and says why. Toy model sources under a fake ``vllm_omni`` tree, no torch."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest

from omniqual.checks.base import CheckContext, CheckOutcome, TargetInfo
from omniqual.checks.strict_load import StrictLoadCheck, StrictLoadParams
from omniqual.domain.axes import RowKey
from omniqual.domain.gate import GateSpec
from omniqual.domain.outcomes import GateOutcome
from tests.fakes import toy_checkpoint as toy
from tests.fakes.memory_sink import MemorySink

PARAMS = StrictLoadParams(runtime="manifest", manifest="runtime-params.json")

CLEAN_TRANSFORMER = """\
import torch


class ToyNorm(torch.nn.Module):
    def weight_loader(self, param, loaded):
        # A parameter's own loader is where the bytes land: the hooks wrap it.
        param.data.copy_(loaded)


class ToyTransformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # Construction may fill a constant: it is no load path.
        self.pos_embed.data.copy_(torch.zeros(4))

    def load_weights(self, weights):
        params = dict(self.named_parameters())
        buffers = dict(self.named_buffers())
        for name, tensor in weights:
            if name in buffers:
                buffers[name].data.copy_(tensor)  # a buffer carries no quant method
                continue
            param = params[name]
            # param.data.copy_(tensor) would bypass the loader; this comment is no call
            note = "param.data.copy_(tensor)"
            param.weight_loader(param, tensor)
        return set(params)
"""

COPYING_TRANSFORMER = """\
import torch


class ToyTransformer(torch.nn.Module):
    def load_weights(self, weights):
        params = dict(self.named_parameters())
        for name, tensor in weights:
            params[name].data.copy_(tensor)
        return set(params)
"""

HELPER_TRANSFORMER = """\
import torch


def _load_qkv(param, tensor, shard):
    start = {"q": 0, "k": 8, "v": 16}[shard]
    if shard == "q":
        param.data.copy_(tensor)
    param.data[start:start + 8].copy_(tensor)
    param.weight_loader(param, tensor.clone().copy_(tensor))


class ToyTransformer(torch.nn.Module):
    def load_weights(self, weights):
        params = dict(self.named_parameters())
        for name, tensor in weights:
            self._load_one(params[name], tensor)
        return set(params)

    def _load_one(self, param, tensor):
        if param.ndim == 2:
            _load_qkv(param, tensor, "q")
        else:
            param.weight_loader(param, tensor)
"""


def write_sources(root: Path, transformer: str) -> dict[str, str]:
    """A fake installed package: ``<root>/site/vllm_omni/models/toy/{pipeline,transformer}.py``."""
    folder = root / "site" / "vllm_omni" / "models" / "toy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pipeline.py").write_text("class ToyPipeline:\n    pass\n", encoding="utf-8")
    (folder / "transformer.py").write_text(transformer, encoding="utf-8")
    return {"pipeline": str(folder / "pipeline.py"), "transformer": str(folder / "transformer.py")}


def with_sources(checkpoint: Path, files: dict[str, str]) -> None:
    manifest = json.loads((checkpoint / "runtime-params.json").read_text())
    manifest["source_files"] = files
    (checkpoint / "runtime-params.json").write_text(json.dumps(manifest))


def run(root: Path, checkpoint: Path) -> tuple[CheckOutcome, MemorySink]:
    sink = MemorySink()
    ctx = CheckContext(
        gate=GateSpec(id="strict-load", kind="strict_load", version=3),
        row=RowKey((("model", "toy"),)),
        target=TargetInfo(url=None, checkpoint_dir=checkpoint, label="toy"),
        artifacts=sink, project_root=root,
        make_client=lambda: (_ for _ in ()).throw(AssertionError),  # type: ignore[arg-type,return-value]
    )  # fmt: skip
    return asyncio.run(StrictLoadCheck().run(ctx, PARAMS)), sink


def case(outcome: CheckOutcome, case_id: str) -> tuple[GateOutcome, str]:
    (found,) = [c for c in outcome.cases if c.id == case_id]
    return found.outcome, found.note


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    return toy.build(tmp_path)


def test_data_copy_in_load_weights_fails_naming_file_and_line(
    tmp_path: Path, checkpoint: Path
) -> None:
    with_sources(checkpoint, write_sources(tmp_path, COPYING_TRANSFORMER))
    outcome, sink = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if ".data.copy_" in r]
    assert reason.startswith("vllm_omni/models/toy/transformer.py:8: ToyTransformer.load_weights")
    assert "params[name].data.copy_(tensor)" in reason
    assert "bypasses" in reason and "weight_loader" in reason
    assert case(outcome, "load-weights-scan")[0] is GateOutcome.FAILED
    scan = json.loads(sink.blobs["load-weights-scan.json"])
    assert [f["line"] for f in scan["findings"]] == [8]
    assert sorted(Path(f).name for f in scan["files"]) == ["pipeline.py", "transformer.py"]


def test_a_helper_reached_from_load_weights_is_on_the_load_path(
    tmp_path: Path, checkpoint: Path
) -> None:
    with_sources(checkpoint, write_sources(tmp_path, HELPER_TRANSFORMER))
    outcome, _ = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    flagged = sorted(int(r.split(":")[1]) for r in outcome.reasons if "_load_qkv" in r)
    # Line 7 writes `.data` whole, line 8 a slice of it: both skip the loader. Line 9 copies
    # into a fresh tensor it then hands to the loader: no parameter is written.
    assert flagged == [7, 8], outcome.reasons


def test_copies_off_the_load_path_on_buffers_or_in_text_pass(
    tmp_path: Path, checkpoint: Path
) -> None:
    with_sources(checkpoint, write_sources(tmp_path, CLEAN_TRANSFORMER))
    outcome, sink = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert case(outcome, "load-weights-scan")[0] is GateOutcome.PASSED
    scan = json.loads(sink.blobs["load-weights-scan.json"])
    assert scan["findings"] == []
    assert "ToyTransformer.load_weights" in scan["load_paths"][scan["files"][1]]


def test_the_file_the_mapping_mirrors_is_scanned_too(tmp_path: Path, checkpoint: Path) -> None:
    files = write_sources(tmp_path, CLEAN_TRANSFORMER)
    loader = Path(files["transformer"]).with_name("loader.py")
    loader.write_text(COPYING_TRANSFORMER, encoding="utf-8")
    with_sources(checkpoint, files)
    mapping = copy.deepcopy(toy.MAPPING)
    mapping["components"]["transformer"]["mirrors"] = (  # type: ignore[index]
        "vllm_omni/models/toy/loader.py ToyTransformer.load_weights"
    )
    toy.write_mapping(tmp_path, mapping)
    outcome, _ = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any(r.startswith("vllm_omni/models/toy/loader.py:8:") for r in outcome.reasons)


def test_an_unparsable_model_file_is_invalid_not_passed(tmp_path: Path, checkpoint: Path) -> None:
    with_sources(checkpoint, write_sources(tmp_path, "def load_weights(:\n"))
    outcome, _ = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any("transformer.py" in r and "cannot be parsed" in r for r in outcome.reasons)


def test_without_source_files_the_scan_is_absent_and_says_why(
    tmp_path: Path, checkpoint: Path
) -> None:
    outcome, _ = run(tmp_path, checkpoint)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    state, note = case(outcome, "load-weights-scan")
    assert state is GateOutcome.SKIPPED
    assert "names no source files" in note
