"""Whether a measuring host can have produced evidence for a row's hardware value: only facts the
fingerprint records contradict (the architecture; for a GPU row, its GPUs and their names);
unknown never does."""

import pytest

from omniqual.domain.hardware import MeasuredOn, contradiction

CPU_ROW = "cpu-x86_64-2core-avx2"
X86 = MeasuredOn("x86_64", ())
ARM = MeasuredOn("aarch64", ())
H200 = MeasuredOn("x86_64", ("NVIDIA H200", "NVIDIA H200"))
L40S = MeasuredOn("x86_64", ("NVIDIA L40S",))


@pytest.mark.parametrize(
    ("hardware", "host", "why"),
    [
        (CPU_ROW, X86, None),
        (CPU_ROW, MeasuredOn("AMD64", ()), None),
        (CPU_ROW, ARM, "measured on aarch64 with no GPU recorded, not cpu-x86_64-2core-avx2"),
        (CPU_ROW, H200, None),  # served on the CPU; an idle GPU beside it says nothing
        ("1x-h200-141gb", H200, None),
        ("1x-h200-141gb", X86, "measured on x86_64 with no GPU recorded, not 1x-h200-141gb"),
        ("1x-l4-24gb", L40S, "measured on x86_64 with 1 GPU(s) (NVIDIA L40S), not 1x-l4-24gb"),
        ("1x-l4-24gb", MeasuredOn("x86_64", ("NVIDIA L4",)), None),
        # Unknown never contradicts: no host facts, an unread value, an unknown architecture.
        (CPU_ROW, None, None),
        ("tpu-v5e", X86, None),
        (None, X86, None),
        (CPU_ROW, MeasuredOn(None, ()), None),
    ],
)  # fmt: skip
def test_contradiction(hardware: str | None, host: MeasuredOn | None, why: str | None) -> None:
    assert contradiction(hardware, host) == why


def test_encoding_round_trips_and_garbage_is_unknown() -> None:
    assert MeasuredOn.decode(H200.encode()) == H200
    assert MeasuredOn.decode("not json") is None
