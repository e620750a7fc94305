"""What a clean isolation run must have shown before it passes: two requests at least served
successfully and at once (a server refusing every concurrent request never did, and fails),
solo truths taken warm (a cold first request must not let a serial server look parallel), every
request reproducible alone, every pair of requests distinguishable under the rule in force; and
a crossing in one setting only (seed, prompt) is caught and named."""

from __future__ import annotations

from omniqual.checks.isolation.params import RequestVariant
from omniqual.domain.outcomes import GateOutcome
from tests.unit.checks.isolation.isolation_harness import (
    ColdSerialFakeOmni,
    CrossingFakeOmni,
    FlakyFakeOmni,
    IgnoringFakeOmni,
    RefusingFakeOmni,
    fake,
    measured,
    recorded,
    run,
    table,
)


def _pair(b: tuple[int, int]) -> tuple[RequestVariant, RequestVariant]:
    """A (seed 1, prompt 0) and B (seed, prompt) as given, alike in every other setting."""
    return (RequestVariant(label="A", seed=1, prompt=0),
            RequestVariant(label="B", seed=b[0], prompt=b[1]))  # fmt: skip


def test_a_server_refusing_every_concurrent_request_fails_as_never_serving_two() -> None:
    # The SD3 batch row behind a proxy answering 429 to any request sent while another is in
    # flight: each refusal is a clear 4xx, but nothing was ever served together.
    outcome = run(fake(RefusingFakeOmni), execution="request-batch/2+50ms")
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    assert any(r.startswith("the server never served two requests at once") and "HTTP 429" in r
               for r in outcome.reasons), outcome.reasons  # fmt: skip
    figures = measured(outcome)
    assert figures["rounds_met"] == 0 and figures["crossings"] == 0
    assert all(not r["met"] for r in recorded(outcome)["rounds"])
    assert {r["finding"] for r in table(outcome)} == {"same", "rejected"}


def test_a_cold_first_request_does_not_let_a_serial_server_meet() -> None:
    # Cold, the first solo request alone takes longer than a whole serial round: summed into
    # the solo times, it would make one request at a time look like computing at once.
    outcome = run(fake(ColdSerialFakeOmni, serializes_requests=True), execution="serial/1")
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith("requests never met in the server") for r in outcome.reasons)
    assert measured(outcome)["rounds_met"] == 0


def test_every_request_must_reproduce_alone_not_only_the_first() -> None:
    # D (seed 33) answers another output on every call; A reproduces exactly.
    outcome = run(fake(FlakyFakeOmni))
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith("request D served twice alone differs beyond the tolerance")
               for r in outcome.reasons), outcome.reasons  # fmt: skip
    assert not outcome.cases  # no together round is judged against a truth that is not one


def test_a_request_indistinguishable_from_another_is_left_out_of_the_rounds() -> None:
    # The server ignores the steps: C (A with more steps) answers A's output alone, so C
    # answered with A's output together would prove nothing.
    outcome = run(fake(IgnoringFakeOmni))
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    left_out = recorded(outcome)["indistinguishable"]
    assert list(left_out) == ["C"] and "request A" in left_out["C"]
    assert {r["request"] for r in table(outcome)} == {"A", "B", "D"}
    assert measured(outcome)["requests_together"] == 3


def test_no_two_distinguishable_requests_is_invalid() -> None:
    pair = _pair((2, 0))
    server = fake(IgnoringFakeOmni)
    assert isinstance(server, IgnoringFakeOmni)
    server.ignored = "seed"
    outcome = run(server, requests=pair)
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any("fewer than two requests are distinguishable" in r for r in outcome.reasons)
    assert not outcome.cases


def _crossing(crossed: str) -> CrossingFakeOmni:
    server = fake(CrossingFakeOmni)
    assert isinstance(server, CrossingFakeOmni)
    server.crossed = crossed
    return server


def test_a_crossing_of_the_seed_only_fails_naming_the_seed() -> None:
    pair = _pair((2, 0))
    outcome = run(_crossing("seed"), requests=pair)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    crossed = [r for r in table(outcome) if r["finding"] == "crossed"]
    assert crossed and all(r["fields"] == ["seed"] for r in crossed)
    assert {(r["request"], r["crossed_with"]) for r in crossed} <= {("A", "B"), ("B", "A")}
    assert any("got request" in r and "settings crossed in seed (" in r for r in outcome.reasons)
    assert {r["finding"] for r in table(outcome) if r["verdict"] == "failed"} == {"crossed"}


def test_a_crossing_of_the_prompt_only_fails_naming_the_prompt() -> None:
    pair = _pair((1, 1))
    outcome = run(_crossing("prompt"), requests=pair)
    assert outcome.outcome is GateOutcome.FAILED, outcome.reasons
    crossed = [r for r in table(outcome) if r["finding"] == "crossed"]
    assert crossed and all(r["fields"] == ["prompt"] for r in crossed)
    assert any("(prompt=#1) got request A's output (prompt=#0): settings crossed in prompt" in r
               or "(prompt=#0) got request B's output (prompt=#1): settings crossed in prompt"
               in r for r in outcome.reasons), outcome.reasons  # fmt: skip
    assert all("a red cube" not in r for r in outcome.reasons)  # prompts are never shown
