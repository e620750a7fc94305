"""The CPU class read from /proc/cpuinfo: the vendor and the kernel-selecting flags only."""

from omniqual.loadgen.cpu_class import cpu_class_of

SPR = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Processor
flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile avx512_vnni
processor\t: 1
vendor_id\t: GenuineIntel
flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile avx512_vnni
"""
ZEN3 = "vendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma\n"


def test_the_class_names_the_vendor_and_the_flags_that_pick_kernels() -> None:
    assert cpu_class_of(SPR, "x86_64") == "GenuineIntel x86_64 amx_tile avx512_bf16 avx512f avx2"
    assert cpu_class_of(ZEN3, "x86_64") == "AuthenticAMD x86_64 avx2"


def test_two_vendors_with_the_same_flags_are_two_classes() -> None:
    intel = "vendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx avx2 fma\n"
    assert cpu_class_of(intel, "x86_64") != cpu_class_of(ZEN3, "x86_64")


def test_a_text_without_a_vendor_is_no_class() -> None:
    assert cpu_class_of("processor\t: 0\nBogoMIPS\t: 50.00\n", "aarch64") is None
