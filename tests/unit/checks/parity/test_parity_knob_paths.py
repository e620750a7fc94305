"""Parity's fast paths for the knobs users ship beside the classic ones: parallel topologies
shown by their second rank's log lines, attention backends by their resolution lines, the
regional torch.compile by its outputs, the prompt-embedding cache only as a limitation; each
switched off on a whole launch log fails."""

from pathlib import Path

import pytest

from omniqual.deploy.launcher import LAUNCH_MARKER
from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.parity.test_candidate_parity import (
    SILENT_FALLBACK,
    noisy,
    params,
    row,
    run,
)

CFG_LOG = (
    "(DiffusionWorker_CFG0 pid=11) INFO [diffusion_worker.py:316] Worker 0: Initialization "
    "complete.\n(DiffusionWorker_CFG1 pid=12) INFO [diffusion_worker.py:316] Worker 1: "
    "Initialization complete.\n"
)


def test_cfg_parallel_whose_second_rank_ran_passes_within_the_parallel_bound(
    tmp_path: Path,
) -> None:
    outcome, _ = run(row(topology="cfg-parallel2"), params(), log=CFG_LOG, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["parity"]["tolerance"] == "parallel"


def test_a_parallel_knob_the_server_ignored_fails_on_its_whole_launch_log(
    tmp_path: Path,
) -> None:
    # One unnamed worker: --cfg-parallel-size 2 accepted and nothing split. Read from its launch
    # marker on, the log has every start-up line, so the missing second rank is the proof.
    single = ("(DiffusionWorker pid=11) INFO [diffusion_worker.py:316] Worker 0: "
              "Initialization complete.\n")  # fmt: skip
    whole = f"{LAUNCH_MARKER}sd3-tiny-cfg-parallel2 at 2026-12-05T09:00:00+00:00\n{single}"
    outcome, _ = run(row(topology="cfg-parallel2"), params(), log=whole, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any("topology=cfg-parallel2: fast path inactive" in r
               and "lines of the second CFG rank = 0 in the whole launch log" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip
    # A log window without the launch marker may have lost the start-up lines: not shown.
    cut, _ = run(row(topology="cfg-parallel2"), params(), log=single, tmp_path=tmp_path)
    assert cut.outcome is GateOutcome.INVALID, cut.reasons
    assert any("topology=cfg-parallel2: fast path not shown active" in r for r in cut.reasons)


COMPILE_LOG = (f"{LAUNCH_MARKER}sd3-tiny-compile at 2026-12-05T09:00:00+00:00\n"
               "INFO [compile.py:103] Regional compilation applied to 2 module(s) for repeated "
               "blocks ['SD3TransformerBlock'].\n")  # fmt: skip


def test_a_compile_row_that_never_compiled_fails_as_a_silent_fallback(tmp_path: Path) -> None:
    eager = f"{LAUNCH_MARKER}sd3-tiny-compile at 2026-12-05T09:00:00+00:00\nINFO ready\n"
    outcome, _ = run(row(execution="serial/1+compile"), params(), log=eager, tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    (reason,) = [r for r in outcome.reasons if SILENT_FALLBACK in r]
    assert "regionally compiled modules = 0 in the whole launch log" in reason


PEC_LINE = ("INFO [prompt_embed_cache.py:279] Prompt-embed cache installed on "
            "StableDiffusion3Pipeline (max_size=32, enabled=True).\n")  # fmt: skip


def test_the_prompt_embedding_cache_passes_only_as_a_limitation_and_fails_when_off(
    tmp_path: Path,
) -> None:
    marker = f"{LAUNCH_MARKER}sd3-tiny-prompt-embed-cache at 2026-12-05T09:00:00+00:00\n"
    key = row(cache_policy="prompt-embed")
    on, _ = run(key, params(), log=marker + PEC_LINE, tmp_path=tmp_path)
    assert on.outcome is GateOutcome.PASSED, on.reasons
    (limitation,) = on.limitations
    assert "activity not provable" in limitation
    off, _ = run(key, params(), log=marker + "INFO ready\n", tmp_path=tmp_path)
    assert off.outcome is GateOutcome.FAILED, off.reasons
    assert any("prompt-embedding cache installations = 0" in r for r in off.reasons)


SAGE_LOG = ("INFO [selector.py:94] Resolved diffusion attention backend 'SAGE_ATTN' for "
            "role='self' via attention_config\n")  # fmt: skip


@pytest.mark.parametrize(
    ("axis", "value", "log", "tolerance"),
    [("execution", "serial/1+compile", COMPILE_LOG, "compiled"),
     ("attention_backend", "sage", SAGE_LOG, "quantized_attention")],
)
def test_a_shown_path_is_held_to_its_own_bound(
    axis: str, value: str, log: str, tolerance: str, tmp_path: Path
) -> None:
    """A compiled row and a lossy attention backend, each shown by its log: within its bound it
    passes, beyond it fails."""
    key = row(**{axis: value})
    outcome, _ = run(key, params(), log=log, mutate=noisy(2), tmp_path=tmp_path)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["parity"]["tolerance"] == tolerance
    far, _ = run(key, params(), log=log, mutate=noisy(60), tmp_path=tmp_path)
    assert far.outcome is GateOutcome.FAILED, far.reasons
