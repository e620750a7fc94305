"""The abort gate: one room per concern. ``gate`` runs the check, ``cases`` drives each cut,
``params`` is the gate spec's ``params`` block, ``work`` measures whether cut work kept running
and judges it by the row's execution mode, ``peer_runs`` holds the peer a queued cut waits behind
to its solo same-seed output (compared by ``peer_truth``, which the fault-injection gate shares)."""

from omniqual.checks.abort.gate import AbortCheck
from omniqual.checks.abort.params import AbortParams

__all__ = ["AbortCheck", "AbortParams"]
