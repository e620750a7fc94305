"""SKILL G3-08: a pre-quantized, pruned or adapter-modified checkpoint is its own lane, never a
"pure quantization ablation". The report's own words never call a lane that (a row's words are
held to it when the matrix loads: ``omniqual.domain.claims.lane_problems``)."""

import re
from pathlib import Path

import omniqual.report


def test_the_report_never_calls_a_lane_an_ablation() -> None:
    root = Path(omniqual.report.__file__).parent
    sources = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".html", ".css", ".js"))
    assert sources
    said = [p.name for p in sources if "ablation" in p.read_text(encoding="utf-8").lower()]
    assert not said, said


def test_the_report_never_calls_a_row_production_ready() -> None:
    # SKILL G8-16: readiness is a row's derived state, never the report's words.
    root = Path(omniqual.report.__file__).parent
    sources = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".html", ".css", ".js"))
    said = [p.name for p in sources
            if re.search(r"production[\s_-]*ready", p.read_text(encoding="utf-8"), re.I)]
    assert not said, said
