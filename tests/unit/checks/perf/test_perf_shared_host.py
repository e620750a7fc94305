"""A host shared with other processes during the repetitions is no host to judge a server on:
idle servers of other launches beside the measured one slowed it by a fifth here while the
reference workload and steal read as when its baseline was set. The CPU time that neither the
server's tree nor the measuring process took is counted over each launch's repetitions."""

from __future__ import annotations

import asyncio

import pytest

from omniqual.checks.perf.host import SHARED, HostReadings, host_reason
from omniqual.checks.perf.params import PerfParams
from omniqual.loadgen.host_speed import CpuTimes

PARAMS = PerfParams()


def readings(server_s: float, others_s: float, *, tree: bool = True) -> HostReadings:
    """One launch's window of 10 host CPU seconds (two cores, five seconds): the server's tree
    takes ``server_s``, this process 0.5, and other processes ``others_s``."""
    times = iter((CpuTimes(total=0.0, steal=0.0, busy=0.0),
                  CpuTimes(total=10.0, steal=0.0, busy=server_s + 0.5 + others_s)))
    trees, owns = iter((0.0, server_s)), iter((0.0, 0.5))
    host = HostReadings(probe=lambda: 0.010, cpu_times=lambda: next(times), settle_s=0.0,
                        server_pid=4242, tree_cpu=lambda _pid: next(trees) if tree else None,
                        own_cpu=lambda: next(owns))  # fmt: skip
    asyncio.run(host.read([]))  # opens the window: the first reading
    host.readings.append(0.010)  # the reading after the repetitions
    return host


def test_other_processes_taking_cpu_time_make_the_host_shared() -> None:
    speed = readings(server_s=6.0, others_s=2.0).finish()
    assert speed is not None and speed.others_fraction == pytest.approx(0.2)
    reason = host_reason(speed, None, PARAMS)
    assert reason is not None and reason.startswith(SHARED) and "20.0%" in reason


def test_a_host_to_the_server_alone_is_not_shared() -> None:
    speed = readings(server_s=6.0, others_s=0.2).finish()
    assert speed is not None and speed.others_fraction == pytest.approx(0.02)
    assert host_reason(speed, None, PARAMS) is None


def test_without_the_servers_tree_nothing_is_claimed_either_way() -> None:
    speed = readings(server_s=6.0, others_s=2.0, tree=False).finish()
    assert speed is not None and speed.others_fraction is None
    assert host_reason(speed, None, PARAMS) is None
