"""The isolation gate against the in-process fake: a clean fake passes (parallel, batching and
async video), and each fault it exists for makes it fail naming what crossed: outputs swapped
inside a batch, a batch computed with its head's settings, n outputs reordered, an async job
served another job's content; a server that never lets two requests meet is invalid."""

from __future__ import annotations

from omniqual.checks.isolation.params import RequestVariant
from omniqual.domain.outcomes import GateOutcome
from tests.fakes.fake_batching import BatchingFakeOmni
from tests.unit.checks.isolation.isolation_harness import fake, recorded, run, table


def test_clean_parallel_fake_passes_with_the_meeting_proven() -> None:
    server = fake()
    outcome = run(server)
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert len(outcome.cases) == 4 * 4  # 4 requests x (2 patterns x 2 orders)
    assert all(c.outcome is GateOutcome.PASSED for c in outcome.cases)
    measured = {m.name: m for m in outcome.measurements}
    assert measured["max_in_server"].value >= 2 and measured["max_in_server"].unit == "requests"
    assert measured["rounds_met"].value == 4 and measured["crossings"].value == 0
    assert outcome.effective["rule"] == "exact"  # the fake answers a request alone the same twice
    sent = recorded(outcome)["requests"]
    assert sent["C"]["steps"] == "4" and sent["D"]["size"] == "32x32" and sent["D"]["n"] == "2"


def test_clean_batching_fake_passes_and_batches_compatible_requests() -> None:
    server = fake(BatchingFakeOmni)
    outcome = run(server, execution="request-batch/2+50ms")
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert outcome.effective["rule"] == "tolerance"  # batched kernels may reorder reductions
    rounds = recorded(outcome)["rounds"]
    assert any("finished within half a solo service time" in r["how"] for r in rounds)
    assert server.state.executions < server.state.completed  # some executions held two


def test_outputs_swapped_inside_a_batch_fail_naming_both_requests() -> None:
    outcome = run(fake(BatchingFakeOmni, swaps_batched_outputs=True),
                  execution="request-batch/2+50ms")  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    crossed = [r for r in table(outcome) if r["finding"] == "crossed"]
    assert {(r["request"], r["crossed_with"]) for r in crossed} >= {("A", "B"), ("B", "A")}
    assert any("request A (" in r and "got request B's output" in r and "crossed in seed" in r
               for r in outcome.reasons)  # fmt: skip
    assert any(a.name.endswith("-together.png") for a in outcome.artifacts)
    assert any(a.name.endswith("-alone.png") for a in outcome.artifacts)


def test_a_batch_computed_with_its_heads_settings_fails_naming_the_settings() -> None:
    outcome = run(fake(BatchingFakeOmni, batch_first_settings=True), orders=3,
                  execution="request-batch/2+50ms")  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    rows = table(outcome)
    # Order B-C-D-A batches B with C: C (A with more steps) is computed with B's steps, which
    # are A's, so it answers A's output.
    assert any(r["request"] == "C" and r["crossed_with"] == "A" and r["fields"] == ["steps"]
               for r in rows)  # fmt: skip
    assert any("request C (steps=4) got request A's output (steps=2)" in r
               for r in outcome.reasons)  # fmt: skip
    # D (32x32, n=2) batched behind C is computed at C's size: the size is named.
    assert any(r["request"] == "D" and r["finding"] in {"size", "count"} for r in rows)
    assert any("32x32" in r and "64x64" in r for r in outcome.reasons)


def test_n_outputs_reordered_inside_a_batch_fail_as_a_reorder() -> None:
    pair = (RequestVariant(label="A", seed=1, prompt=0, size="32x32", steps=2, n=2),
            RequestVariant(label="B", seed=2, prompt=1, size="32x32", steps=2, n=2))  # fmt: skip
    outcome = run(fake(BatchingFakeOmni, reorders_batched_outputs=True), requests=pair,
                  execution="request-batch/2+50ms")  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    assert {r["finding"] for r in table(outcome) if r["verdict"] == "failed"} == {"reordered"}
    assert any("output 0 is its alone output 1" in r for r in outcome.reasons)


def test_async_job_served_another_jobs_content_fails() -> None:
    outcome = run(fake(async_content_crossed=True), model="wan-t2v-tiny", api_mode="videos-async",
                  patterns=("burst",))  # fmt: skip
    assert outcome.outcome is GateOutcome.FAILED
    crossed = [r for r in table(outcome) if r["finding"] == "crossed"]
    assert crossed and all(r["crossed_with"] not in (None, r["request"]) for r in crossed)


def test_clean_async_video_passes_with_mixed_sync_and_async() -> None:
    outcome = run(fake(), model="wan-t2v-tiny", api_mode="videos-async", orders=1,
                  patterns=("burst", "mixed"))  # fmt: skip
    assert outcome.outcome is GateOutcome.PASSED, outcome.reasons
    assert {r["via"] for r in table(outcome)} == {"videos-async", "videos-sync"}


def test_a_server_that_never_lets_requests_meet_is_invalid() -> None:
    outcome = run(fake(BatchingFakeOmni, serializes_requests=True), execution="serial/1")
    assert outcome.outcome is GateOutcome.INVALID, outcome.reasons
    assert any(r.startswith("requests never met in the server") for r in outcome.reasons)
    assert all(c.outcome is GateOutcome.PASSED for c in outcome.cases)  # outputs were right
