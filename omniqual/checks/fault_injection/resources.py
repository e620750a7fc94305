"""What a served instance kept of its faults: memory, FDs and temp files against the baseline
taken before its first case.

The baseline is one per served instance (a relaunch is a new process tree, with a baseline of
its own) and is never moved: each case is judged on the growth since it, so what every fault
keeps adds up, and a server that keeps a little of each fails once the sum passes the bound,
where case-by-case deltas would each stay inside it. A figure that could not be read (before or
after) is absent: the case is invalid, never read as no growth.
"""

import asyncio
import time
from dataclasses import dataclass

from omniqual.checks.fault_injection.judge import Verdict
from omniqual.checks.fault_injection.params import FaultInjectionParams
from omniqual.checks.soak.watch import MIB, ResourcePoint, ResourceWatch

Growth = dict[str, float | int | None]


@dataclass(frozen=True, slots=True)
class Baseline:
    """The instance's resources before its first case (``first_case``)."""

    point: ResourcePoint
    first_case: str


def growth(before: ResourcePoint, after: ResourcePoint) -> Growth:
    def grew(a: int | None, b: int | None) -> int | None:
        return None if a is None or b is None else b - a

    memory = grew(before.memory_bytes, after.memory_bytes)
    return {"memory_mib": None if memory is None else round(memory / MIB, 2),
            "fds": grew(before.open_fds, after.open_fds),
            "temp_files": grew(before.temp_files, after.temp_files)}  # fmt: skip


def beyond(grew: Growth, p: FaultInjectionParams) -> list[str]:
    """The figures past their bound (an absent figure is never past it: it is unknown)."""
    bounds = {"memory_mib": p.max_memory_growth_mib, "fds": p.max_fd_growth,
              "temp_files": p.max_temp_file_growth}  # fmt: skip
    return [name for name, bound in bounds.items() if (v := grew[name]) is not None and v > bound]


def figures(grew: Growth) -> str:
    return ", ".join(f"{k} {'+' if (v or 0) >= 0 else ''}{v}" for k, v in grew.items())


def absent(grew: Growth, watch: ResourceWatch) -> list[str]:
    """Why each figure that could not be read is missing."""
    reasons = []
    if grew["memory_mib"] is None:
        reasons.append(f"no memory figure (PSS/RSS) for the server ({watch.source})")
    if grew["fds"] is None:
        reasons.append(f"no open-FD figure for the server ({watch.source}): its FD growth is "
                       "unknown, never zero")  # fmt: skip
    if grew["temp_files"] is None:
        where = (f"a watched directory is missing or unreadable "
                 f"({', '.join(str(d) for d in watch.watch_dirs)})" if watch.watch_dirs else
                 "no directory is watched (set params.watch_dirs to where the server writes its "
                 "temporary files, or start its agent with watched directories)")  # fmt: skip
        reasons.append(f"no temp-file figure for the server: {where}")
    return reasons


async def judge_kept(watch: ResourceWatch, base: Baseline, p: FaultInjectionParams,
                     verdict: Verdict) -> Growth:  # fmt: skip
    """Wait up to ``settle_max_s`` for the growth since ``base`` to fall within the bounds."""
    deadline = time.monotonic() + p.settle_max_s
    while True:
        grew = growth(base.point, await watch.snapshot())
        over = beyond(grew, p)
        if not over or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.5)
    if over:
        verdict.failures.append(
            f"resources grew past their bounds since the baseline taken before {base.first_case} "
            f"(this server's first case) and did not come back within {p.settle_max_s:g} s: "
            f"{figures(grew)}")  # fmt: skip
    verdict.invalid += absent(grew, watch)
    return grew
