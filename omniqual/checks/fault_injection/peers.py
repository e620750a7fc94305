"""The fault-injection gate's peers held to their own output: each peer is sent with a fixed seed
(peer i: ``PEER_SEED + i``), served alone twice before any fault (its truth, and whether the row
reproduces it exactly: ``omniqual.checks.abort.peer_truth``), and every peer that answered
beside a faulted or cancelled request must answer that truth, not merely succeed. A peer that
failed is judged by ``judge_peers`` (a stated error where the fault ends a worker); this module
judges the ones that answered."""

from collections.abc import Sequence
from dataclasses import dataclass

from omniqual.checks.abort.peer_truth import (
    PEER_SEED,
    PeerTruth,
    differs,
    exact_rule,
    output_kind,
    solo_truth,
)
from omniqual.checks.fault_injection.driver import CaseDriver
from omniqual.checks.fault_injection.jobs import JobSeen
from omniqual.checks.fault_injection.judge import Seen, Verdict
from omniqual.checks.isolation.matching import Kind
from omniqual.compare import ParityTolerance


@dataclass(frozen=True, slots=True)
class PeerTruths:
    truths: tuple[PeerTruth, ...]
    exact: bool
    """Held exactly (every peer reproduced itself exactly alone, on a row that never batches)."""
    kind: Kind
    tolerance: ParityTolerance

    @property
    def rule(self) -> str:
        return "exact rule" if self.exact else "tolerance rule"


def label(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"P{index}"


async def record_truths(driver: CaseDriver, execution: str | None,
                        tolerance: ParityTolerance) -> PeerTruths | str:  # fmt: skip
    """Every peer served alone twice with its seed, before any fault: their truths, or why a
    peer has none (the gate is then invalid: its peers could not be judged)."""
    kind = output_kind(driver.kind)
    truths: list[PeerTruth] = []
    for index in range(driver.params.peers):
        call = driver.peer(index)
        first = await driver.solo_outputs(call)
        second = await driver.solo_outputs(call)
        found = solo_truth(label(index), PEER_SEED + index, kind, first, second, tolerance)
        if isinstance(found, str):
            return found
        truths.append(found)
    return PeerTruths(tuple(truths), exact_rule(truths, execution), kind, tolerance)


def answered(peers: Sequence[Seen | JobSeen]) -> list[tuple[bytes, ...] | None]:
    """Per peer, its outputs where it answered with output (None: it failed, judged elsewhere)."""
    return [p.outputs if p.outputs else None for p in peers]


def judge_peer_outputs(truths: PeerTruths | None, outputs: Sequence[tuple[bytes, ...] | None],
                       verdict: Verdict, beside: str) -> str:  # fmt: skip
    """Each answered peer against its solo same-seed output; one line for the result. ``beside``
    names what the peers ran beside (the fault, the cancelled request)."""
    if truths is None:
        return ""
    pairs = [(t, o) for t, o in zip(truths.truths, outputs, strict=False) if o is not None]
    if not pairs:
        return "no peer answered: no output to compare"
    wrong = 0
    for truth, out in pairs:
        problem = differs(truth, out, truths.kind, exact=truths.exact, tolerance=truths.tolerance)
        if problem is not None:
            wrong += 1
            verdict.failures.append(f"{problem}, answered beside {beside}: a peer must give "
                                    "what it gives alone")  # fmt: skip
    return f"{len(pairs) - wrong}/{len(pairs)} answered their solo output ({truths.rule})"
