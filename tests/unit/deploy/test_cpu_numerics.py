"""The CPU's numerics: flags read from cpuinfo, caps from the environment, bf16 classified from
a measured ratio (or, without one, from the flags and caps)."""

from omniqual.deploy.cpu_numerics import caps_in_force, classify, cpu_flags
from omniqual.domain.recipe import isa_caps

EPYC_AVX2 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx f16c fma avx2 bmi2 sha_ni\n"
SAPPHIRE = "flags\t\t: avx avx2 fma avx512f avx512bw avx512_bf16 amx_tile amx_bf16\n"
GRAVITON = "Features\t: fp asimd evtstrm sve bf16 i8mm\n"


def test_flags_are_the_numeric_ones_of_the_first_cpu_in_a_fixed_order() -> None:
    assert cpu_flags(EPYC_AVX2) == ("avx", "avx2", "fma", "f16c")
    assert cpu_flags(SAPPHIRE) == (
        "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_bf16", "amx_tile", "amx_bf16",
    )  # fmt: skip
    assert cpu_flags(GRAVITON) == ("asimd", "sve", "bf16", "i8mm")
    assert cpu_flags("model name : something\n") == ()


def test_caps_are_read_from_the_environment() -> None:
    env = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "", "PATH": "/bin"}
    assert caps_in_force(env) == {"ATEN_CPU_CAPABILITY": "avx2"}


def test_a_measured_ratio_decides_over_the_flags() -> None:
    assert classify(23.9, cpu_flags(EPYC_AVX2), {}) == "emulated"
    assert classify(0.6, cpu_flags(SAPPHIRE), {}) == "native"
    # AMX on the flags, but capped to AVX2: the measurement shows the emulation.
    assert classify(11.0, cpu_flags(SAPPHIRE), {"ATEN_CPU_CAPABILITY": "avx2"}) == "emulated"


def test_without_a_measurement_the_flags_and_caps_decide() -> None:
    assert classify(None, cpu_flags(EPYC_AVX2), {}) == "emulated"
    assert classify(None, cpu_flags(SAPPHIRE), {}) == "native"
    assert classify(None, cpu_flags(SAPPHIRE), {"ONEDNN_MAX_CPU_ISA": "AVX2"}) == "emulated"
    assert classify(None, (), {}) == "unknown"


def test_a_cpu_row_of_an_isa_class_is_served_capped_to_it() -> None:
    assert isa_caps("cpu-x86_64-2core-avx2") == {
        "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
    }  # fmt: skip
    assert isa_caps("cpu-x86_64-2core") == {}
    assert isa_caps("1x-h200-141gb") == {}
    assert isa_caps(None) == {}
