"""Judging one fault-injection case from what was seen (pure: no I/O).

- The faulted request: exactly one terminal error, a 5xx with an error envelope within the
  deadline (a hang: the client's own deadline, or a 5xx); a success is an error answered as
  success. Where the worker ends, a dropped connection is a terminal error too.
- Peers: each succeeded, or failed with a stated error; the result says which. Where the fault
  stays inside one request (everything but a worker's end), a peer that fails was taken down
  by another request's fault.
- Afterwards, against the row's restart policy: ``recovers`` needs /health 200 and the known-good
  request to succeed within the deadline with the bytes it had before any fault; ``exits`` needs
  the whole process tree gone within its deadline, nothing left behind (restart required). A
  server that does neither (hangs, answers garbage, keeps a dead engine up) fails.
"""

from dataclasses import dataclass, field
from typing import Literal

from omniqual.checks.fault_injection.cases import FaultCase
from omniqual.domain.fault_injection import FaultMode
from omniqual.domain.matrix import RestartPolicy

SeenKind = Literal["answer", "timeout", "dropped", "cut", "error"]


@dataclass(frozen=True, slots=True)
class Seen:
    """What one request's client saw."""

    kind: SeenKind
    elapsed_s: float
    status: int | None = None
    enveloped: bool = False  # a JSON error envelope came with a non-2xx answer
    usable: bool = False  # a 2xx that carries output
    detail: str = ""
    outputs: tuple[bytes, ...] = field(default=(), repr=False)  # the output media, when usable

    def text(self) -> str:
        if self.kind == "answer":
            what = f"HTTP {self.status}" + (" with error envelope" if self.enveloped else "")
            return f"{what} in {self.elapsed_s:.2f} s"
        return f"{self.kind} after {self.elapsed_s:.2f} s" + (f" ({self.detail})"
                                                              if self.detail else "")  # fmt: skip


@dataclass(frozen=True, slots=True)
class After:
    """What the server did after the case."""

    recovered: bool
    recovered_in_s: float | None
    same_output: bool | None  # the known-good request's bytes against the pre-fault ones
    exited: bool  # the process tree (or, without a pid, the server) is gone
    orphans: tuple[int, ...] = ()
    health: str = ""
    next_request: str = ""
    orphans_named: tuple[str, ...] = ()  # each orphan with its command line, while it lived


@dataclass(slots=True)
class Verdict:
    failures: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    restart_required: bool = False


def judge_faulted(case: FaultCase, seen: Seen, fired: bool, deadline_s: float,
                  verdict: Verdict) -> None:  # fmt: skip
    if not fired:
        verdict.invalid.append("the fault never fired: its hook was not reached")
        return
    if case.cancel:
        if seen.kind != "cut":
            verdict.invalid.append("the request was not cancelled before the fault "
                                   f"({seen.text()})")
        return
    if seen.kind == "answer" and seen.status is not None and 200 <= seen.status < 300:
        verdict.failures.append(f"the faulted request was answered as a success ({seen.text()}): "
                                "an error answered as success")  # fmt: skip
        return
    if case.mode is FaultMode.HANG and not case.sigkill and seen.kind == "timeout":
        return  # the client's deadline is the hung request's terminal error
    if seen.kind == "dropped" and case.ends_worker:
        verdict.notes.append("the faulted request's connection was closed unanswered")
        return
    if seen.kind != "answer" or seen.status is None or seen.status < 500:
        verdict.failures.append(f"the faulted request got no 5xx error: {seen.text()}")
        return
    if not seen.enveloped:
        verdict.failures.append(f"the faulted request's {seen.status} carried no error envelope")
    if seen.elapsed_s > deadline_s:
        verdict.failures.append(f"the faulted request's error came after {seen.elapsed_s:.1f} s, "
                                f"past the {deadline_s:g} s deadline")  # fmt: skip


def judge_peers(case: FaultCase, peers: list[Seen], verdict: Verdict) -> str:
    """One line on the peers; failures where they should have succeeded."""
    ok = sum(1 for p in peers if p.usable)
    failed = [p for p in peers if not p.usable]
    line = f"peers {ok}/{len(peers)} succeeded" + (
        "; failed: " + ", ".join(p.text() for p in failed) if failed else "")  # fmt: skip
    for peer in failed:
        stated = peer.kind == "answer" and peer.enveloped and (peer.status or 0) >= 400
        if peer.kind == "answer" and peer.status is not None and 200 <= peer.status < 300:
            verdict.failures.append(f"a peer answered {peer.status} without usable output")
        elif not case.ends_worker:
            verdict.failures.append(f"a peer failed ({peer.text()}) from another request's "
                                    f"{case.stage.value} fault: a request-level fault must not "
                                    "take its peers down")  # fmt: skip
        elif not stated and peer.kind not in ("dropped", "error"):
            verdict.failures.append(f"a peer failed without a stated error ({peer.text()})")
    return line


def judge_after(policy: RestartPolicy, after: After, recover_s: float, exit_s: float,
                verdict: Verdict) -> None:  # fmt: skip
    if after.recovered:
        if after.same_output is False:
            verdict.failures.append("state leaked: the known-good request after the fault gave "
                                    "other output bytes than before any fault")  # fmt: skip
        if policy is RestartPolicy.EXITS:
            verdict.notes.append("recovered although the row declares `exits`")
        return
    if after.exited:
        if after.orphans:
            named = list(after.orphans_named) or [f"pid {pid}" for pid in after.orphans]
            verdict.failures.append(f"the server exited but left {len(after.orphans)} process(es) "
                                    f"of its tree running: {', '.join(named[:5])}")  # fmt: skip
        verdict.restart_required = True
        if policy is RestartPolicy.RECOVERS:
            verdict.failures.append("the server exited after the fault; the row declares "
                                    "`recovers` (restart required)")  # fmt: skip
        else:
            verdict.notes.append("restart required: the server exited, as the row declares")
        return
    verdict.failures.append(
        f"the server neither recovered within {recover_s:g} s nor exited within {exit_s:g} s "
        f"(health: {after.health or 'no answer'}; next request: {after.next_request or 'none'})")
