"""The peer a queued cut waits behind, served alone first and judged on its own output after the
cut (``peer_truth`` compares): the abort gate's side of "other requests stay alive and correct".
The peer is sent with the same seed alone (twice, before the case's work reading) and behind
the cut; a peer without a truth makes its case invalid, one that answers other output than
alone fails it, naming the peer and the metric. Once every cut is over the same request is sent
alone again and held to that output (``next_request``)."""

from typing import TYPE_CHECKING

from omniqual.checks.abort.peer_truth import (
    PEER_SEED,
    differs,
    exact_rule,
    output_kind,
    outputs_of,
    solo_truth,
)
from omniqual.checks.load_binding import JobTrace, WireCall
from omniqual.client import ClientError
from omniqual.loadgen.workload import EndpointKind

if TYPE_CHECKING:  # the driver calls these: typing only, no import cycle at run time
    from omniqual.checks.abort.cases import AbortDriver, Case


async def record_peer(driver: "AbortDriver", case: "Case") -> None:
    """Serve the peer alone twice with the seed it is later sent with: its truth, or (no truth)
    the case is invalid, since what it answers beside the cut cannot be judged."""
    call = driver.calls.at(PEER_SEED)
    first, second = await solo_outputs(driver, call), await solo_outputs(driver, call)
    found = solo_truth("A", PEER_SEED, output_kind(driver.endpoint), first, second,
                       driver.params.tolerance)  # fmt: skip
    if isinstance(found, str):
        case.invalid.append(f"{case.id}: {found}")
        driver.peer = None
        return
    driver.peer = found


async def solo_outputs(driver: "AbortDriver", call: WireCall) -> tuple[bytes, ...]:
    """The outputs of ``call`` served to its end (a job: its content); empty: it failed."""
    try:
        if driver.endpoint is not EndpointKind.VIDEO_ASYNC:
            return outputs_of(driver.endpoint, await driver.send(call))
        trace = await driver.create_job(call)
        if trace is None:
            return ()
        await driver.follow(trace, settle_polls=1)
        return await job_content(driver, trace)
    except ClientError:
        return ()


async def job_content(driver: "AbortDriver", trace: JobTrace) -> tuple[bytes, ...]:
    """A completed job's content as its one output; empty when it did not complete."""
    if trace.terminal_states != ("completed",):
        return ()
    content = await driver.client.send_raw("GET", f"/v1/videos/{trace.job_id}/content")
    return (content.body,) if content.ok and content.body else ()


async def next_request(driver: "AbortDriver") -> tuple[str, str | None]:
    """After every cut, the peer's request sent once more alone and held to its output before
    the cases (AB-09: the next request runs with its own policy, nothing of a cut request's
    left in it). (what was seen, the failure or None); no truth recorded: not judged, the case
    that recorded it says why."""
    peer = driver.peer
    if peer is None:
        return "not judged: no solo output was recorded before the cases", None
    outputs = await solo_outputs(driver, driver.calls.at(PEER_SEED))
    exact = exact_rule([peer], driver.execution)
    problem = differs(peer, outputs, output_kind(driver.endpoint), exact=exact,
                      tolerance=driver.params.tolerance)  # fmt: skip
    if problem is None:
        return "its output before the cases", None
    return "other output than before the cases", (
        f"after the abort cases the request {peer.named} answers other than its output before "
        f"them (the next request must run with its own policy): {problem}")


def judge_peer(driver: "AbortDriver", case: "Case", outputs: tuple[bytes, ...]) -> None:
    """The peer's output beside the cut against its solo same-seed output."""
    peer = driver.peer
    if peer is None:
        return  # no truth: the case is invalid already (``record_peer``)
    exact = exact_rule([peer], driver.execution)
    problem = differs(peer, outputs, output_kind(driver.endpoint), exact=exact,
                      tolerance=driver.params.tolerance)  # fmt: skip
    if problem is not None:
        case.fail(problem)
    else:
        rule = "exact rule" if exact else "tolerance rule"
        case.observed.append(f"{peer.named}: its solo output ({rule})")
