"""Reading hand-written support tables: the upstream-shaped fixture, then malformed variants,
each named by line and never read as some claim."""

from pathlib import Path

from omniqual.report.claims_markdown import Claim, parse_claims, plain, split_cells

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "feature-tables" / "diffusion_features.md"
HEADER = "| Model | ⚡TeaCache | ⚡Cache-DiT |\n|-------|:---:|:---:|\n"


def test_fixture_reads_every_table_with_its_heading_and_kind() -> None:
    parsed = parse_claims(FIXTURE.read_text(encoding="utf-8"))
    assert parsed.problems == ()
    kinds = [(t.heading, t.kind, len(t.rows)) for t in parsed.tables]
    assert kinds == [
        ("Feature Overview", "other", 2),
        ("ImageGen", "models", 4),
        ("VideoGen", "models", 1),
        ("AudioGen", "models", 1),
        ("Feature Compatibility", "pairs", 14),
    ]
    image = parsed.tables[1]
    assert len(image.columns) == 11 and image.columns[7] == "💾CPU Offload (Layerwise)"
    sd3, qwen, _, lumina = image.rows
    assert (sd3.name, qwen.name) == ("Stable-Diffusion-3", "Qwen-Image")
    # "✅️" carries a variation selector; it is the same claim.
    assert sd3.cells[6].claim is Claim.SUPPORTED
    assert [c.claim for c in sd3.cells[:3]] == [Claim.UNSUPPORTED, Claim.SUPPORTED,
                                                Claim.UNSUPPORTED]  # fmt: skip
    assert lumina.cells[4].text == "✅ (TP=2 only)" and lumina.cells[4].claim is Claim.SUPPORTED
    pairs = parsed.tables[-1]
    assert pairs.rows[1].cells[0].claim is Claim.UNSUPPORTED
    assert pairs.rows[0].cells[0].claim is None  # the blank upper triangle


def test_cells_read_through_emphasis_links_footnotes_and_spacing() -> None:
    assert plain("  **[Qwen-Image](x.md)**  ") == "Qwen-Image"
    assert plain("[✅](runs/r/journal.jsonl#1 \"on X\")<sup>3</sup>") == "✅"
    assert plain("✅\ufe0f[^2]") == "✅"
    assert plain(":x:") == "❌"
    assert split_cells(r"| a `b|c` | d\|e |") == ["a `b|c`", r"d\|e"]
    parsed = parse_claims("## ImageGen\n\nModel | ⚡TeaCache\n---|---\nFoo |  ❓  \n")
    assert parsed.tables[0].rows[0].cells[0].claim is Claim.UNVERIFIED


def test_a_ragged_row_is_reported_and_not_read() -> None:
    parsed = parse_claims(f"### ImageGen\n\n{HEADER}| **Foo** | ✅ |\n| **Bar** | ✅ | ❌ |\n")
    (problem,) = parsed.problems
    assert problem.line == 5
    assert "row 'Foo' has 2 cells, the header 3" in problem.message
    assert "'ImageGen'" in problem.message
    assert [r.name for r in parsed.tables[0].rows] == ["Bar"]


def test_an_unknown_symbol_is_reported_by_row_and_column() -> None:
    parsed = parse_claims(f"### ImageGen\n\n{HEADER}| **Foo** | 🟡 | ✅ ❌ |\n")
    messages = [p.message for p in parsed.problems]
    assert any("row 'Foo', column '⚡TeaCache': '🟡' is not one of" in m for m in messages)
    assert any("column '⚡Cache-DiT': '✅ ❌'" in m for m in messages)
    assert parsed.tables[0].rows[0].cells == ()


def test_a_table_without_its_header_is_reported_not_guessed() -> None:
    parsed = parse_claims("### ImageGen\n\n| **Foo** | ✅ | ❌ |\n| **Bar** | ✅ | ✅ |\n")
    assert parsed.tables == ()
    (problem,) = parsed.problems
    assert problem.line == 3 and "no header and alignment row" in problem.message


def test_a_missing_column_leaves_the_header_short_and_rows_ragged() -> None:
    text = "### ImageGen\n\n| Model | ⚡TeaCache |\n|---|---|\n| **Foo** | ✅ | ❌ |\n"
    parsed = parse_claims(text)
    assert parsed.tables[0].rows == ()
    assert "has 3 cells, the header 2" in parsed.problems[0].message


def test_notes_and_fenced_code_under_a_table_are_not_rows() -> None:
    text = (f"### ImageGen\n\n{HEADER}| **Foo** | ✅ | ❌ |\n> Notes: a | b\n\n"
            "```\n| Model | x |\n|---|---|\n```\nplain text with a | pipe\n")  # fmt: skip
    parsed = parse_claims(text)
    assert parsed.problems == ()
    assert [len(t.rows) for t in parsed.tables] == [1]
