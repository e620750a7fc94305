"""Which rows ``omniqual recommend`` may name: only rows the compiled matrix calls `validated`
(or `limited`, saying so), on the results of one deployment that the rule table's derivation
rested on, with the Definition of Done's recommended-deployment gates among them, no failed
correctness gate on that deployment, and the objective measured on that deployment."""

from omniqual.compile.recommend import Objective, Recommendation, recommend_matrix
from omniqual.domain.matrix import LimitedSpec, LoadedMatrix, RowSpec
from omniqual.domain.outcomes import CellState
from omniqual.domain.outcomes import GateOutcome as O
from omniqual.domain.result import GateResult
from tests.unit.compile.deployments import (
    BASE,
    BASELINE_GATES,
    CANDIDATE_GATES,
    GATES,
    URL_1,
    URL_2,
    A,
    B,
    Recorder,
    key,
    matrix,
)

LATENCY = Objective.LATENCY
PARENT: tuple[dict[str, str], RowSpec] = ({}, RowSpec(requires=("reference-parity",)))
"""The baseline row a candidate's parity is measured against: its own correctness passed."""


def chosen(loaded: LoadedMatrix, results: list[GateResult],
           objective: Objective = LATENCY) -> Recommendation:  # fmt: skip
    (made,) = recommend_matrix(loaded, GATES, [(r, "") for r in results], objectives=(objective,))
    return made


def why(made: Recommendation) -> dict[str, str]:
    return {n.row: "; ".join(n.why) for n in made.not_eligible}


def test_a_row_the_compiled_matrix_calls_not_tested_is_never_recommended() -> None:
    invalid_perf, unrun = key(quantization="a"), key(quantization="b")
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=BASELINE_GATES)),
        ({"quantization": "b"}, RowSpec(requires=(*BASELINE_GATES, "offload-sweep"))),
    )
    record = Recorder()
    # perf invalid: the soak's latency would stand in for it, were the row's state not read.
    for gate in ("reference-parity", "isolation", "abort", "fault-injection"):
        record(invalid_perf, gate)
    record(invalid_perf, "perf", O.INVALID, latency_mean=0.1)
    record(invalid_perf, "soak", below__latency_p50_s=0.1)
    # Every recommended-deployment gate passed, but a gate the row requires never ran.
    record.passes(unrun, BASELINE_GATES, latency=0.2)
    made = chosen(loaded, record.results)
    assert made.best is None and made.ranked == ()
    reasons = why(made)
    assert reasons[invalid_perf].startswith("the compiled matrix has it not tested: ")
    assert "perf: no usable result" in reasons[invalid_perf]
    assert reasons[unrun].startswith("the compiled matrix has it not tested: ")
    assert "offload-sweep: no usable result" in reasons[unrun]


def test_passes_on_different_deployments_do_not_combine_into_eligibility() -> None:
    launched, served = key(quantization="a"), key(quantization="b")
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=BASELINE_GATES)),
        ({"quantization": "b"}, RowSpec(requires=BASELINE_GATES)),
    )
    record = Recorder()
    # Correctness and cleanup on one serve config, the benchmark and the soak on another.
    record.passes(launched, ("reference-parity", "isolation", "abort", "fault-injection"), at=A)
    record.passes(launched, ("perf", "soak"), at=B, latency=0.1)
    # A row given by URL: the benchmark measured through another server.
    record.passes(served, ("reference-parity", "isolation", "abort", "fault-injection", "soak"),
                  at=URL_1)  # fmt: skip
    record.passes(served, ("perf",), at=URL_2, latency=0.1)
    made = chosen(loaded, record.results)
    assert made.best is None
    for row in (launched, served):
        # The rule table's linked-perf rule sees it first: perf passed beside no correctness
        # pass of its own deployment.
        assert why(made)[row].startswith(
            "the compiled matrix has it not tested: perf: passed, "
            "but a measured pass counts only beside"
        )
        assert "reference-parity passed on another deployment" in why(made)[row]


def test_a_failed_reference_parity_beside_a_passed_parity_makes_the_row_ineligible() -> None:
    candidate = key(quantization="fp8")
    loaded = matrix(
        PARENT, ({"quantization": "fp8"}, RowSpec(requires=CANDIDATE_GATES, parent_row=dict(BASE)))
    )
    record = Recorder()
    record(key(), "reference-parity")
    record.passes(candidate, CANDIDATE_GATES)
    failed = record(candidate, "reference-parity", O.FAILED)
    made = chosen(loaded, record.results)
    assert made.best is None
    assert why(made)[candidate] == (
        f"reference-parity failed on this deployment (result {failed.result_id})"
    )


def test_a_stale_result_is_not_used() -> None:
    old_version, old_spec = key(quantization="a"), key(quantization="b")
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=BASELINE_GATES)),
        ({"quantization": "b"}, RowSpec(requires=BASELINE_GATES)),
    )
    record = Recorder()
    record.passes(old_version, ("reference-parity", "isolation", "abort", "fault-injection",
                                "perf"))  # fmt: skip
    record(old_version, "soak", version=0)
    record.passes(old_spec, ("reference-parity", "isolation", "abort", "fault-injection",
                             "soak"))  # fmt: skip
    record(old_spec, "perf", spec="6" * 64, latency_mean=0.1)
    made = chosen(loaded, record.results)
    assert made.best is None
    assert "soak: no usable result" in why(made)[old_version]
    assert "ignored as stale" in why(made)[old_version]
    assert "perf: no usable result" in why(made)[old_spec]
    assert "ignored as stale" in why(made)[old_spec]


def test_a_limited_row_is_recommended_only_saying_it_is_limited_with_its_limitation() -> None:
    deviating, declared = key(quantization="a"), key(quantization="b")
    bound = "1024x1024 only; other sizes are rejected with HTTP 400"
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=(*BASELINE_GATES, "api-contract"))),
        ({"quantization": "b"}, RowSpec(
            requires=(*BASELINE_GATES, "offload-sweep"),
            limited=LimitedSpec(limitation=bound, requires=BASELINE_GATES,
                                rejection=("api-contract",)))),
    )  # fmt: skip
    record = Recorder()
    record.passes(deviating, BASELINE_GATES, latency=0.2)
    record(deviating, "api-contract", limitations=("n=0 answers 422",))
    record.passes(declared, (*BASELINE_GATES, "api-contract"), latency=0.1)
    made = chosen(loaded, record.results)
    assert [(c.row, c.state, c.limitation) for c in made.ranked] == [
        (declared, CellState.LIMITED, bound),
        (deviating, CellState.LIMITED, "n=0 answers 422"),
    ]


def test_a_row_without_the_recommended_deployment_gates_is_not_eligible() -> None:
    unisolated, candidate = key(quantization="a"), key(quantization="fp8")
    loaded = matrix(
        PARENT,
        ({"quantization": "a"}, RowSpec(requires=("reference-parity", "abort", "perf", "soak"))),
        # A candidate proves its correctness with parity: reference-parity does not stand in.
        ({"quantization": "fp8"}, RowSpec(requires=BASELINE_GATES, parent_row=dict(BASE))),
    )  # fmt: skip
    record = Recorder()
    record(key(), "reference-parity")
    record.passes(unisolated, ("reference-parity", "abort", "perf", "soak"), latency=0.1)
    record.passes(candidate, BASELINE_GATES, latency=0.1)
    made = chosen(loaded, record.results)
    assert made.best is None
    assert why(made) == {
        key(): "DoD gates for a recommended deployment missing: isolation, abort, "
        "fault-injection, perf, soak",
        unisolated: "DoD gates for a recommended deployment missing: isolation, fault-injection",
        candidate: "DoD gates for a recommended deployment missing: parity",
    }


def test_the_objective_figure_comes_from_the_recommended_deployment() -> None:
    measured_elsewhere, steady = key(quantization="a"), key(quantization="b")
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=BASELINE_GATES)),
        ({"quantization": "b"}, RowSpec(requires=BASELINE_GATES)),
    )
    record = Recorder()
    # A faster benchmark of this row, measured through another server: not this deployment's.
    record(measured_elsewhere, "perf-url", at=URL_1, latency_mean=0.01)
    record.passes(measured_elsewhere, BASELINE_GATES, at=A, latency=0.5)
    record.passes(steady, BASELINE_GATES, at=A, latency=0.3)
    made = chosen(loaded, record.results)
    assert made.best is not None and made.best.row == steady
    figures = {c.row: (c.figure.value, c.figure.source) for c in made.ranked}
    assert figures == {steady: (0.3, "perf:latency_mean"),
                       measured_elsewhere: (0.5, "perf:latency_mean")}  # fmt: skip


def test_a_memory_figure_is_read_only_on_the_same_deployment() -> None:
    elsewhere, here = key(quantization="a"), key(quantization="b")
    loaded = matrix(
        ({"quantization": "a"}, RowSpec(requires=BASELINE_GATES)),
        ({"quantization": "b"}, RowSpec(requires=BASELINE_GATES)),
    )
    record = Recorder()
    mib = 1024.0 * 1024.0
    for row, at in ((elsewhere, B), (here, A)):
        record.passes(row, ("reference-parity", "isolation", "abort", "fault-injection", "soak"))
        record(row, "perf", latency_mean=0.2)  # no memory figure
        # A passing offload sweep the row does not require: its figure counts on this
        # deployment only.
        record(row, "offload-sweep", at=at, resident__peak_pss_steady=300 * mib)
    made = chosen(loaded, record.results, Objective.MEMORY)
    assert made.best is not None and made.best.row == here
    assert (made.best.figure.value, made.best.figure.source) == (
        300.0,
        "offload-sweep:resident.peak_pss_steady",
    )
    assert why(made) == {
        elsewhere: "no passing measurement of memory on this deployment "
        "(perf:peak_memory_mb_max, offload-sweep:resident.peak_pss_steady)"
    }
