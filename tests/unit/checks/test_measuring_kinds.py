"""Which check kinds measure time or memory: under `--jobs` they run with the host to
themselves, so the list is a promise about evidence."""

from omniqual.checks.registry import BUILTIN, measures, resolve

MEASURING = {"soak", "abort", "offload_sweep", "fails_fast", "fails_fast_request", "perf",
             "step_ab", "cache_tiers", "fault_injection"}


def test_the_kinds_that_measure_time_or_memory_say_so() -> None:
    assert {kind for kind in BUILTIN if measures(resolve(kind))} == MEASURING


def test_a_kind_that_does_not_say_measures_nothing() -> None:
    class Plain:
        kind = "plain"

    assert not measures(Plain)  # type: ignore[arg-type]
