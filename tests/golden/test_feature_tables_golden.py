"""Golden file of the vLLM-Omni-shaped feature tables of the project's embedded matrix, compiled
by the real compiler from a fixed set of recorded results; and the shape the tables must never
hide: SD3's Cache-DiT cell on evidence that the cache was not shown at work. Regenerate with
``OMNIQUAL_UPDATE_GOLDEN=1`` (see golden_files)."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from omniqual.compile.matrix import LocatedResult, compile_matrix
from omniqual.domain.matrix import CompiledMatrix
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.provenance import Provenance
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.evidence.store import RunWriter
from omniqual.report.claims_audit import Verdict, audit_claims
from omniqual.report.claims_markdown import parse_claims
from omniqual.report.support_document import render_support_tables
from omniqual.report.support_tables import model_support_table
from omniqual.specs.feature_tables import load_feature_tables
from tests.fakes.evidence import FINGERPRINT, result
from tests.golden.golden_files import assert_matches_golden

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "vllm-omni-features" / "embedded-cpu.md"
HW = "cpu-x86_64-2core-avx2"
KEY = (
    "model={model};task=t2i;api_mode=images-generations;execution={ex};shape_schedule=default;"
    "attention_backend=sdpa;packed_layout=padded;cache_policy={cache};quantization={q};"
    "offload={off};topology=1-device;hardware=cpu-x86_64-2core-avx2;dtype=bf16;"
    "output_transport=b64-json"
)


def key(model: str = "sd3-tiny", ex: str = "serial/1", cache: str = "none", q: str = "none",
        off: str = "resident") -> str:  # fmt: skip
    return KEY.format(model=model, ex=ex, cache=cache, q=q, off=off)


AT = Provenance(vllm_omni_version="0.30.0", checkpoint_sha256="c" * 64,
                serve_config_sha256="e" * 64, source="launched")  # fmt: skip
NOT_PROVABLE = "cache_dit: activity not provable on this release (no cache log line)"
CACHE = key(cache="cache_dit")
PASSED = (O.PASSED, ())


def compiled_from(tmp_path: Path, recorded: list[tuple[str, str, O, tuple[str, ...]]]
                  ) -> CompiledMatrix:  # fmt: skip
    loaded = load_project_matrix(ROOT / "matrices" / "embedded-cpu.yaml")
    writer = RunWriter.create(tmp_path, command=("omniqual",), environment=FINGERPRINT,
                              run_id="run-golden")  # fmt: skip
    current = loaded.current_gates()
    results: list[GateResult] = []
    for i, (gate, row, outcome, limitations) in enumerate(recorded):
        made = result(writer, gate, row, outcome, provenance=AT,
                      reasons=("measured",) if outcome is not O.PASSED else ())  # fmt: skip
        results.append(made.model_copy(update={
            "result_id": f"result-{i}", "limitations": limitations,
            "gate_version": current[gate].version, "gate_spec_sha256": current[gate].spec_sha256,
        }))  # fmt: skip
    located = [LocatedResult(r, f"runs/run-golden/journal.jsonl#{r.result_id}") for r in results]
    return compile_matrix(loaded.matrix, current, located, now=datetime(2026, 1, 1, tzinfo=UTC))


def passing(row: str, *gates: str) -> list[tuple[str, str, O, tuple[str, ...]]]:
    return [(gate, row, O.PASSED, ()) for gate in gates]


def test_embedded_feature_tables_render_as_recorded(tmp_path: Path) -> None:
    recorded = [
        *passing(key(), "api-contract", "strict-load", "reference-parity", "abort", "soak",
                 "offload-sweep"),
        ("fails-fast", key(ex="step/1"), O.PASSED, ()),
        ("fails-fast", key(off="layerwise"), O.PASSED, ()),
        *passing(key(off="layerwise-nopin"), "api-contract", "strict-load", "abort", "soak",
                 "parity", "offload-sweep"),
        ("api-contract", CACHE, O.PASSED, ()),
        ("parity", CACHE, O.PASSED, (NOT_PROVABLE,)),
        ("cache-tiers", CACHE, O.PASSED, ()),
        # The Cache-DiT posture: faults and concurrency hold the next request to its own policy.
        *passing(CACHE, "fault-injection", "isolation"),
        ("fails-fast", key(q="fp8-online-dit"), O.FAILED, ()),
        *passing(key(model="qwen-image-tiny", ex="step/1"), "api-contract", "abort", "soak",
                 "parity", "isolation", "step-ab"),
        # A candidate counts only beside its parent's correctness (the SD3 baseline's is above).
        ("reference-parity", key(model="qwen-image-tiny"), O.PASSED, ()),
    ]  # fmt: skip
    compiled = compiled_from(tmp_path, recorded)
    mapping = load_feature_tables(ROOT / "matrices" / "vllm-omni-features.yaml")
    sd3 = model_support_table(compiled, mapping, "sd3-tiny", HW)
    cells = {c.column: c for c in sd3.sections[0].cells}
    assert cells["🔄Step Execution"].state is CellState.UNSUPPORTED
    # The pinned lane is refused, the unpinned one validated: no tick while a lane is refused.
    assert cells["💾CPU Offload (Layerwise)"].state is CellState.UNSUPPORTED
    assert "passed on offload=layerwise-nopin" in cells["💾CPU Offload (Layerwise)"].note
    assert cells["⚡Cache-DiT"].state is CellState.LIMITED
    assert cells["💾Quantization"].state is CellState.NOT_TESTED
    text = render_support_tables(compiled, mapping)
    assert "| **Qwen-Image** |" in text and "[✅](runs/run-golden/journal.jsonl#result-" in text
    assert_matches_golden(GOLDEN, text)


@pytest.mark.parametrize(
    ("outcome", "limitations", "state", "claimed"),
    [
        (O.PASSED, (NOT_PROVABLE,), CellState.LIMITED, Verdict.LIMITATION_OMITTED),
        (O.FAILED, (), CellState.NOT_TESTED, Verdict.CONTRADICTED),
        (O.INVALID, (), CellState.NOT_TESTED, Verdict.UNVERIFIED),
    ],
)
def test_sd3_cache_dit_is_never_a_bare_tick_when_the_cache_was_not_shown_at_work(
    tmp_path: Path, outcome: O, limitations: tuple[str, ...], state: CellState, claimed: Verdict
) -> None:
    compiled = compiled_from(tmp_path, [("api-contract", CACHE, O.PASSED, ()),
                                        ("cache-tiers", CACHE, O.PASSED, ()),
                                        ("fault-injection", CACHE, O.PASSED, ()),
                                        ("isolation", CACHE, O.PASSED, ()),
                                        ("parity", CACHE, outcome, limitations),
                                        # the parent's correctness, beside which it counts
                                        ("reference-parity", key(), O.PASSED, ())])  # fmt: skip
    mapping = load_feature_tables(ROOT / "matrices" / "vllm-omni-features.yaml")
    table = model_support_table(compiled, mapping, "sd3-tiny", HW)
    cell = next(c for c in table.sections[0].cells if c.column == "⚡Cache-DiT")
    assert cell.state is state
    row = next(x for x in table.markdown.splitlines() if x.startswith("| **Stable"))
    shown = row.split(" | ")[2]  # Model, TeaCache, Cache-DiT
    # Never the plain validated tick: limited carries its numbered note, the rest stay ❓.
    assert shown != "✅" and not shown.endswith(")")
    if state is CellState.LIMITED:
        assert shown.endswith("<sup>1</sup>") and "activity not provable" in table.markdown
    else:
        assert shown.startswith("❓")
    claims = "### ImageGen\n\n| Model | ⚡Cache-DiT |\n|---|---|\n| **Stable-Diffusion-3** | ✅ |\n"
    (finding,) = audit_claims(parse_claims(claims), compiled, mapping).findings
    assert finding.verdict is claimed
