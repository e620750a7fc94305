"""Feature-table cells derived from compiled rows: symbol per state, numbered notes, evidence
links, hardware in every heading, and only rows of exactly that feature deciding a cell."""

import re

import pytest

from omniqual.domain.outcomes import CellState as S
from omniqual.report.support_document import render_support_tables
from omniqual.report.support_tables import model_support_table
from tests.unit.report.support_fixtures import GPU, HW, MAPPING, matrix, row

CACHE = "⚡Cache-DiT"
OFFLOAD = "💾CPU Offload (Layerwise)"
STEP = "🔄Step Execution"
VAE = "💾VAE-Patch-Parallel"
FAILED_PARITY = {"api-contract": "passed", "parity": "failed"}


def cells(compiled: object, model: str = "sd3-tiny", hardware: str = HW) -> dict[str, object]:
    table = model_support_table(compiled, MAPPING, model, hardware)  # type: ignore[arg-type]
    (section,) = table.sections
    return {c.column: c for c in section.cells}


def test_each_state_makes_its_symbol_note_and_link() -> None:
    compiled = matrix(
        row(S.VALIDATED),
        row(S.VALIDATED, offload="layerwise-nopin"),
        row(S.LIMITED, cache_policy="cache_dit", limitation="cache_dit: activity not provable",
            reasons=("limitation: cache_dit: activity not provable",)),
        row(S.UNSUPPORTED, execution="step/1", note="The pipeline lacks the step contract.",
            reasons=("refused early with an actionable error, as proven by: fails-fast",)),
    )  # fmt: skip
    table = model_support_table(compiled, MAPPING, "sd3-tiny", HW)
    got = {c.column: c for c in table.sections[0].cells}
    assert (got[OFFLOAD].symbol, got[OFFLOAD].note) == ("✅", "")
    assert got[CACHE].symbol == "✅" and got[CACHE].state is S.LIMITED
    assert got[CACHE].note == "limited: cache_dit: activity not provable"
    assert got[STEP].symbol == "❌"
    assert "as proven by: fails-fast" in got[STEP].note
    assert "lacks the step contract" in got[STEP].note
    assert got[VAE].symbol == "❓" and got[VAE].link == ""
    for column in (OFFLOAD, CACHE, STEP):
        assert got[column].link.startswith("runs/run-1/journal.jsonl#")
    line = next(x for x in table.markdown.splitlines() if x.startswith("| **Stable"))
    assert line == (
        f"| **Stable-Diffusion-3** | [✅]({got[CACHE].link})<sup>1</sup> | "
        f"[✅]({got[OFFLOAD].link}) | [❌]({got[STEP].link})<sup>2</sup> | ❓ |"
    )
    assert "1. limited: cache_dit: activity not provable" in table.markdown
    assert re.search(r"^2\. refused early .*lacks the step contract", table.markdown, re.M)
    assert f"### ImageGen on {HW}" in table.markdown


def test_a_feature_without_a_row_and_a_not_tested_row_are_unverified() -> None:
    got = cells(matrix(row(S.VALIDATED), row(S.NOT_TESTED, cache_policy="cache_dit",
                                             reasons=("parity: no result",))))  # fmt: skip
    assert got[CACHE].symbol == "❓" and got[CACHE].link == "" and got[CACHE].note == ""
    assert got[OFFLOAD].symbol == "❓" and got[OFFLOAD].covering == 0


def test_a_failed_required_gate_is_noted_on_the_unverified_cell() -> None:
    got = cells(matrix(row(S.NOT_TESTED, cache_policy="cache_dit",
                           gate_outcomes={"api-contract": "passed", "parity": "failed"},
                           reasons=("parity failed: cache_dit: fast path inactive",))))  # fmt: skip
    assert got[CACHE].symbol == "❓"
    assert got[CACHE].failed_gates == ("parity",)
    assert "fast path inactive" in got[CACHE].note


def test_the_baseline_and_combined_rows_decide_no_single_feature() -> None:
    # A validated baseline and a validated cache+offload combination say nothing about either
    # feature alone.
    got = cells(matrix(row(S.VALIDATED), row(S.VALIDATED, cache_policy="cache_dit",
                                             offload="layerwise")))  # fmt: skip
    assert got[CACHE].symbol == "❓" and got[OFFLOAD].symbol == "❓"


def test_a_refused_lane_beside_a_passing_one_is_no_tick_and_names_both() -> None:
    # Every covering row must agree for a tick: a refused configuration of the feature on this
    # model is a refusal a user can meet, whatever another configuration shows.
    got = cells(matrix(row(S.UNSUPPORTED, offload="layerwise", reasons=("refused: pin",)),
                       row(S.VALIDATED, offload="layerwise-nopin")))  # fmt: skip
    offload = got[OFFLOAD]
    assert offload.state is S.UNSUPPORTED and offload.symbol == "❌" and offload.covering == 2
    assert "offload=layerwise;" in offload.row_key and offload.link
    assert offload.note == "offload=layerwise: refused: pin; passed on offload=layerwise-nopin"


def test_a_failed_lane_beside_a_validated_one_is_unverified_naming_the_failure() -> None:
    got = cells(matrix(
        row(S.VALIDATED, offload="layerwise-nopin"),
        row(S.NOT_TESTED, offload="layerwise", gate_outcomes=FAILED_PARITY,
            reasons=("api-contract: no usable result", "parity: latest result failed (psnr 9)")),
    ))  # fmt: skip
    offload = got[OFFLOAD]
    assert offload.state is S.NOT_TESTED and offload.symbol == "❓" and offload.link == ""
    assert offload.failed_gates == ("parity",)
    assert offload.note == ("not verified: offload=layerwise: parity: latest result failed "
                            "(psnr 9); passed on offload=layerwise-nopin")  # fmt: skip


def test_a_failure_outranks_a_refusal_and_a_limited_lane_limits_the_tick() -> None:
    failed_and_refused = cells(matrix(
        row(S.UNSUPPORTED, offload="layerwise", reasons=("refused",)),
        row(S.NOT_TESTED, offload="layerwise-nopin", gate_outcomes=FAILED_PARITY,
            reasons=("parity: latest result failed",)),
    ))  # fmt: skip
    assert failed_and_refused[OFFLOAD].symbol == "❓"
    assert failed_and_refused[OFFLOAD].failed_gates == ("parity",)
    limited = cells(matrix(row(S.VALIDATED, offload="layerwise"),
                           row(S.LIMITED, offload="layerwise-nopin", limitation="one at a time"),
                           row(S.NOT_TESTED, offload="layerwise", dtype="fp16")))  # fmt: skip
    # The untested lane says nothing either way: absent evidence is no disagreement.
    assert limited[OFFLOAD].state is S.LIMITED and limited[OFFLOAD].covering == 3
    assert limited[OFFLOAD].note == "limited: offload=layerwise-nopin: one at a time"
    assert "offload=layerwise-nopin" in limited[OFFLOAD].row_key


def test_rows_of_other_hardware_never_speak_for_a_cell() -> None:
    compiled = matrix(row(S.VALIDATED), row(S.VALIDATED, hardware=GPU),
                      row(S.VALIDATED, hardware=GPU, cache_policy="cache_dit"))  # fmt: skip
    assert cells(compiled)[CACHE].symbol == "❓"
    assert cells(compiled, hardware=GPU)[CACHE].symbol == "✅"
    text = render_support_tables(compiled, MAPPING)
    assert f"### ImageGen on {HW}" in text and f"### ImageGen on {GPU}" in text
    assert f"## Feature Compatibility on {HW}" in text
    only = render_support_tables(compiled, MAPPING, GPU)
    assert HW not in only
    with pytest.raises(ValueError, match="no row of m is on hardware 'tpu'"):
        render_support_tables(compiled, MAPPING, "tpu")


def test_document_numbers_notes_across_tables_and_states_the_legend() -> None:
    compiled = matrix(
        row(S.VALIDATED),
        row(S.LIMITED, cache_policy="cache_dit", limitation="first bound"),
        row(S.VALIDATED, model="wan-tiny", task="t2v"),
        row(S.LIMITED, model="wan-tiny", task="t2v", execution="step/1", limitation="second"),
    )  # fmt: skip
    text = render_support_tables(compiled, MAPPING)
    assert "- ❓: not verified yet and not recommended" in text
    assert "1. limited: first bound" in text and "2. limited: second" in text
    image, video = text.index("### ImageGen"), text.index("### VideoGen")
    assert image < text.index("1. limited") < video < text.index("2. limited")
    header = f"| Model | {CACHE} | {OFFLOAD} | {STEP} | {VAE} |"
    assert text.count(header) == 2
    assert "| **Wan2.2** |" in text


def test_the_pair_table_is_built_from_rows_combining_two_features() -> None:
    compiled = matrix(
        row(S.VALIDATED),
        row(S.VALIDATED, cache_policy="cache_dit"),
        row(S.VALIDATED, cache_policy="cache_dit", offload="layerwise"),
        row(S.UNSUPPORTED, cache_policy="cache_dit", execution="step/1", reasons=("refused",)),
    )  # fmt: skip
    text = render_support_tables(compiled, MAPPING)
    pairs = text[text.index("## Feature Compatibility"):]
    table = {}
    for line in pairs.splitlines():
        if line.startswith("| **"):
            first, *rest = [c.strip() for c in line.strip().strip("|").split("|")]
            table[first] = rest
    assert table["**⚡Cache-DiT**"] == ["", "", ""]
    offload = table["**💾CPU Offloading (Layerwise)**"]
    assert re.fullmatch(r'\[✅\]\(runs/run-1/journal\.jsonl#[^ ]*offload=layerwise[^ ]* '
                        r'"on Stable-Diffusion-3"\)', offload[0])
    assert offload[1:] == ["", ""]
    step = table["**🔄Step Execution**"]
    assert step[0].startswith("[❌](") and step[0].endswith("<sup>1</sup>")
    assert step[1:] == ["❓", ""]
    assert "\n1. refused\n" in pairs
