"""Recommendation: only rows whose evidence passed correctness, isolation, abort and soak are
eligible; the best by the objective wins; the least-memory eligible row is named on its own."""

from datetime import UTC, datetime, timedelta

from omniqual.compile.recommend import GateFact, Objective, RowFacts, recommend
from omniqual.domain.outcomes import GateOutcome

T0 = datetime(2026, 1, 1, tzinfo=UTC)
P, F = GateOutcome.PASSED, GateOutcome.FAILED
KIND = {"perf": "perf", "soak": "soak", "abort": "abort", "isolation": "isolation",
        "reference-parity": "reference_parity", "parity": "candidate_parity"}  # fmt: skip


def fact(gate: str, outcome: GateOutcome = P, **measured: float) -> GateFact:
    return GateFact(gate, KIND[gate], outcome, f"{gate}-id", "run", T0 + timedelta(minutes=1),
                    measured, link=f"runs/x#{gate}")  # fmt: skip


def row(name: str, *facts: GateFact, requires: tuple[str, ...] = ()) -> RowFacts:
    return RowFacts(name, f"recipe-{name}", requires, {f.gate_id: f for f in facts})


def full(name: str, latency: float, qps: float, mib: float, correctness: str = "parity",
         ) -> RowFacts:  # fmt: skip
    return row(name, fact(correctness), fact("abort"), fact("soak"), fact("isolation"),
               fact("perf", latency_mean=latency, throughput_qps=qps, peak_memory_mb_max=mib))


ROWS = [
    full("fast", 0.10, 9.0, 900.0, "reference-parity"),
    full("lean", 0.30, 3.0, 200.0),
    full("middle", 0.20, 5.0, 500.0),
    row("wrong", fact("parity", F), fact("abort"), fact("soak"),
        fact("perf", latency_mean=0.01, throughput_qps=99.0)),
    row("unsoaked", fact("parity"), fact("abort"), fact("perf", latency_mean=0.05)),
    row("crossed", fact("parity"), fact("abort"), fact("soak"), fact("isolation", F),
        fact("perf", latency_mean=0.05)),
]


def test_latency_picks_the_lowest_mean_among_eligible_rows() -> None:
    chosen = recommend(ROWS, Objective.LATENCY)
    assert chosen.best is not None and chosen.best.row == "fast"
    assert chosen.best.figure.source == "perf:latency_mean"
    assert [c.row for c in chosen.ranked] == ["fast", "middle", "lean"]
    assert "runs/x#reference-parity" in chosen.best.evidence


def test_throughput_picks_the_highest() -> None:
    chosen = recommend(ROWS, Objective.THROUGHPUT)
    assert chosen.best is not None and chosen.best.row == "fast"


def test_the_most_memory_constrained_row_is_named_on_its_own() -> None:
    chosen = recommend(ROWS, Objective.LATENCY)
    assert chosen.memory_constrained is not None and chosen.memory_constrained.row == "lean"
    assert recommend(ROWS, Objective.MEMORY).best.row == "lean"  # type: ignore[union-attr]


def test_rows_without_the_evidence_are_listed_with_why() -> None:
    why = {n.row: n.why for n in recommend(ROWS, Objective.LATENCY).not_eligible}
    assert set(why) == {"wrong", "unsoaked", "crossed"}
    assert why["wrong"] == ("correctness: parity failed",)  # faster, but wrong: never chosen
    assert why["unsoaked"] == ("soak: no result of soak",)
    assert why["crossed"] == ("isolation: isolation failed",)


def test_a_required_gate_without_a_result_blocks_and_soak_figures_stand_in() -> None:
    soaked = row("soak-only", fact("parity"), fact("abort"), fact("soak", saturation_rps=2.5),
                 requires=("isolation",))  # fmt: skip
    chosen = recommend([soaked], Objective.THROUGHPUT)
    assert chosen.best is None
    assert chosen.not_eligible[0].why == ("isolation: no result of isolation",)
    free = row("soak-only", fact("parity"), fact("abort"), fact("soak", saturation_rps=2.5))
    best = recommend([free], Objective.THROUGHPUT).best
    assert best is not None and best.figure.source == "soak:saturation_rps"
