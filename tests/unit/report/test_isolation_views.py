"""The isolation crossing table from a recorded result: one row per request per round, the
crossed-with request and differing settings of a crossing, nothing for other results."""

from collections.abc import Callable
from typing import Any

from omniqual.domain.result import GateResult
from omniqual.report.isolation_views import HEADERS, crossing_rows


def _entry(request: str, round_: int, verdict: str, **more: Any) -> dict[str, Any]:
    return {"request": request, "round": round_, "pattern": "burst", "order": "A-B",
            "via": "images-generations", "verdict": verdict, "finding": more.pop("finding", "same"),
            "crossed_with": None, "fields": [], "reason": "", "met": True, **more}  # fmt: skip


def test_rows_name_the_crossing_and_the_settings(make_result: Callable[..., GateResult]) -> None:
    table = [
        _entry("A", 1, "passed"),
        _entry("B", 1, "failed", finding="crossed", crossed_with="A", fields=["steps", "seed"],
               reason="request B (steps=4) got request A's output (steps=2)"),
    ]  # fmt: skip
    result = make_result(gate_id="isolation", gate_kind="isolation",
                         effective={"isolation": {"table": table}})  # fmt: skip
    rows = crossing_rows(result)
    assert [r.cells for r in rows] == [
        ("A", "1", "burst", "passed", "—", "—"),
        ("B", "1", "burst", "failed", "A", "steps, seed"),
    ]
    assert len(HEADERS) == len(rows[0].cells)
    assert rows[1].reason.startswith("request B (steps=4) got request A's output")
    assert [r.request for r in crossing_rows(result, failed_only=True)] == ["B"]


def test_other_results_and_malformed_records_give_no_rows(
    make_result: Callable[..., GateResult],
) -> None:
    assert crossing_rows(make_result()) == ()
    odd = make_result(effective={"isolation": {"table": ["not a row", {"round": "x"}]}})
    (row,) = crossing_rows(odd)
    assert row.request == "?" and row.round == 0 and row.crossed_with == "—"


def test_blocks_show_how_each_round_met_and_only_the_crossings(
    make_result: Callable[..., GateResult],
) -> None:
    from omniqual.report.isolation_views import isolation_blocks
    from omniqual.report.links import EvidenceLinks

    rounds = [{"pattern": "burst", "met": True, "how": "/metrics showed 4 requests at once"},
              {"pattern": "staggered", "met": False, "how": ""}]  # fmt: skip
    table = [_entry("A", 1, "passed"),
             _entry("C", 1, "failed", crossed_with="A", fields=["steps"], reason="crossed")]
    result = make_result(gate_id="isolation", gate_kind="isolation",
                         effective={"isolation": {"table": table, "rounds": rounds}})  # fmt: skip
    met, crossings = isolation_blocks([result], {}, EvidenceLinks())
    assert met.rows == (("1", "burst", "yes", "/metrics showed 4 requests at once"),
                        ("2", "staggered", "no", "never met"))  # fmt: skip
    assert [row[0] for row in crossings.rows] == ["C"] and crossings.rows[0][-1] == "crossed"
    clean = make_result(gate_id="isolation", gate_kind="isolation",
                        effective={"isolation": {"table": table[:1], "rounds": rounds[:1]}})
    _, none = isolation_blocks([clean], {}, EvidenceLinks())
    assert none.rows == () and "own output" in none.note
