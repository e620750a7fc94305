"""Which check kinds measure time or memory: under `--jobs` they run with the host to
themselves, so the list is a promise about evidence; and which of them start their own servers
beside other groups' work, a promise that none of them judges anything of a start-up."""

from omniqual.checks.registry import BUILTIN, measures, resolve, shares_start_ups

MEASURING = {"soak", "abort", "offload_sweep", "fails_fast", "fails_fast_request", "perf",
             "perf_ab", "step_ab", "cache_tiers", "fault_injection", "startup"}
SHARING_START_UPS = {"step_ab", "cache_tiers", "perf", "perf_ab"}


def test_the_kinds_that_measure_time_or_memory_say_so() -> None:
    assert {kind for kind in BUILTIN if measures(resolve(kind))} == MEASURING


def test_a_kind_that_does_not_say_measures_nothing() -> None:
    class Plain:
        kind = "plain"

    assert not measures(Plain)  # type: ignore[arg-type]


def test_the_measuring_kinds_that_share_their_start_ups_judge_none() -> None:
    """Offload-sweep reports each point's time to ready and fails-fast times a refusal that
    happens during start-up: a busy host would move both, so their start-ups stay alone."""
    assert {kind for kind in BUILTIN if shares_start_ups(resolve(kind))} == SHARING_START_UPS


def test_a_kind_shares_its_start_ups_only_when_it_says_so_and_measures() -> None:
    class Plain:
        kind = "plain"
        shares_start_ups = True

    class Measuring:
        measures = True

    assert not shares_start_ups(Plain)  # type: ignore[arg-type]
    assert not shares_start_ups(Measuring)  # type: ignore[arg-type]
